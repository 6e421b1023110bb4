"""Cross-generation projection accuracy (H100 -> H200, H200 -> B200, H200 -> B300 and back),
dense and MoE, on NVIDIA AIConfigurator's measured sample (both shipped curve CSVs).

For every deployment (engine, model, precision, TP, attention DP / expert parallel layout)
measured on two GPUs, the serving model (planner.engine) is calibrated on every workload measured
on the source GPU, moved to the target GPU's datasheet (with_spec: the same efficiencies, the
target's bandwidth, FLOPS and memory) and read at each measured target level. MAPE of output
tok/s, TTFT and TPOT per model, engine and direction, beside two baselines:
  same per-GPU  - the source's numbers at the same concurrency, as they are;
  bandwidth     - output tok/s x the bandwidth ratio, TPOT and TTFT / it.
Models in HOLDOUT were set aside while the MoE physics was written and are reported apart.
Run: `python bench/bench_generations.py [--json out.json]`.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hardware.gpus import gpu_catalog  # noqa: E402
from measurements.demo.runs import DATA_DIR  # noqa: E402
from measurements.importers import import_path  # noqa: E402
from measurements.run_file import Provenance  # noqa: E402
from planner.curves.load import CurveKey, LoadCurve, curve_from_run  # noqa: E402
from planner.curves.names import canonical_model  # noqa: E402
from planner.engine.model import (  # noqa: E402
    CONCURRENCY,
    EngineModel,
    Query,
    deployment_spec,
    engine_model,
)
from planner.engine.transfer import GENERATION_EXPONENTS, project_model  # noqa: E402
from planner.physics.projection import project_curve  # noqa: E402

FILES = ("silicon_sample_h100_h200.csv", "silicon_sample_2026_blackwell_moe.csv")
HOLDOUT = ("deepseek-v3",)
METRICS = ("output_tok_s", "ttft_ms", "tpot_ms")


@dataclass(frozen=True, slots=True)
class Error:
    """Absolute percentage errors of one metric, per compared level."""

    model: list[float]
    same: list[float]
    bandwidth: list[float]
    scaling: list[float]  # planner.physics.projection's per-point roofline-share scaling


def load_curves() -> list[LoadCurve]:
    """Every concurrency curve of both samples, through the real curve-CSV importer."""
    out = []
    for name in FILES:
        path = DATA_DIR / name
        if not path.exists():
            path = ROOT.parent / "shared" / "datasets" / name
        for run in import_path(path, provenance=Provenance.PUBLISHED).runs:
            curve = curve_from_run(run)
            if curve is not None and curve.points and curve.key.isl and curve.key.osl:
                out.append(curve)
    return out


def deployment(key: CurveKey) -> tuple[object, ...]:
    """What must match across GPUs: engine, model, precision, TP and the parallel layout."""
    ep = key.ep if key.ep and key.ep > 1 else None  # EP1 stated or not: no expert parallelism
    return (key.engine, canonical_model(key.model), key.precision, key.tp, key.attention_dp, ep)


def pairs(curves: Sequence[LoadCurve]) -> Iterator[tuple[str, list[LoadCurve], list[LoadCurve]]]:
    """(direction, source curves, target curves) for every deployment measured on two GPUs."""
    by: dict[tuple[object, ...], dict[str, list[LoadCurve]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for curve in curves:
        if curve.label and "(repeat" in curve.label:
            continue
        by[deployment(curve.key)][curve.key.gpu or "?"].append(curve)
    order = [spec.gpu for spec in gpu_catalog().specs]
    for gpus in by.values():
        names = sorted(gpus, key=order.index)
        for i, source in enumerate(names):
            for target in names[i + 1 :]:
                yield f"{source} -> {target}", gpus[source], gpus[target]
                yield f"{target} -> {source}", gpus[target], gpus[source]


def compare(
    source: list[LoadCurve], target: list[LoadCurve], exponents: tuple[float, float] | None = None
) -> dict[str, Error] | str:
    """Errors of the projected serving model and the baselines at every target level
    (`exponents`: the bandwidth and FLOPS transfer exponents; default: the product's)."""
    model = _calibrated(tuple(source))
    if isinstance(model, str):
        return model
    spec = deployment_spec(target[0])
    if isinstance(spec, str):
        return spec
    moved = project_model(model, spec, *(exponents or GENERATION_EXPONENTS))
    ratio = spec.mem_bw_bytes_s / model.spec.mem_bw_bytes_s
    errors = {m: Error([], [], [], []) for m in METRICS}
    for curve in target:
        same_workload = [
            s for s in source if (s.key.isl, s.key.osl) == (curve.key.isl, curve.key.osl)
        ]
        _score(moved, curve, same_workload, ratio, errors)
    return errors


_CALIBRATED: dict[tuple[LoadCurve, ...], EngineModel | str] = {}


def _calibrated(source: tuple[LoadCurve, ...]) -> EngineModel | str:
    if source not in _CALIBRATED:
        _CALIBRATED[source] = engine_model(list(source))
    return _CALIBRATED[source]


def _score(
    moved: EngineModel, curve: LoadCurve, sources: list[LoadCurve], ratio: float,
    errors: dict[str, Error],
) -> None:  # fmt: skip
    loads = tuple(p.concurrency for p in curve.points)
    found = moved.predict(Query(CONCURRENCY, loads, curve.key.isl or 0, curve.key.osl or 0))
    at_source = {p.concurrency: p for s in sources for p in s.points}
    scaled_points = {}
    for s in sources:
        projected = project_curve(s, curve.key.gpu or "")
        if not isinstance(projected, str):
            scaled_points.update({p.concurrency: p for p in projected.points})
    for i, point in enumerate(curve.points):
        measured = {"output_tok_s": point.output_tok_s, "ttft_ms": point.ttft_ms,
                    "tpot_ms": point.tpot_ms}  # fmt: skip
        predicted = {"output_tok_s": found.output_tok_s.mean[i], "ttft_ms": found.ttft_ms.p50[i],
                     "tpot_ms": found.tpot_ms.p50[i]}  # fmt: skip
        base = at_source.get(point.concurrency)
        for name in METRICS:
            truth = measured[name]
            if truth is None or truth <= 0 or not math.isfinite(predicted[name]):
                continue
            errors[name].model.append(_pct(predicted[name], truth))
            by_scaling = scaled_points.get(point.concurrency)
            value = getattr(by_scaling, name) if by_scaling is not None else None
            if value:
                errors[name].scaling.append(_pct(value, truth))
            old = getattr(base, name) if base is not None else None
            if old:
                scaled = old * ratio if name == "output_tok_s" else old / ratio
                errors[name].same.append(_pct(old, truth))
                errors[name].bandwidth.append(_pct(scaled, truth))


def _pct(value: float, truth: float) -> float:
    return abs(value / truth - 1.0) * 100.0


def table(
    curves: list[LoadCurve],
    exponents: tuple[float, float] | None = None,
    only: str | None = None,
) -> list[dict[str, object]]:
    """One row per (model, engine, direction): levels compared and the MAPEs (`only`: the dev
    or holdout models alone)."""
    rows: dict[tuple[str, str, str], dict[str, Error]] = {}
    skipped: dict[str, int] = defaultdict(int)
    for direction, source, target in pairs(curves):
        held_out = canonical_model(source[0].key.model) in HOLDOUT
        if only is not None and held_out != (only == "holdout"):
            continue
        found = compare(source, target, exponents)
        if isinstance(found, str):
            skipped[found[:90]] += 1
            continue
        key = (canonical_model(source[0].key.model), source[0].key.engine, direction)
        held = rows.setdefault(key, {m: Error([], [], [], []) for m in METRICS})
        for name, err in found.items():
            held[name].model.extend(err.model)
            held[name].same.extend(err.same)
            held[name].bandwidth.extend(err.bandwidth)
            held[name].scaling.extend(err.scaling)
    out = []
    for (model, engine, direction), errs in sorted(rows.items()):
        row: dict[str, object] = {
            "model": model, "engine": engine, "direction": direction,
            "set": "holdout" if model in HOLDOUT else "dev",
            "levels": len(errs["output_tok_s"].model),
        }  # fmt: skip
        for name, err in errs.items():
            row[name] = [
                _mean(err.model),
                _mean(err.same),
                _mean(err.bandwidth),
                _mean(err.scaling),
            ]
        out.append(row)
    if exponents is None:
        for why, count in skipped.items():
            print(f"# skipped {count} pair(s): {why}", file=sys.stderr)
    return out


def summary(rows: list[dict[str, object]], method: int = 0) -> list[float]:
    """Level-weighted MAPE of one method (0 serving model, 1 same per-GPU, 2 bandwidth ratio,
    3 per-point scaling) per metric over the rows (weights: levels the method compared)."""
    out = []
    for m in METRICS:
        pairs_ = [(r[m][method], r["levels"]) for r in rows if r[m][method] is not None]  # type: ignore[index]
        total = sum(w for _, w in pairs_)  # type: ignore[misc]
        out.append(sum(v * w for v, w in pairs_) / max(total, 1))  # type: ignore[operator, misc]
    return out


def grid(curves: list[LoadCurve]) -> None:
    """The dev models' MAPE at each pair of transfer exponents (how GENERATION_EXPONENTS was
    chosen: the lowest mean of the three metrics)."""
    steps = (0.0, 0.25, 0.5, 0.75, 1.0)
    for bw in steps:
        for flops in steps:
            found = summary(table(curves, (bw, flops), only="dev"))
            print(f"bw^{bw:<4} flops^{flops:<4} tok/s {found[0]:5.1f}  TTFT {found[1]:6.1f}  "
                  f"TPOT {found[2]:5.1f}  mean {sum(found) / 3:6.1f}")  # fmt: skip


def _mean(values: list[float]) -> float | None:
    return round(float(np.mean(values)), 1) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    parser.add_argument("--grid", action="store_true", help="the exponent grid on dev models")
    args = parser.parse_args()
    if args.grid:
        grid(load_curves())
        return
    rows = table(load_curves())
    print("MAPE % (serving model / same per-GPU / bandwidth ratio / per-point scaling)")
    print(f"{'set':7} {'model':22} {'engine':12} {'direction':36} {'n':>4}  "
          f"{'output tok/s':>20} {'TTFT':>20} {'TPOT':>20}")  # fmt: skip
    for row in rows:
        cells = ["/".join("-" if v is None else f"{v:.0f}" for v in row[m]) for m in METRICS]  # type: ignore[attr-defined]
        print(f"{row['set']:7} {row['model']:22} {row['engine']:12} {row['direction']:36} "
              f"{row['levels']:>4}  {cells[0]:>20} {cells[1]:>20} {cells[2]:>20}")  # fmt: skip
    names = ("serving model", "same per-GPU", "bandwidth ratio", "per-point scaling")
    for subset in ("dev", "holdout"):
        chosen = [r for r in rows if r["set"] == subset]
        for method, name in enumerate(names):
            found = summary(chosen, method)
            print(f"{subset}: {name:18} MAPE: output tok/s {found[0]:.1f}%, TTFT {found[1]:.1f}%, "
                  f"TPOT {found[2]:.1f}%")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
