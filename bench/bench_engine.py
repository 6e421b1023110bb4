"""The serving model (planner.engine) where it reaches, on held-out deployments of the silicon
sample, beside what the planner did before (today's interpolator, workload adjuster, projection).

Deployments (engine, model, precision, GPU, TP) are split by a hash of their name before any
tuning: HOLDOUT (about 30%) is reported, DEV is where the model was developed. Reaches, each
predicting measured levels the calibration did not see:
- interior: leave one interior level of a curve out (calibrated on everything else);
- next level up: the highest level of a curve left out;
- workload: one workload of a deployment left out (calibrated on the others), bucketed by the
  larger of its ISL and OSL ratios to the nearest calibrated workload;
- cross-GPU: a deployment measured on both H100 and H200, calibrated on one, read on the other.
For each: MAPE of output tok/s, TTFT (the sample's unstated statistic) and TPOT, the worst case,
and how often the truth lies in the model's 80% band.
Run: `python bench/bench_engine.py [--split dev|holdout|all] [--json]`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_fit_accuracy import AIC_MODEL, aiconfigurator_points  # noqa: E402
from hardware.gpus import load_gpu_specs  # noqa: E402
from planner.curves.load import CurvePoint, LoadCurve  # noqa: E402
from planner.engine.curves import reach_ratio  # noqa: E402
from planner.engine.model import (  # noqa: E402
    CONCURRENCY,
    EngineModel,
    EnginePrediction,
    Query,
    deployment_spec,
    engine_model,
    with_spec,
)
from planner.engine.transfer import Target, physics_only_curve  # noqa: E402
from planner.fitting.fit import fit_curve  # noqa: E402
from planner.fitting.predict import predict  # noqa: E402
from planner.physics.projection import project_curve  # noqa: E402
from planner.physics.roofline import curve_ceilings  # noqa: E402
from planner.physics.workload_adjust import NEAR_MISS_RATIO, adjust_curve  # noqa: E402
from tests.planner.builders import silicon_curves  # noqa: E402

METRICS = ("output_tok_s", "ttft_ms", "tpot_ms")
HOLDOUT_SHARE = 3  # of 10
BUCKETS = ((2.0, "1-2x"), (4.0, "2-4x"), (8.0, "4-8x"), (math.inf, "8x+"))
Deployment = tuple[str, str, str, str, int]
AIC = aiconfigurator_points()


@dataclass
class Tally:
    """Absolute relative errors and band hits per metric, for ours and the baseline."""

    ours: dict[str, list[float]]
    base: dict[str, list[float]]
    inside: dict[str, list[bool]]
    aic: dict[str, list[float]]  # AIConfigurator 0.12.0 on the same levels (Llama-3.1-70B)
    ours_at_aic: dict[str, list[float]]  # ours on exactly those levels

    @classmethod
    def empty(cls) -> Tally:
        return cls(*(defaultdict(list) for _ in range(5)))

    def row(self, reach: str) -> dict[str, object]:
        out: dict[str, object] = {"reach": reach}
        for metric in METRICS:
            ours, base, inside = self.ours[metric], self.base[metric], self.inside[metric]
            out[metric] = {
                "n": len(ours),
                "mape_pct": _pct(np.mean(ours)) if ours else None,
                "worst_pct": _pct(np.max(ours)) if ours else None,
                "band80_pct": _pct(np.mean(inside)) if inside else None,
                "baseline_mape_pct": _pct(np.mean(base)) if base else None,
                "baseline_n": len(base),
                "aiconfigurator_mape_pct": _pct(np.mean(self.aic[metric]))
                if self.aic[metric]
                else None,
                "aiconfigurator_n": len(self.aic[metric]),
                "ours_at_aiconfigurator_levels_pct": (
                    _pct(np.mean(self.ours_at_aic[metric])) if self.ours_at_aic[metric] else None
                ),
            }
        return out


def _pct(value: float) -> float:
    return round(100.0 * float(value), 1)


def deployment_of(curve: LoadCurve) -> Deployment:
    key = curve.key
    return (key.engine, key.model, key.precision or "", key.gpu or "", key.tp or 0)


def split_of(deployment: Deployment) -> str:
    """HOLDOUT or DEV, by a hash of the deployment's name (fixed before any tuning)."""
    digest = hashlib.sha256("|".join(map(str, deployment)).encode()).digest()
    return "holdout" if digest[0] % 10 < HOLDOUT_SHARE else "dev"


def _measured(point: CurvePoint, metric: str) -> float | None:
    if metric == "output_tok_s":
        return point.output_tok_s
    if metric == "ttft_ms":
        return point.ttft_ms
    return point.tpot_ms


def _ours(prediction: EnginePrediction, metric: str, index: int) -> tuple[float, float, float]:
    found = {
        "output_tok_s": prediction.output_tok_s,
        "ttft_ms": prediction.ttft_ms,
        "tpot_ms": prediction.tpot_ms,
    }[metric]
    return found.mean[index], found.low[index], found.high[index]


def _score(
    tally: Tally, point: CurvePoint, prediction: EnginePrediction, index: int
) -> dict[str, float]:
    errors = {}
    for metric in METRICS:
        truth = _measured(point, metric)
        value, low, high = _ours(prediction, metric, index)
        if truth and math.isfinite(value):
            errors[metric] = abs(value / truth - 1.0)
            tally.inside[metric].append(low <= truth <= high)
        elif truth:
            errors[metric] = 1.0  # no answer where there is a measurement: 100% off
            tally.inside[metric].append(False)
    for metric, error in errors.items():
        tally.ours[metric].append(error)
    return errors


def _aic(tally: Tally, curve: LoadCurve, point: CurvePoint, ours: dict[str, float]) -> None:
    """AIConfigurator's own error at the same level, where its file has one, beside ours."""
    key = curve.key
    setting = (key.gpu, key.tp, key.isl, key.osl, point.concurrency)
    for metric in METRICS:
        found = AIC.get((key.engine, setting, metric)) if key.model == AIC_MODEL else None
        if found is not None and metric in ours:
            tally.aic[metric].append(abs(found[1] / found[0] - 1.0))
            tally.ours_at_aic[metric].append(ours[metric])


def _baseline(tally: Tally, point: CurvePoint, value: dict[str, float | None]) -> None:
    for metric in METRICS:
        truth, guess = _measured(point, metric), value.get(metric)
        if truth and guess:
            tally.base[metric].append(abs(guess / truth - 1.0))


def _fitted(curve: LoadCurve, concurrency: float) -> dict[str, float | None]:
    if len(curve.points) < 2:
        return {}
    found = predict(fit_curve(curve), [concurrency])[0]
    return {
        "output_tok_s": found.output_tok_s,
        "ttft_ms": found.p50_ttft_ms or found.p99_ttft_ms,
        "tpot_ms": found.tpot_ms,
    }


def _predict_one(
    model: EngineModel | str, curve: LoadCurve, point: CurvePoint
) -> EnginePrediction | None:
    if isinstance(model, str):
        return None
    query = Query(CONCURRENCY, (point.concurrency,), curve.key.isl or 0, curve.key.osl or 0)
    return model.predict(query)


def level_out(
    groups: dict[Deployment, list[LoadCurve]], pick: Callable[[LoadCurve], list[int]]
) -> Tally:
    """Leave the levels `pick` names out of one curve at a time; calibrate on the rest."""
    tally = Tally.empty()
    for curves in groups.values():
        for curve in curves:
            for index in pick(curve):
                point = curve.points[index]
                rest = replace(curve, points=curve.points[:index] + curve.points[index + 1 :])
                others = [c for c in curves if c is not curve]
                prediction = _predict_one(engine_model([rest, *others]), curve, point)
                if prediction is not None:
                    _aic(tally, curve, point, _score(tally, point, prediction, 0))
                    _baseline(tally, point, _fitted(rest, point.concurrency))
    return tally


def interior(curve: LoadCurve) -> list[int]:
    return list(range(1, len(curve.points) - 1))


def top(curve: LoadCurve) -> list[int]:
    return [len(curve.points) - 1] if len(curve.points) >= 3 else []


def workload_out(groups: dict[Deployment, list[LoadCurve]]) -> dict[str, Tally]:
    """Leave one workload of a deployment out; bucket by its distance to the nearest kept."""
    tallies = {label: Tally.empty() for _, label in BUCKETS}
    for curves in groups.values():
        for curve in curves:
            others = [c for c in curves if c is not curve and c.key.isl and c.key.osl]
            if not others or not curve.key.isl or not curve.key.osl:
                continue
            isl, osl = curve.key.isl, curve.key.osl
            nearest = min(others, key=lambda c: reach_ratio(c, isl, osl))
            ratio = reach_ratio(nearest, isl, osl)
            label = next(name for limit, name in BUCKETS if ratio <= limit)
            model = engine_model(others)
            if isinstance(model, str):
                continue
            query = Query(CONCURRENCY, curve.concurrencies(), isl, osl)
            prediction = model.predict(query)
            adjusted = (
                adjust_curve(nearest, isl, osl, curve_ceilings(nearest))
                if ratio <= NEAR_MISS_RATIO
                else "beyond the limit"
            )
            for index, point in enumerate(curve.points):
                errors = _score(tallies[label], point, prediction, index)
                _aic(tallies[label], curve, point, errors)
                if not isinstance(adjusted, str):
                    _baseline(tallies[label], point, _at(adjusted, point.concurrency))
    return tallies


def _at(curve: LoadCurve, concurrency: float) -> dict[str, float | None]:
    point = next((p for p in curve.points if p.concurrency == concurrency), None)
    if point is None:
        return {}
    return {m: _measured(point, m) for m in METRICS}


def cross_gpu(groups: dict[Deployment, list[LoadCurve]]) -> dict[str, Tally]:
    """Calibrate on one GPU, read on the other, for deployments measured on both."""
    tallies = {"H100->H200": Tally.empty(), "H200->H100": Tally.empty()}
    for deployment, curves in groups.items():
        engine, model_name, precision, gpu, tp = deployment
        for other, others in groups.items():
            if other[:3] != (engine, model_name, precision) or other[4] != tp or other[3] == gpu:
                continue
            direction = f"{gpu[:4]}->{other[3][:4]}"
            if direction not in tallies:
                continue
            model = engine_model(curves)
            target = deployment_spec(others[0])
            if isinstance(model, str) or isinstance(target, str):
                continue
            moved = with_spec(model, target)
            for curve in others:
                query = Query(
                    CONCURRENCY, curve.concurrencies(), curve.key.isl or 0, curve.key.osl or 0
                )
                prediction = moved.predict(query)
                source = next(
                    (c for c in curves if (c.key.isl, c.key.osl) == (curve.key.isl, curve.key.osl)),
                    None,
                )
                projected = project_curve(source, other[3]) if source is not None else "none"
                for index, point in enumerate(curve.points):
                    errors = _score(tallies[direction], point, prediction, index)
                    _aic(tallies[direction], curve, point, errors)
                    if not isinstance(projected, str):
                        _baseline(tallies[direction], point, _at(projected, point.concurrency))
    return tallies


def other_model(groups: dict[Deployment, list[LoadCurve]], every: list[LoadCurve]) -> Tally:
    """Leave the model out: its physics with the efficiencies of the other models measured on
    the same engine and GPU (planner.engine.transfer), against its measured levels."""
    tally = Tally.empty()
    specs = {spec.gpu: spec for spec in load_gpu_specs()}
    for (engine, model_name, precision, gpu, tp), curves in groups.items():
        for curve in curves:
            if not curve.key.isl or not curve.key.osl or gpu not in specs:
                continue
            target = Target(
                model_name, precision or None, engine, specs[gpu], tp, curve.key.isl, curve.key.osl
            )
            built = physics_only_curve(target, every, exclude_model=True)
            if isinstance(built, str):
                continue
            for point in curve.points:
                guess = next((p for p in built.points if p.concurrency == point.concurrency), None)
                if guess is None:
                    continue
                errors: dict[str, float] = {}
                for metric, truth, value in (
                    ("output_tok_s", point.output_tok_s, guess.output_tok_s),
                    ("ttft_ms", point.ttft_ms, guess.p50_ttft_ms),
                    ("tpot_ms", point.tpot_ms, guess.p50_tpot_ms),
                ):
                    if truth and value:
                        errors[metric] = abs(value / truth - 1.0)
                        tally.ours[metric].append(errors[metric])
                _aic(tally, curve, point, errors)
    return tally


def report(split: str) -> list[dict[str, object]]:
    groups: dict[Deployment, list[LoadCurve]] = defaultdict(list)
    every = silicon_curves()
    for curve in every:
        deployment = deployment_of(curve)
        if split in ("all", split_of(deployment)):
            groups[deployment].append(curve)
    rows = [
        level_out(groups, interior).row("interior (leave one level out)"),
        level_out(groups, top).row("next level up (top level out)"),
    ]
    for label, tally in workload_out(groups).items():
        rows.append(tally.row(f"workload {label}"))
    for label, tally in cross_gpu(groups).items():
        rows.append(tally.row(f"cross-GPU {label}"))
    rows.append(other_model(groups, every).row("other model (physics + donors)"))
    return rows


def _print(rows: Sequence[dict[str, object]], split: str) -> None:
    print(f"serving model on the {split} deployments: MAPE % (worst, 80% band) | baseline MAPE %")
    for row in rows:
        cells = []
        for metric in METRICS:
            cell = row[metric]
            assert isinstance(cell, dict)
            if not cell["n"]:
                cells.append(f"{metric}: -")
                continue
            base = cell["baseline_mape_pct"]
            cells.append(
                f"{metric}: {cell['mape_pct']} ({cell['worst_pct']}, {cell['band80_pct']}%) "
                f"n={cell['n']} | {base if base is not None else '-'} n={cell['baseline_n']} | "
                f"AIC {cell['aiconfigurator_mape_pct']} vs ours "
                f"{cell['ours_at_aiconfigurator_levels_pct']} n={cell['aiconfigurator_n']}"
            )
        print(f"- {row['reach']}: " + "; ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "holdout", "all"), default="holdout")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = report(args.split)
    if args.json:
        print(json.dumps({"split": args.split, "rows": rows}, indent=2))
    else:
        _print(rows, args.split)


if __name__ == "__main__":
    main()
