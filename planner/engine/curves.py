"""A deployment's closed-loop curve where nothing measured one: at another workload, or from
request-rate levels only, read from its serving model.

The model is calibrated on every measured workload and load kind of the deployment and read at
the scenario's ISL/OSL at the concurrencies that were measured (or that the measured rates
ran), never beyond them; each point states the statistics the measured levels state. The curve
is "adjusted", says how far it reached and carries the validated error of that reach
(bench/bench_engine.py) into the plan's samples.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from planner.curves.load import LATENCY_ATTRS, BasisError, CurvePoint, LoadCurve
from planner.curves.workload_groups import same_workload
from planner.engine.model import (
    CONCURRENCY,
    RATE,
    EngineModel,
    EnginePrediction,
    Query,
    engine_model,
)
from planner.engine.project import adjusted_by_model
from planner.engine.reach_errors import reach_error, workload_bucket
from planner.physics.workload_adjust import ADJUSTED

# Validated error of the serving model read at another workload of a calibrated deployment
# (bench/bench_engine.py, leave one workload out, physics bounds on): MAPE % of output tok/s,
# TTFT and TPOT by how far (the larger of the ISL and OSL ratios) it reached, the larger of the
# DEV and HOLDOUT deployments' and never falling with distance. Dev / holdout 1-2x: 7.2 / 36.9 /
# 7.6 and 8.4 / 34.0 / 9.9; 2-4x (dev only, 30 levels): 7.4 / 11.2 / 9.9; 4-8x: 7.7 / 39.8 /
# 7.9 and 9.1 / 22.1 / 9.3. Past 8x nothing in the sample validates it: assumed, flagged so.
DISTANCE_ERRORS = (
    (2.0, BasisError(8.4, 36.9, 9.9)),
    (4.0, BasisError(8.4, 36.9, 9.9)),
    (8.0, BasisError(9.1, 39.8, 9.9)),
    (math.inf, BasisError(15.0, 50.0, 20.0)),
)
# The dev split measured every distance bucket up to the sample's farthest pair (8192/100 from
# 1024/1024 and the like: about 80x); past that the error is assumed.
VALIDATED_RATIO = 80.0
# Reading the closed loop from request-rate levels of the same workload: how far the two load
# kinds disagree through the model on the real vLLM CPU server (bench/
# bench_rate_vs_concurrency.py: concurrency 1-8 and two Poisson rates below the c=4 request
# rate, 48 requests a level, each kind read where the other ran; two runs on 2026-12-02 and two
# of the two-sweeps-a-kind protocol on 2026-12-04): mean relative error %, the largest seen.
RATE_ERROR = BasisError(19.1, 19.4, 21.0)


def reach_ratio(curve: LoadCurve, isl: int, osl: int) -> float:
    """How far a curve's workload is from isl/osl: the larger of the two ratios (>= 1)."""
    if not curve.key.isl or not curve.key.osl:
        return math.inf
    return max(_ratio(curve.key.isl, isl), _ratio(curve.key.osl, osl))


def distance_error(ratio: float) -> BasisError:
    """The validated error at a reach ratio: the dev split's measured figure for its distance
    bucket (planner.engine.reach_errors), the older table's where the split has too few."""
    nearer = [
        reach_error(f"another workload {workload_bucket(limit)}", error)
        for limit, error in DISTANCE_ERRORS
        if limit < ratio
    ]
    older = next(error for limit, error in DISTANCE_ERRORS if ratio <= limit)
    found = reach_error(f"another workload {workload_bucket(ratio)}", older)
    return _at_least(found, nearer)  # never less sure farther away than nearer


def _at_least(error: BasisError, nearer: Sequence[BasisError]) -> BasisError:
    """`error`, each figure raised to the largest of the nearer buckets' (per metric)."""
    every = [error, *nearer]
    bands = [e.band80_pct for e in every if e.band80_pct is not None]
    return BasisError(
        max(e.output_tok_s_pct for e in every),
        max(e.ttft_pct for e in every),
        max(e.tpot_pct for e in every),
        tuple(max(b[i] for b in bands) for i in range(3)) if bands else None,  # type: ignore[arg-type]
    )


def serving_model_curve(curves: Sequence[LoadCurve], isl: int, osl: int) -> LoadCurve | str:
    """The deployment of `curves` at isl/osl from its serving model, or why it cannot be."""
    stated = [c for c in curves if c.key.isl and c.key.osl and (c.points or c.rate_points)]
    if not stated:
        return "no serving model: no measured workload with a stated ISL/OSL"
    measured_here = any(same_workload((c.key.isl, c.key.osl), (isl, osl)) for c in stated)
    model = engine_model(stated, empirical=measured_here)
    if isinstance(model, str):
        return model
    nearest = min(stated, key=lambda c: (_log_distance(c, isl, osl), -len(c.points)))
    moved = _by_ratio(stated, nearest, isl, osl)
    if moved is None:
        loads = _loads(model, stated, isl, osl)
        prediction = model.predict(Query(CONCURRENCY, loads, isl, osl))
        like = nearest.points or nearest.rate_points
        moved = tuple(_point(like, prediction, i) for i in range(len(loads)))
    points = moved
    error, how = _basis(model, stated, nearest, (isl, osl))
    return replace(
        nearest,
        key=replace(nearest.key, isl=isl, osl=osl),
        points=points,
        rate_points=(),
        provenance=ADJUSTED,
        label=f"serving model from {nearest.label_text()}",
        flags=(*nearest.flags, how),
        ceiling_output_tok_s=None,  # an offline ceiling holds at its own workload only
        basis_error=error,
    )


def _by_ratio(
    curves: Sequence[LoadCurve], nearest: LoadCurve, isl: int, osl: int
) -> tuple[CurvePoint, ...] | None:
    """The nearest measured concurrency curve moved to isl/osl by the model's ratio (the
    measurement keeps what the model misses), None when it has no concurrency levels."""
    if not nearest.points or not nearest.key.isl or not nearest.key.osl:
        return None
    moved = adjusted_by_model(curves, nearest, isl, osl)
    return None if isinstance(moved, str) else moved


def _loads(
    model: EngineModel, curves: Sequence[LoadCurve], isl: int, osl: int
) -> tuple[float, ...]:
    """The measured concurrencies, and the concurrencies the measured rates ran at (rounded)."""
    loads = {p.concurrency for c in curves for p in c.points}
    for curve in curves:
        if not curve.rate_points:
            continue
        rates = tuple(p.concurrency for p in curve.rate_points)
        query = Query(RATE, rates, curve.key.isl or isl, curve.key.osl or osl)
        ran = [max(1, round(n)) for n in model.predict(query).running if math.isfinite(n)]
        loads.update(float(n) for n in ran)
        # and the powers of two below the most they ran: inside the range, so a single rate
        # level still gives a curve to fit
        loads.update(float(2**k) for k in range(12) if ran and 2**k < max(ran))
    return tuple(sorted(loads))


def _basis(
    model: EngineModel,
    curves: Sequence[LoadCurve],
    nearest: LoadCurve,
    wanted: tuple[int, int],
) -> tuple[BasisError, str]:
    """The validated error of the reach and the flag that says it."""
    workloads = ", ".join(sorted({f"{c.key.isl}/{c.key.osl}" for c in curves}))
    rates = sum(len(c.rate_points) for c in curves)
    levels = sum(len(c.points) for c in curves)
    calibrated = (
        f"calibrated on {levels} concurrency and {rates} request-rate level(s) of "
        f"{model.calibration.workloads} workload(s): {workloads}; {model.spec.physics}"
    )
    ratio = reach_ratio(nearest, *wanted)
    if same_workload((nearest.key.isl or 0, nearest.key.osl or 0), wanted):
        return RATE_ERROR, (
            f"read by the serving model from request-rate levels at the measured workload, "
            f"validated error {RATE_ERROR.text()} ({calibrated})"
        )
    error = distance_error(ratio)
    validated = "validated" if ratio <= VALIDATED_RATIO else "NOT VALIDATED this far; assumed"
    return error, (
        f"adjusted by the serving model from {nearest.key.isl}/{nearest.key.osl}, {ratio:.1f}x "
        f"away, {validated} error at that distance {error.text()} ({calibrated})"
    )


def _point(like: Sequence[CurvePoint], prediction: EnginePrediction, index: int) -> CurvePoint:
    """A point stating what the measured levels state (unstated stays unstated)."""
    has = {
        field: any(getattr(p, field) is not None for p in like) for field in CurvePoint.__slots__
    }

    def pick(field: str, value: float) -> float | None:
        return value if has.get(field) and math.isfinite(value) else None

    metrics = {"ttft": prediction.ttft_ms, "tpot": prediction.tpot_ms, "e2e": prediction.e2e_ms}
    latencies = {
        attr: pick(attr, getattr(metrics[metric], "mean" if stat == "unstated" else stat)[index])
        for metric, stats in LATENCY_ATTRS.items()
        for stat, attr in stats.items()
    }
    return CurvePoint(
        concurrency=prediction.query.loads[index],
        output_tok_s=_finite(prediction.output_tok_s.mean[index]),
        **latencies,
    )


def _log_distance(curve: LoadCurve, isl: int, osl: int) -> float:
    """|log ISL ratio| + |log OSL ratio| (the measurement plan's "nearest measured" too)."""
    return abs(math.log((curve.key.isl or 1) / isl)) + abs(math.log((curve.key.osl or 1) / osl))


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _ratio(measured: int, wanted: int) -> float:
    return max(measured / wanted, wanted / measured)
