"""Cross-GPU projection accuracy on aiconfigurator's measured silicon sample.

Every curve (vLLM, TensorRT-LLM, SGLang) measured on both H100 and H200 at the same model, TP
and ISL/OSL is projected to the other GPU and compared with the measured rows at the same
concurrency. Prints MAPE and the worst error for output tok/s, TTFT and TPOT per direction and
per TP, next to the "no scaling" baseline (the source numbers as they are).
Run: `python bench/bench_projection.py [--engine vllm]`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from measurements.importers import import_path  # noqa: E402
from measurements.run_file import Provenance  # noqa: E402
from planner.curves.load import H100, H200, CurveKey, CurvePoint, LoadCurve, curve_from_run  # noqa: E402
from planner.physics.projection import project_curve  # noqa: E402
from planner.physics.roofline import Ceilings, curve_ceilings  # noqa: E402

SILICON_CSV = ROOT / "measurements" / "demo" / "data" / "silicon_sample_h100_h200.csv"
METRICS: dict[str, Callable[[CurvePoint], float | None]] = {
    "output_tok_s": lambda p: p.output_tok_s,
    "ttft_ms": lambda p: p.ttft_ms,
    "tpot_ms": lambda p: p.tpot_ms,
}


def load_curves(path: Path = SILICON_CSV) -> list[LoadCurve]:
    """Every concurrency curve of the silicon sample, through the real curve-CSV importer."""
    runs = import_path(path, provenance=Provenance.PUBLISHED).runs
    curves = (curve_from_run(run) for run in runs)
    return [curve for curve in curves if curve is not None]


def pairs(
    curves: list[LoadCurve], source_gpu: str, target_gpu: str, engine: str | None = "vllm"
) -> Iterator[tuple[LoadCurve, LoadCurve]]:
    """(source curve, measured target curve) for every deployment measured on both GPUs (of
    one engine, or every engine when engine is None)."""
    by_key: dict[CurveKey, LoadCurve] = {}
    for curve in curves:
        if engine not in (None, curve.key.engine):
            continue
        # Versions differ between the GPUs' runs in the sample; the deployment is the same.
        key = replace(curve.key, engine_version=None)
        if len(curve.points) > len(by_key.get(key, curve).points) or key not in by_key:
            by_key[key] = curve
    for key, curve in by_key.items():
        measured = by_key.get(replace(key, gpu=target_gpu))
        if key.gpu == source_gpu and measured is not None:
            yield curve, measured


def errors(
    source: LoadCurve, predicted: LoadCurve, measured: LoadCurve
) -> dict[str, dict[str, list[float]]]:
    """Absolute % errors per metric for the projection and for the no-scaling baseline."""
    out: dict[str, dict[str, list[float]]] = {"projected": {}, "no scaling": {}}
    truth = {point.concurrency: point for point in measured.points}
    for method, curve in (("projected", predicted), ("no scaling", source)):
        for metric, value in METRICS.items():
            errs = out[method].setdefault(metric, [])
            for point in curve.points:
                other = truth.get(point.concurrency)
                guess, real = value(point), value(other) if other else None
                if guess is not None and real:
                    errs.append(abs(guess - real) / real * 100.0)
    return out


def ttft_errors_within_capacity(
    original: LoadCurve, predicted: LoadCurve, measured: LoadCurve
) -> list[float]:
    """Projected-TTFT % errors at the concurrencies whose KV cache fits on both GPUs (estimate)."""
    source, target = curve_ceilings(original), curve_ceilings(measured)
    isl, osl = measured.key.isl, measured.key.osl
    if not isinstance(source, Ceilings) or not isinstance(target, Ceilings) or not isl or not osl:
        return []
    fits = min(source.max_streams(isl + osl), target.max_streams(isl + osl))
    truth = {point.concurrency: point.ttft_ms for point in measured.points}
    return [
        abs(point.ttft_ms - real) / real * 100.0
        for point in predicted.points
        if point.concurrency <= fits
        and point.ttft_ms is not None
        and (real := truth.get(point.concurrency))
    ]


def direction(
    curves: list[LoadCurve], source_gpu: str, target_gpu: str, engine: str | None
) -> dict[str, dict[str, list[float]]]:
    """Absolute % errors keyed 'projected TPn' / 'no scaling TPn' / 'projected all' -> metric."""
    out: dict[str, dict[str, list[float]]] = {}
    for source, measured in pairs(curves, source_gpu, target_gpu, engine):
        predicted = project_curve(source, target_gpu)
        if isinstance(predicted, str):
            print(f"  skipped {source.label_text()}: {predicted}")
            continue
        for method, per_metric in errors(source, predicted, measured).items():
            for group in (f"TP{source.key.tp}", "all"):
                bucket = out.setdefault(f"{method} {group}", {})
                for metric, errs in per_metric.items():
                    bucket.setdefault(metric, []).extend(errs)
        out.setdefault("pairs", {}).setdefault("count", []).append(1.0)
    return out


def main() -> None:
    """Print MAPE and worst error per direction, TP, metric and method."""
    engine = sys.argv[sys.argv.index("--engine") + 1] if "--engine" in sys.argv else None
    curves = load_curves()
    for source_gpu, target_gpu in ((H100, H200), (H200, H100)):
        found = direction(curves, source_gpu, target_gpu, engine)
        count = len(found.pop("pairs", {}).get("count", []))
        print(f"{source_gpu} -> {target_gpu}: {count} curve pairs ({engine or 'all engines'})")
        for group, per_metric in sorted(found.items(), key=lambda item: item[0].split()[-1]):
            cells = "  ".join(
                f"{metric} {np.mean(errs):6.1f}% (worst {np.max(errs):6.1f}%, n={len(errs)})"
                for metric, errs in per_metric.items()
                if errs
            )
            print(f"  {group:>16}: {cells}")


if __name__ == "__main__":
    main()
