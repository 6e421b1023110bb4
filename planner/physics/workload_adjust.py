"""Workload adjustment: a curve measured at one ISL/OSL re-estimated at another from the physics.

TTFT scales with prefill work, TPOT with the decode step (bytes read plus interleaved prefill);
the result is a LoadCurve with provenance "adjusted" and its factors in the flags: an estimate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from planner.curves.load import LATENCY_ATTRS, CurvePoint, LoadCurve, scaled_ceiling
from planner.curves.workload_groups import same_workload
from planner.physics.roofline import ESTIMATE_KV_BYTES_PER_ELEMENT, Ceilings

ADJUSTED = "adjusted"
# ISL and OSL each within this factor of the scenario's. bench/bench_workload_adjust.py on the
# silicon sample: at 2x, adjusted TPOT MAPE 7-16% per engine; at 4x it reaches 26%, TTFT 98%.
MAX_ADJUST_RATIO = 2.0
# Without model facts or latencies nothing can be adjusted: only this close is used as is.
MAX_UNADJUSTED_RATIO = 1.1
# Just past the limit (issue 15: 4000/500 against 8192/1024 is 2.048x) the nearest adjustment is
# still made and shown, marked beyond the validated range, rather than refused outright.
NEAR_MISS_RATIO = 2.5
THROUGHPUT_ONLY = "from output tok/s alone"


@dataclass(frozen=True, slots=True)
class WorkloadMatch:
    """How a curve's ISL/OSL serves the scenario's; `refused` says why it cannot, else None."""

    rank: int  # 0 same (exact or within rounding), 1 not stated, 2 near (as is), 3 adjusted
    distance: float  # cost-share weighted |log ratio| of ISL and OSL; 0 when exact or unknown
    flag: str | None
    refused: str | None = None

    @property
    def needs_adjustment(self) -> bool:
        """Whether the curve must go through adjust_curve before use."""
        return self.rank == 3


def match_workload(curve: LoadCurve, isl: int, osl: int, ceil: Ceilings | str) -> WorkloadMatch:
    """Whether and how a curve can stand for ISL/OSL isl/osl (ceil: its ceilings, or why none)."""
    measured_isl, measured_osl = curve.key.isl, curve.key.osl
    if measured_isl is None or measured_osl is None:
        return WorkloadMatch(1, 0.0, "workload not stated by source")
    distance = workload_distance(curve, isl, osl)
    if same_workload((measured_isl, measured_osl), (isl, osl)):
        return WorkloadMatch(0, distance, None)  # exact (distance 0), or tokenisation rounding
    ratio = max(_ratio(measured_isl, isl), _ratio(measured_osl, osl))
    where = f"measured at ISL/OSL {measured_isl}/{measured_osl}, scenario {isl}/{osl}"
    if ratio <= MAX_UNADJUSTED_RATIO:
        return WorkloadMatch(
            2, distance, f"{where}: within {MAX_UNADJUSTED_RATIO:g}x, not adjusted"
        )
    refused = _refusal(curve, ratio, ceil)
    if refused is not None:
        return WorkloadMatch(3, distance, None, f"{where}: {refused}")
    if ratio > MAX_ADJUST_RATIO:
        return WorkloadMatch(3, distance, _near_miss_flag(where, ratio))
    return WorkloadMatch(3, distance, None)


def _refusal(curve: LoadCurve, ratio: float, ceil: Ceilings | str) -> str | None:
    """Why a curve ratio x away cannot be adjusted; None when it can."""
    if ratio > NEAR_MISS_RATIO:
        return f"more than {NEAR_MISS_RATIO:g}x away, too far to adjust"
    why_not = _why_not_adjustable(curve, ceil)
    if why_not is not None:
        return f"more than {MAX_UNADJUSTED_RATIO:g}x off and {why_not}"
    return None


def _near_miss_flag(where: str, ratio: float) -> str:
    return (
        f"BEYOND THE VALIDATED RANGE: {where} is {ratio:.3g}x away, past the {MAX_ADJUST_RATIO:g}x "
        "the adjustment was validated for (at 4x TPOT errs 26%, "
        "TTFT 98%); shown as the nearest adjustment would give it, not a validated estimate"
    )


def workload_distance(curve: LoadCurve, isl: int, osl: int) -> float:
    """|log ISL ratio| and |log OSL ratio| weighted by prefill's and decode's share of a request."""
    measured_isl, measured_osl = curve.key.isl, curve.key.osl
    if measured_isl is None or measured_osl is None:
        return 0.0
    share = _prefill_share(curve)
    return share * abs(math.log(isl / measured_isl)) + (1.0 - share) * abs(
        math.log(osl / measured_osl)
    )


def adjust_curve(curve: LoadCurve, isl: int, osl: int, ceil: Ceilings | str) -> LoadCurve | str:
    """The curve re-estimated at ISL/OSL isl/osl, point by point, or why it cannot be."""
    why_not = _why_not_adjustable(curve, ceil)
    if why_not is not None or isinstance(ceil, str):
        return f"no workload adjustment: {why_not}"
    source_isl, source_osl = curve.key.isl, curve.key.osl
    if source_isl is None or source_osl is None:
        return "no workload adjustment: the curve's ISL/OSL is not stated"
    prefill = _prefill_flops(ceil, isl) / _prefill_flops(ceil, source_isl)
    if _lacks_latency(curve):
        return _adjust_throughput_only(curve, (isl, osl), ceil)
    points = []
    decode_factors = []
    for point in curve.points:
        decode = _step_s(ceil, point.concurrency, isl, osl) / _step_s(
            ceil, point.concurrency, source_isl, source_osl
        )
        decode_factors.append(decode)
        points.append(_adjust_point(point, (source_osl, osl), prefill, decode))
    return replace(
        curve,
        key=replace(curve.key, isl=isl, osl=osl),
        points=tuple(points),
        ceiling_output_tok_s=scaled_ceiling(curve.ceiling_output_tok_s, curve.points, points),
        provenance=ADJUSTED,
        label=f"adjusted from {curve.label_text()}",
        flags=(*curve.flags, _flag(curve, isl, osl, prefill, decode_factors)),
    )


def _adjust_point(
    point: CurvePoint, osls: tuple[int, int], prefill: float, decode: float
) -> CurvePoint:
    """TPOT x decode; TTFT = one decode step plus the rest scaled by prefill; tok/s from both."""
    source_osl, osl = osls
    tpot = _first(point.p50_tpot_ms, point.tpot_ms, point.p99_tpot_ms)

    def ttft(value: float | None) -> float | None:
        if value is None or tpot is None:
            return None
        return tpot * decode + max(value - tpot, 0.0) * prefill

    def times(value: float | None) -> float | None:
        return None if value is None else value * decode

    new_ttft = ttft(_first(point.p50_ttft_ms, point.ttft_ms, point.p99_ttft_ms))
    new_tpot = times(tpot)
    output, e2e_ratio = None, None
    old_ttft = _first(point.p50_ttft_ms, point.ttft_ms, point.p99_ttft_ms)
    if new_ttft is not None and new_tpot is not None and old_ttft is not None and tpot:
        request_ms = new_ttft + (osl - 1) * new_tpot
        output = point.concurrency * osl / request_ms * 1000.0
        e2e_ratio = request_ms / (old_ttft + (source_osl - 1) * tpot)

    def e2e(value: float | None) -> float | None:
        return None if value is None or e2e_ratio is None else value * e2e_ratio

    how = {"ttft": ttft, "tpot": times, "e2e": e2e}
    latencies = {
        attr: how[metric](getattr(point, attr))
        for metric, stats in LATENCY_ATTRS.items()
        for attr in stats.values()
    }
    return CurvePoint(concurrency=point.concurrency, output_tok_s=output, **latencies)


def _adjust_throughput_only(
    curve: LoadCurve, workload: tuple[int, int], ceil: Ceilings
) -> LoadCurve:
    """Output tok/s scaled by the roofline request time (prefill at peak FLOPS plus OSL decode
    steps) at each concurrency; no latency is invented. Labelled as resting on throughput alone."""
    isl, osl = workload
    source = (curve.key.isl or isl, curve.key.osl or osl)
    points = []
    factors = []
    for point in curve.points:
        ratio = _request_s(ceil, point.concurrency, isl, osl) / _request_s(
            ceil, point.concurrency, *source
        )
        factors.append(ratio)
        output = point.output_tok_s
        if output is not None:
            output = output * (osl / source[1]) / ratio
        points.append(CurvePoint(concurrency=point.concurrency, output_tok_s=output))
    flag = (
        f"ADJUSTED {THROUGHPUT_ONLY} from ISL/OSL {source[0]}/{source[1]} to {isl}/{osl}, an "
        f"estimate (not measured): no TTFT or TPOT to split prefill from decode, so output tok/s "
        f"is scaled by the roofline request time (x {min(factors):.3g}-{max(factors):.3g}) and "
        "no latency is estimated"
    )
    new_points = tuple(points)
    return replace(
        curve,
        key=replace(curve.key, isl=isl, osl=osl),
        points=new_points,
        ceiling_output_tok_s=scaled_ceiling(curve.ceiling_output_tok_s, curve.points, new_points),
        provenance=ADJUSTED,
        label=f"adjusted ({THROUGHPUT_ONLY}) from {curve.label_text()}",
        flags=(*curve.flags, flag),
    )


def _request_s(ceil: Ceilings, concurrency: float, isl: int, osl: int) -> float:
    """Roofline time of one request: its prefill at peak FLOPS and OSL decode steps."""
    peak = ceil.peak_flops or math.inf
    return _prefill_flops(ceil, isl) / peak + osl * _step_s(ceil, concurrency, isl, osl)


def _lacks_latency(curve: LoadCurve) -> bool:
    return any(
        _first(p.p50_ttft_ms, p.ttft_ms, p.p99_ttft_ms) is None
        or _first(p.p50_tpot_ms, p.tpot_ms, p.p99_tpot_ms) is None
        for p in curve.points
    )


def _prefill_flops(ceil: Ceilings, isl: int) -> float:
    """Matrix-multiply FLOPs of one prompt: 2 x params x ISL."""
    return 2.0 * ceil.prefill_params * isl


def _step_s(ceil: Ceilings, concurrency: float, isl: int, osl: int) -> float:
    """Roofline decode step: weights + every stream's KV cache at mean context, read once, plus
    the prefill of the c/osl requests that start per step (engines interleave it)."""
    context = isl + osl / 2
    kv_bytes = ceil.kv_bytes(context, ESTIMATE_KV_BYTES_PER_ELEMENT)
    read_s = (ceil.decode_read_bytes + concurrency * kv_bytes) / ceil.mem_bw_bytes_s
    peak = ceil.peak_flops or math.inf
    return read_s + concurrency / osl * _prefill_flops(ceil, isl) / peak


def _why_not_adjustable(curve: LoadCurve, ceil: Ceilings | str) -> str | None:
    if isinstance(ceil, str):
        return ceil.replace("no physics check: ", "")
    if ceil.peak_flops is None:
        return f"no peak FLOPS for {ceil.precision} on {ceil.gpu} to scale prefill"
    if _lacks_latency(curve) and any(p.output_tok_s is None for p in curve.points):
        return "TTFT and TPOT (or output tok/s) are needed at every level"
    return None


def _prefill_share(curve: LoadCurve) -> float:
    """TTFT's share of one request at the lowest concurrency; 0.5 when not measured."""
    osl = curve.key.osl or 1
    for point in curve.points:
        ttft = _first(point.p50_ttft_ms, point.ttft_ms, point.p99_ttft_ms)
        tpot = _first(point.p50_tpot_ms, point.tpot_ms, point.p99_tpot_ms)
        if ttft is not None and tpot is not None and ttft + (osl - 1) * tpot > 0:
            return ttft / (ttft + (osl - 1) * tpot)
    return 0.5


def _flag(curve: LoadCurve, isl: int, osl: int, prefill: float, decode: list[float]) -> str:
    return (
        f"ADJUSTED from ISL/OSL {curve.key.isl}/{curve.key.osl} to {isl}/{osl}, an estimate "
        f"(not measured): TTFT beyond one decode step x {prefill:.3g} (prefill FLOPs), TPOT x "
        f"{min(decode):.3g}-{max(decode):.3g} (decode step: weights, KV cache at mean context, "
        "interleaved prefill), output tok/s from both; validated within "
        f"{MAX_ADJUST_RATIO:g}x on the silicon sample"
    )


def _first(*values: float | None) -> float | None:
    return next((value for value in values if value is not None), None)


def _ratio(measured: int, wanted: int) -> float:
    return max(measured / wanted, wanted / measured)
