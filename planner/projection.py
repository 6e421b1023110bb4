"""Cross-GPU projection: a curve measured on one GPU scaled by the roofline to another GPU.

The result is a LoadCurve with provenance "projected" and the assumption in its flags; it is an
estimate, never a measurement.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hardware.gpus import GpuSpec, load_gpu_specs
from planner.curves import CurveKey, CurvePoint, LoadCurve, canonical_gpu
from planner.physics import (
    DEFAULT_MEMORY_UTILISATION,
    ESTIMATE_KV_BYTES_PER_ELEMENT,
    Ceilings,
    ceilings,
    curve_ceilings,
)

PROJECTED = "projected"


@dataclass(frozen=True, slots=True)
class _Scaling:
    """Per-GPU ratios source/target: time on target = time on source x ratio."""

    bandwidth_ratio: float
    prefill_ratio: float | None  # None: no peak FLOPS for the precision, TTFT not projected


def project_curve(
    curve: LoadCurve, target_gpu: str, specs: list[GpuSpec] | None = None
) -> LoadCurve | str:
    """The curve as it would run on target_gpu at the same TP, or why it cannot be projected.

    Per point, the share of the decode step that is reading weights and KV cache at full
    bandwidth (roofline time / measured step time) scales with the bandwidth ratio and the rest
    stays; TTFT scales with the peak-FLOPS ratio; output tok/s follows the request time.
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
    target = ceilings(curve.key.model, curve.key.precision, target_spec, source.tp)
    if isinstance(target, str):
        return target.replace("no physics check", "no projection")
    if target.max_streams(1) == 0:
        return (
            f"no projection: {target.weight_bytes / 1e9:.1f} GB of weights do not fit on "
            f"{target.tp} x {target.gpu}"
        )
    return _projected(curve, source, target)


def _projected(curve: LoadCurve, source: Ceilings, target: Ceilings) -> LoadCurve:
    scaling = _Scaling(
        bandwidth_ratio=source.mem_bw_bytes_s / target.mem_bw_bytes_s,
        prefill_ratio=(
            source.peak_flops / target.peak_flops
            if source.peak_flops is not None and target.peak_flops is not None
            else None
        ),
    )
    key = curve.key
    points = tuple(_project_point(point, key, source, scaling) for point in curve.points)
    return LoadCurve(
        key=replace(key, gpu=target.gpu),
        points=points,
        run_id=None,
        provenance=PROJECTED,
        label=f"projected from {curve.label_text()}",
        cold_start_s=None,
        engine_build_s=None,
        gpus_per_replica=curve.gpus_per_replica,
        flags=(
            *curve.flags,
            _assumption(source, target, scaling),
            *_memory_flags(curve, source, target),
        ),
    )


def _project_point(
    point: CurvePoint, key: CurveKey, source: Ceilings, scaling: _Scaling
) -> CurvePoint:
    decode = _decode_factor(point, key, source, scaling.bandwidth_ratio)
    prefill = scaling.prefill_ratio
    output = point.output_tok_s
    request = _request_factor(point, key.osl, decode, prefill)
    if output is not None:
        output = output / (request if request is not None else decode)
    return CurvePoint(
        concurrency=point.concurrency,
        output_tok_s=output,
        p50_ttft_ms=_times(point.p50_ttft_ms, prefill),
        p99_ttft_ms=_times(point.p99_ttft_ms, prefill),
        ttft_ms=_times(point.ttft_ms, prefill),
        p50_tpot_ms=_times(point.p50_tpot_ms, decode),
        p99_tpot_ms=_times(point.p99_tpot_ms, decode),
        tpot_ms=_times(point.tpot_ms, decode),
        p99_e2e_ms=_times(point.p99_e2e_ms, request if request is not None else decode),
    )


def _decode_factor(
    point: CurvePoint, key: CurveKey, source: Ceilings, bandwidth_ratio: float
) -> float:
    """How much longer (<1: shorter) a decode step takes on the target.

    The memory share is the roofline time to read the weights and every stream's KV cache at
    its average context (isl + osl/2, 16-bit) over the measured step time, capped at 1.
    """
    step_ms = _step_ms(point)
    if step_ms is None:
        return bandwidth_ratio
    context = (key.isl or 0) + (key.osl or 0) / 2
    kv_bytes = source.kv_bytes_per_token_per_byte * ESTIMATE_KV_BYTES_PER_ELEMENT * context
    read_bytes = source.decode_read_bytes + point.concurrency * kv_bytes
    memory_share = min(1.0, read_bytes / source.mem_bw_bytes_s * 1000.0 / step_ms)
    return 1.0 - memory_share + memory_share * bandwidth_ratio


def _step_ms(point: CurvePoint) -> float | None:
    """Measured decode step time: the median (or unlabelled) TPOT, else c / output tok/s."""
    tpot = point.p50_tpot_ms if point.p50_tpot_ms is not None else point.tpot_ms
    if tpot is not None and tpot > 0:
        return tpot
    if point.output_tok_s:
        return point.concurrency / point.output_tok_s * 1000.0
    return None


def _request_factor(
    point: CurvePoint, osl: int | None, decode: float, prefill: float | None
) -> float | None:
    """Target/source request time, TTFT + (osl - 1) x TPOT; None when a part is unknown."""
    ttft = point.p50_ttft_ms if point.p50_ttft_ms is not None else point.ttft_ms
    tpot = point.p50_tpot_ms if point.p50_tpot_ms is not None else point.tpot_ms
    if ttft is None or tpot is None or osl is None or prefill is None:
        return None
    source_ms = ttft + (osl - 1) * tpot
    if source_ms <= 0:
        return None
    return (ttft * prefill + (osl - 1) * tpot * decode) / source_ms


def _times(value: float | None, factor: float | None) -> float | None:
    return None if value is None or factor is None else value * factor


def _assumption(source: Ceilings, target: Ceilings, scaling: _Scaling) -> str:
    ttft = (
        f"TTFT x {scaling.prefill_ratio:.3g} (peak FLOPS ratio)"
        if scaling.prefill_ratio is not None
        else "TTFT not projected (no peak FLOPS for the precision)"
    )
    return (
        f"PROJECTED from {source.tp} x {source.gpu} to {target.tp} x {target.gpu}, not measured: "
        f"the memory-bound share of each decode step scales with the bandwidth ratio "
        f"{1 / scaling.bandwidth_ratio:.3g}x, the rest unchanged; {ttft}; output tok/s follows "
        "the request time; queueing from different KV-cache capacity is not modelled"
    )


def _memory_flags(curve: LoadCurve, source: Ceilings, target: Ceilings) -> tuple[str, ...]:
    isl, osl = curve.key.isl, curve.key.osl
    if not isl or not osl:
        return ()
    fits_source, fits_target = source.max_streams(isl + osl), target.max_streams(isl + osl)
    beyond = [p.concurrency for p in curve.points if p.concurrency > min(fits_source, fits_target)]
    if not beyond:
        return ()
    listed = ", ".join(f"{c:g}" for c in beyond)
    return (
        f"at concurrency {listed} the KV cache exceeds the estimated capacity ({fits_source} "
        f"streams on {source.gpu}, {fits_target} on {target.gpu}, "
        f"{DEFAULT_MEMORY_UTILISATION:.0%} of memory): projected TTFT there is least reliable",
    )
