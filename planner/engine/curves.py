"""A deployment's curve at a workload nothing measured, read from its serving model.

The model is calibrated on every measured workload of the deployment and read at the scenario's
ISL/OSL at the concurrencies that were measured (never beyond them here); each point states the
same statistics the measured curves state. The curve is "adjusted", says how far it reached and
carries the validated error at that distance (bench/bench_engine.py) into the plan's samples.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from planner.curves.load import CurvePoint, LoadCurve
from planner.engine.model import CONCURRENCY, EnginePrediction, Query, engine_model
from planner.physics.workload_adjust import ADJUSTED

# Validated error of the serving model read at another workload of a calibrated deployment
# (bench/bench_engine.py, leave one workload out on the DEV deployments of the silicon sample):
# the worst of its output tok/s, TTFT and TPOT MAPE %, by how far (the larger of the ISL and OSL
# ratios) it reached, never falling with distance. Dev: 1-2x TTFT 37.0%, 2-4x TTFT 11.2% (30
# levels), 4-8x TTFT 39.7%; held out: 1-2x TTFT 34.1%, 4-8x TTFT 21.2%. Past 8x nothing in the
# sample validates it: 50%, and the flag says so.
DISTANCE_ERROR_PCT = ((2.0, 37.0), (4.0, 37.0), (8.0, 40.0), (math.inf, 50.0))
VALIDATED_RATIO = 8.0


def reach_ratio(curve: LoadCurve, isl: int, osl: int) -> float:
    """How far a curve's workload is from isl/osl: the larger of the two ratios (>= 1)."""
    if not curve.key.isl or not curve.key.osl:
        return math.inf
    return max(_ratio(curve.key.isl, isl), _ratio(curve.key.osl, osl))


def distance_error_pct(ratio: float) -> float:
    """The validated error at a reach ratio."""
    return next(pct for limit, pct in DISTANCE_ERROR_PCT if ratio <= limit)


def serving_model_curve(curves: Sequence[LoadCurve], isl: int, osl: int) -> LoadCurve | str:
    """The deployment of `curves` at isl/osl from its serving model, or why it cannot be."""
    stated = [c for c in curves if c.key.isl and c.key.osl and c.points]
    if not stated:
        return "no serving model: no measured workload with a stated ISL/OSL"
    model = engine_model(stated)
    if isinstance(model, str):
        return model
    nearest = min(stated, key=lambda c: (reach_ratio(c, isl, osl), -len(c.points)))
    loads = tuple(sorted({p.concurrency for c in stated for p in c.points}))
    prediction = model.predict(Query(CONCURRENCY, loads, isl, osl))
    points = tuple(_point(nearest, prediction, i) for i in range(len(loads)))
    ratio = reach_ratio(nearest, isl, osl)
    error = distance_error_pct(ratio)
    workloads = ", ".join(sorted({f"{c.key.isl}/{c.key.osl}" for c in stated}))
    validated = "validated" if ratio <= VALIDATED_RATIO else "NOT VALIDATED this far; assumed"
    flag = (
        f"adjusted by the serving model from {nearest.key.isl}/{nearest.key.osl}, {ratio:.1f}x "
        f"away, {validated} error at that distance {error:g}% (calibrated on "
        f"{model.calibration.workloads} measured workload(s): {workloads})"
    )
    return replace(
        nearest,
        key=replace(nearest.key, isl=isl, osl=osl),
        points=points,
        provenance=ADJUSTED,
        label=f"serving model from {nearest.label_text()}",
        flags=(*nearest.flags, flag),
        ceiling_output_tok_s=None,  # an offline ceiling holds at its own workload only
        basis_error_pct=error,
    )


def _point(like: LoadCurve, prediction: EnginePrediction, index: int) -> CurvePoint:
    """A point stating what the measured curve states (unstated stays unstated)."""
    has = {
        field: any(getattr(p, field) is not None for p in like.points)
        for field in CurvePoint.__slots__
    }

    def pick(field: str, value: float) -> float | None:
        return value if has.get(field) and math.isfinite(value) else None

    ttft, tpot = prediction.ttft_ms, prediction.tpot_ms
    return CurvePoint(
        concurrency=prediction.query.loads[index],
        output_tok_s=_finite(prediction.output_tok_s.mean[index]),
        p50_ttft_ms=pick("p50_ttft_ms", ttft.p50[index]),
        p99_ttft_ms=pick("p99_ttft_ms", ttft.p99[index]),
        ttft_ms=pick("ttft_ms", ttft.mean[index]),
        p50_tpot_ms=pick("p50_tpot_ms", tpot.p50[index]),
        p99_tpot_ms=pick("p99_tpot_ms", tpot.p99[index]),
        tpot_ms=pick("tpot_ms", tpot.mean[index]),
        p99_e2e_ms=pick("p99_e2e_ms", prediction.e2e_ms.p99[index]),
        mean_ttft_ms=pick("mean_ttft_ms", ttft.mean[index]),
        mean_tpot_ms=pick("mean_tpot_ms", tpot.mean[index]),
    )


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _ratio(measured: int, wanted: int) -> float:
    return max(measured / wanted, wanted / measured)
