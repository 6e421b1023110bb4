"""Cross-GPU projection: a curve measured on one GPU scaled by the roofline to another GPU.

The result is a LoadCurve with provenance "projected" and the assumption in its flags; it is an
estimate, never a measurement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from hardware.gpus import GpuSpec, load_gpu_specs
from planner.curves.load import (
    LATENCY_ATTRS,
    BasisError,
    CurveKey,
    CurvePoint,
    LoadCurve,
    scaled_ceiling,
)
from planner.curves.names import canonical_gpu
from planner.physics.memory import KvCapacity, mean_context_tokens
from planner.physics.roofline import Ceilings, ceilings, curve_ceilings, workload_capacity

PROJECTED = "projected"
# Validated MAPE % of this projection across GPU generations (Hopper <-> Blackwell) or of a
# mixture-of-experts model (bench/bench_generations.py, per-point scaling, level-weighted):
# dev 15.6 / 52.8 / 19.4, held-out DeepSeek-V3 26.9 / 181.9 / 27.5 (output tok/s, TTFT, TPOT);
# the larger of each. Same-generation dense projection keeps bench_projection.py's error.
CROSS_GENERATION_ERROR = BasisError(26.9, 181.9, 27.5)
VALIDATED_ARCHITECTURE = "Hopper"


@dataclass(frozen=True, slots=True)
class _Scaling:
    """Per-GPU ratios source/target: time on target = time on source x ratio."""

    bandwidth_ratio: float
    prefill_ratio: float | None  # None: no peak FLOPS for the precision, TTFT not projected


@dataclass(frozen=True, slots=True)
class _Memory:
    """Streams that fit on each side and the source's unqueued service times by batch."""

    source: KvCapacity
    target_streams: int
    batches: tuple[float, ...]  # concurrencies measured within the source's capacity
    step_ms: tuple[float, ...]
    ttft_ms: tuple[float, ...]


def project_curve(
    curve: LoadCurve, target_gpu: str, specs: list[GpuSpec] | None = None
) -> LoadCurve | str:
    """The curve as it would run on target_gpu at the same TP, or why it cannot be projected.

    Per point, the share of the decode step that is reading weights and KV cache at full
    bandwidth (roofline time / measured step time) scales with the bandwidth ratio and the rest
    stays; TTFT scales with the peak-FLOPS ratio; output tok/s follows the request time. Where
    the KV cache holds fewer streams than the concurrency (on either GPU), the batch is the
    streams that fit: throughput stops growing and TTFT includes the wait for a slot.
    """
    spec_list = specs if specs is not None else load_gpu_specs()
    source = curve_ceilings(curve, spec_list)
    if isinstance(source, str):
        return source.replace("no physics check", "no projection")
    target_spec = {spec.gpu: spec for spec in spec_list}.get(canonical_gpu(target_gpu))
    if target_spec is None:
        return f"no projection: no specs for GPU {target_gpu!r}"
    if target_spec.gpu == source.gpu:
        return f"no projection: the curve was measured on {source.gpu} already"
    target = ceilings(
        curve.key.model, curve.key.precision, target_spec, source.tp, engine=source.engine
    )
    if isinstance(target, str):
        return target.replace("no physics check", "no projection")
    target = replace(target, kv=source.kv)  # the same deployment: the same KV dtype
    if target.kv_budget_bytes <= 0:
        return (
            f"no projection: {target.weight_bytes / 1e9:.1f} GB of weights leave no room for a "
            f"KV cache on {target.tp} x {target.gpu}"
        )
    source_spec = next((s for s in spec_list if s.gpu == source.gpu), None)
    sixteen_bit = (
        source_spec.bf16_dense_tflops / target_spec.bf16_dense_tflops if source_spec else None
    )
    return _labelled(_projected(curve, source, target, sixteen_bit), source, target_spec, spec_list)


def _labelled(
    projected: LoadCurve, source: Ceilings, target: GpuSpec, specs: list[GpuSpec]
) -> LoadCurve:
    """A projection across GPU generations or of an MoE model, with that validated error."""
    source_spec = next((s for s in specs if s.gpu == source.gpu), None)
    moe = source.facts is not None and source.facts.is_moe
    generation = source_spec.architecture if source_spec is not None else ""
    across = not generation or generation != target.architecture
    # bench_projection.py validated the small error between Hopper GPUs only: B200 <-> GB200
    # (another system around the same chip) has no such check, so it takes the larger one.
    validated = generation == target.architecture == VALIDATED_ARCHITECTURE
    if validated and not moe:
        return projected
    why = (
        "across GPU generations"
        if across
        else "of a mixture-of-experts model"
        if moe
        else f"between {generation} GPUs (validated between Hopper GPUs only)"
    )
    error = CROSS_GENERATION_ERROR  # planner.engine.project states the measured one
    flag = (
        f"projection {why}: validated error {error.text()} "
        "(measured on the validation's dev split, planner.engine.reach_errors)"
    )
    return replace(projected, basis_error=error, flags=(*projected.flags, flag))


def _projected(
    curve: LoadCurve, source: Ceilings, target: Ceilings, sixteen_bit: float | None = None
) -> LoadCurve:
    """`sixteen_bit`: the GPUs' BF16 peak ratio, for a precision one of them has no peak for
    (FP4 on Hopper: its prefill math ran at 16 bits, and the target is assumed to run it so)."""
    at_precision = (
        source.peak_flops / target.peak_flops
        if source.peak_flops is not None and target.peak_flops is not None
        else None
    )
    scaling = _Scaling(
        bandwidth_ratio=source.mem_bw_bytes_s / target.mem_bw_bytes_s,
        prefill_ratio=at_precision if at_precision is not None else sixteen_bit,
    )
    key = curve.key
    memory = _memory(curve, source, target)
    points = tuple(
        _project_point(point, key, source, scaling)
        if memory is None or point.concurrency <= min(memory.source.streams, memory.target_streams)
        else _project_limited(point, key, (source, scaling), memory)
        for point in curve.points
    )
    return LoadCurve(
        key=replace(key, gpu=target.gpu),
        points=points,
        ceiling_output_tok_s=scaled_ceiling(curve.ceiling_output_tok_s, curve.points, points),
        run_id=None,
        provenance=PROJECTED,
        label=f"projected from {curve.label_text()}",
        cold_start_s=None,
        engine_build_s=None,
        gpus_per_replica=curve.gpus_per_replica,
        kv_cache_dtype=curve.kv_cache_dtype,
        flags=(
            *curve.flags,
            _assumption(source, target, scaling),
            *_memory_flags(curve, source, target, memory),
        ),
    )


def _memory(curve: LoadCurve, source: Ceilings, target: Ceilings) -> _Memory | None:
    """Capacities on both GPUs (the source's reconciled with its measurements, the target's
    corrected by the same factor when the source's estimate proved low); None without ISL/OSL."""
    isl, osl = curve.key.isl, curve.key.osl
    if not isl or not osl:
        return None
    capacity = workload_capacity(source, curve, isl, osl)  # the engine's report beats estimates
    target_streams = target.streams_for(isl, osl)
    if capacity.estimate_low > 0 and capacity.streams > capacity.estimate_low:
        target_streams = math.floor(target_streams * capacity.streams / capacity.estimate_low)
    within = [p for p in curve.points if p.concurrency <= capacity.streams]
    steps = [
        (p.concurrency, _step_ms(p), _median(p.p50_ttft_ms, p.ttft_ms, p.mean_ttft_ms))
        for p in within
    ]
    usable = [(c, step, ttft) for c, step, ttft in steps if step is not None]
    return _Memory(
        source=capacity,
        target_streams=max(target_streams, 1),
        batches=tuple(c for c, _, _ in usable),
        step_ms=tuple(step for _, step, _ in usable if step is not None),
        ttft_ms=tuple(ttft if ttft is not None else math.nan for _, _, ttft in usable),
    )


def _project_point(
    point: CurvePoint, key: CurveKey, source: Ceilings, scaling: _Scaling
) -> CurvePoint:
    decode = _decode_factor(point.concurrency, _step_ms(point), key, source, scaling)
    prefill = scaling.prefill_ratio
    output = point.output_tok_s
    request = _request_factor(point, key.osl, decode, prefill)
    if output is not None:
        output = output / (request if request is not None else decode)
    return _scaled(point, output, prefill, decode, request)


def _scaled(
    point: CurvePoint,
    output: float | None,
    ttft: float | None,
    tpot: float | None,
    e2e: float | None,
) -> CurvePoint:
    """The point with output tok/s replaced and each latency statistic times its factor."""
    factors = {"ttft": ttft, "tpot": tpot, "e2e": e2e if e2e is not None else tpot}
    scaled = {
        attr: _times(getattr(point, attr), factors[metric])
        for metric, stats in LATENCY_ATTRS.items()
        for attr in stats.values()
    }
    return CurvePoint(concurrency=point.concurrency, output_tok_s=output, **scaled)


def _project_limited(
    point: CurvePoint, key: CurveKey, scaled: tuple[Ceilings, _Scaling], memory: _Memory
) -> CurvePoint:
    """A point whose concurrency exceeds the streams that fit on the source or the target.

    The target runs min(c, its streams) together, at the source's unqueued step time and TTFT
    for that batch (measured, interpolated, or extended along the measured slope); the rest
    wait for a slot, (c / streams - 1) request times in a closed loop.
    """
    source, scaling = scaled
    osl = key.osl or 1
    step_ms, ttft_ms = (
        _step_ms(point),
        _median(point.p50_ttft_ms, point.ttft_ms, point.mean_ttft_ms, point.p99_ttft_ms),
    )
    if step_ms is None or not memory.batches or scaling.prefill_ratio is None:
        return _project_point(point, key, source, scaling)
    batch = min(point.concurrency, float(memory.target_streams))
    source_step = _service(memory.batches, memory.step_ms, batch, _kv_step_slope(key, source))
    decode = _decode_factor(batch, source_step, key, source, scaling)
    step_t = source_step * decode
    service_ttft = _service_ttft(memory, batch, ttft_ms) * scaling.prefill_ratio
    request_t = service_ttft + (osl - 1) * step_t
    wait = max(point.concurrency / memory.target_streams - 1.0, 0.0) * request_t
    ttft_t = service_ttft + wait
    output = None
    if point.output_tok_s is not None and ttft_ms is not None:
        request_s = ttft_ms + (osl - 1) * step_ms
        output = point.output_tok_s * request_s / (ttft_t + (osl - 1) * step_t)
    ttft_factor = ttft_t / ttft_ms if ttft_ms else None
    e2e_factor = (
        (ttft_t + (osl - 1) * step_t) / (ttft_ms + (osl - 1) * step_ms) if ttft_ms else None
    )
    return _scaled(point, output, ttft_factor, step_t / step_ms, e2e_factor)


def _service(
    batches: tuple[float, ...], values: tuple[float, ...], batch: float, slope: float
) -> float:
    """A service time at a batch: interpolated between unqueued measurements, extended past
    the last along the last measured slope (one measurement: along `slope`)."""
    xs, ys = np.asarray(batches), np.asarray(values)
    if batch <= xs[-1]:
        return float(np.interp(batch, xs, ys))
    if len(xs) >= 2 and xs[-1] > xs[-2]:
        slope = max((ys[-1] - ys[-2]) / (xs[-1] - xs[-2]), 0.0)
    return float(ys[-1] + slope * (batch - xs[-1]))


def _service_ttft(memory: _Memory, batch: float, fallback: float | None) -> float:
    known = [
        (c, t) for c, t in zip(memory.batches, memory.ttft_ms, strict=True) if not math.isnan(t)
    ]
    if not known:
        return fallback or 0.0
    return _service(tuple(c for c, _ in known), tuple(t for _, t in known), batch, 0.0)


def _kv_step_slope(key: CurveKey, source: Ceilings) -> float:
    """Extra decode-step ms per added stream from reading its KV cache at full bandwidth."""
    context = mean_context_tokens(key.isl or 0, key.osl or 0)
    kv_bytes = source.kv_bytes(context, source.kv.most_bytes)
    return kv_bytes / source.mem_bw_bytes_s * 1000.0


def _decode_factor(
    batch: float, step_ms: float | None, key: CurveKey, source: Ceilings, scaling: _Scaling
) -> float:
    """How much longer (<1: shorter) a decode step of `batch` streams takes on the target.

    The memory share is the roofline time to read the weights and every stream's KV cache at
    its mean context (isl + osl/2, at the deployment's KV dtype) over the measured step time,
    capped at 1.
    """
    if step_ms is None:
        return scaling.bandwidth_ratio
    context = mean_context_tokens(key.isl or 0, key.osl or 0)
    kv_bytes = source.kv_bytes(context, source.kv.most_bytes)
    read_bytes = source.decode_read_bytes + batch * kv_bytes
    memory_share = min(1.0, read_bytes / source.mem_bw_bytes_s * 1000.0 / step_ms)
    return 1.0 - memory_share + memory_share * scaling.bandwidth_ratio


def _median(*values: float | None) -> float | None:
    return next((value for value in values if value is not None), None)


def _step_ms(point: CurvePoint) -> float | None:
    """Measured decode step time: the median (or unlabelled, or mean) TPOT, else c / output
    tok/s."""
    tpot = _median(point.p50_tpot_ms, point.tpot_ms, point.mean_tpot_ms)
    if tpot is not None and tpot > 0:
        return tpot
    if point.output_tok_s:
        return point.concurrency / point.output_tok_s * 1000.0
    return None


def _request_factor(
    point: CurvePoint, osl: int | None, decode: float, prefill: float | None
) -> float | None:
    """Target/source request time, TTFT + (osl - 1) x TPOT; None when a part is unknown."""
    ttft = _median(point.p50_ttft_ms, point.ttft_ms, point.mean_ttft_ms)
    tpot = _median(point.p50_tpot_ms, point.tpot_ms, point.mean_tpot_ms)
    if ttft is None or tpot is None or osl is None or prefill is None:
        return None
    source_ms = ttft + (osl - 1) * tpot
    if source_ms <= 0:
        return None
    return (ttft * prefill + (osl - 1) * tpot * decode) / source_ms


def _times(value: float | None, factor: float | None) -> float | None:
    return None if value is None or factor is None else value * factor


def _assumption(source: Ceilings, target: Ceilings, scaling: _Scaling) -> str:
    both = source.peak_flops is not None and target.peak_flops is not None
    peaks = "peak FLOPS ratio" if both else "BF16 peak ratio: no peak at the precision on both"
    ttft = (
        f"TTFT x {scaling.prefill_ratio:.3g} ({peaks})"
        if scaling.prefill_ratio is not None
        else "TTFT not projected (no peak FLOPS for the precision)"
    )
    return (
        f"PROJECTED from {source.tp} x {source.gpu} to {target.tp} x {target.gpu}, not measured: "
        f"the memory-bound share of each decode step scales with the bandwidth ratio "
        f"{1 / scaling.bandwidth_ratio:.3g}x, the rest unchanged; {ttft}; output tok/s follows "
        "the request time"
    )


def _memory_flags(
    curve: LoadCurve, source: Ceilings, target: Ceilings, memory: _Memory | None
) -> tuple[str, ...]:
    if memory is None:
        return ("KV-cache capacity not modelled: ISL/OSL not stated",)
    capacity = memory.source
    flags = [
        f"KV cache holds about {capacity.streams} streams on {source.gpu} and "
        f"{memory.target_streams} on {target.gpu} at this workload ({capacity.basis}); past "
        "that the projected throughput stops growing and TTFT includes the wait for a slot"
    ]
    if capacity.contradiction is not None:
        flags.append(capacity.contradiction)
    beyond = [p.concurrency for p in curve.points if p.concurrency > memory.target_streams]
    if beyond:
        listed = ", ".join(f"{c:g}" for c in beyond)
        flags.append(
            f"at concurrency {listed} the projected curve is memory-limited on {target.gpu}: "
            "projected TTFT there is least reliable"
        )
    return tuple(flags)
