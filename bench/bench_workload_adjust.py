"""Cross-workload accuracy of the workload adjustment on aiconfigurator's measured silicon sample.

For every engine x GPU x TP x precision x model with several ISL/OSL curves, each curve A predicts
every other curve B at the concurrencies both measured; MAPE of output tok/s, TTFT and TPOT by
(ISL ratio, OSL ratio), adjusted vs used as is, and output tok/s adjusted from throughput alone
(the latencies stripped from A). Run: `python bench/bench_workload_adjust.py`.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import replace
from itertools import permutations
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_fit_accuracy import SILICON_CSV  # noqa: E402
from hardware.gpus import load_gpu_specs  # noqa: E402
from measurements.importers import import_path  # noqa: E402
from measurements.run_file import Provenance  # noqa: E402
from planner.curves.load import CurvePoint, LoadCurve, curve_from_run  # noqa: E402
from planner.physics.roofline import curve_ceilings  # noqa: E402
from planner.physics.workload_adjust import adjust_curve  # noqa: E402

METRICS = ("output_tok_s", "ttft_ms", "tpot_ms")
Bucket = tuple[str, float, float]  # engine, ISL ratio, OSL ratio (larger over smaller)
# "adjusted"/"as is"/"tok/s only" -> metric -> abs % errors
Errors = dict[str, dict[str, list[float]]]


def cross_workload_errors(curves: list[LoadCurve]) -> dict[Bucket, Errors]:
    """Absolute % errors predicting each curve's points from each sibling curve's, by distance."""
    out: dict[Bucket, Errors] = defaultdict(
        lambda: {name: defaultdict(list) for name in ("adjusted", "as is", "tok/s only")}
    )
    specs = load_gpu_specs()
    for source, target in _pairs(curves):
        isl, osl = target.key.isl or 0, target.key.osl or 0
        adjusted = adjust_curve(source, isl, osl, curve_ceilings(source, specs))
        if isinstance(adjusted, str):
            continue
        bucket = (source.key.engine, _ratio(source.key.isl, isl), _ratio(source.key.osl, osl))
        bare = adjust_curve(_throughput_only(source), isl, osl, curve_ceilings(source, specs))
        variants = [("adjusted", adjusted), ("as is", source)]
        if not isinstance(bare, str):
            variants.append(("tok/s only", bare))
        for name, curve in variants:
            for metric, error in _point_errors(curve, target):
                out[bucket][name][metric].append(error)
    return out


def _throughput_only(curve: LoadCurve) -> LoadCurve:
    """The curve with its latencies removed: what a max-throughput table gives."""
    points = tuple(CurvePoint(p.concurrency, output_tok_s=p.output_tok_s) for p in curve.points)
    return replace(curve, points=points)


def _pairs(curves: list[LoadCurve]) -> Iterator[tuple[LoadCurve, LoadCurve]]:
    groups: dict[tuple[object, ...], list[LoadCurve]] = defaultdict(list)
    for curve in curves:
        key = curve.key
        if key.isl and key.osl:
            groups[(key.engine, key.gpu, key.tp, key.precision, key.model)].append(curve)
    for members in groups.values():
        for source, target in permutations(members, 2):
            if (source.key.isl, source.key.osl) != (target.key.isl, target.key.osl):
                yield source, target


def _point_errors(curve: LoadCurve, target: LoadCurve) -> Iterator[tuple[str, float]]:
    by_concurrency = {point.concurrency: point for point in curve.points}
    for measured in target.points:
        predicted = by_concurrency.get(measured.concurrency)
        if predicted is None:
            continue
        for metric in METRICS:
            got, want = _value(predicted, metric), _value(measured, metric)
            if got is not None and want:
                yield metric, abs(got / want - 1.0) * 100.0


def _value(point: CurvePoint, metric: str) -> float | None:
    if metric == "output_tok_s":
        return point.output_tok_s
    if metric == "ttft_ms":
        return point.p50_ttft_ms if point.p50_ttft_ms is not None else point.ttft_ms
    return point.p50_tpot_ms if point.p50_tpot_ms is not None else point.tpot_ms


def _ratio(measured: int | None, wanted: int) -> float:
    value = max((measured or 1) / wanted, wanted / (measured or 1))
    return float(round(value, 1))


def all_curves() -> list[LoadCurve]:
    """Every curve of the silicon sample (all models and engines), through the curve importer."""
    runs = import_path(SILICON_CSV, provenance=Provenance.PUBLISHED).runs
    return [c for c in (curve_from_run(run) for run in runs) if c is not None]


def main() -> None:
    """Print MAPE per engine and distance (every model of the sample), adjusted vs used as is."""
    table = cross_workload_errors(all_curves())
    header = "engine        ISLx  OSLx  points  tok/s adj/as-is   TTFT adj/as-is   TPOT adj/as-is"
    print(header + "  tok/s from tok/s only")
    for (engine, isl_x, osl_x), errors in sorted(table.items()):
        cells = [
            f"{np.mean(errors['adjusted'][m]):6.1f} /{np.mean(errors['as is'][m]):6.1f}"
            for m in METRICS
        ]
        bare = errors["tok/s only"]["output_tok_s"]
        cells.append(f"{np.mean(bare):6.1f}" if bare else "     -")
        count = len(errors["adjusted"]["tpot_ms"])
        print(f"{engine:<13} {isl_x:4.1f}  {osl_x:4.1f}  {count:6d}  " + "  ".join(cells))
    _print_within(table)


def _print_within(table: dict[Bucket, Errors]) -> None:
    """Output tok/s MAPE per engine within the 2x limit: full adjustment, tok/s only, as is."""
    for engine in sorted({key[0] for key in table}):
        within = [e for (eng, i, o), e in table.items() if eng == engine and max(i, o) <= 2.0]
        cells = [
            f"{name} {np.mean([v for e in within for v in e[name]['output_tok_s']]):.1f}%"
            for name in ("adjusted", "tok/s only", "as is")
            if any(e[name]["output_tok_s"] for e in within)
        ]
        print(f"{engine} within 2x, output tok/s MAPE: " + ", ".join(cells))


if __name__ == "__main__":
    main()
