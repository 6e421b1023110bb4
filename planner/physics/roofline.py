"""Roofline checks: physical ceilings from GPU specs and model facts; measured curves against them.

Bounds (no measurement can beat them) are kept apart from estimates (the memory fit): a point
above a bound is flagged with the numbers; an estimate only informs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from hardware.gpus import GpuSpec, load_gpu_specs
from planner.curves.kv_report import EngineKvReport
from planner.curves.load import CurvePoint, LoadCurve
from planner.curves.names import canonical_engine, canonical_gpu
from planner.physics.catalog import resolve
from planner.physics.memory import (
    ENGINE_MEMORY_FRACTION,
    KvCapacity,
    KvDtype,
    estimate_streams,
    kv_budget_bytes,
    kv_capacity,
    kv_dtype,
)
from planner.physics.models import (
    ModelFacts,
    bytes_per_weight,
    canonical_precision,
    known_precisions,
)

DEFAULT_MEMORY_UTILISATION = ENGINE_MEMORY_FRACTION
# fp8 is the smallest KV-cache format engines commonly use, so reads at 1 byte keep the bound valid.
BOUND_KV_BYTES_PER_ELEMENT = 1.0
# The 16-bit KV cache of an engine told nothing else (vLLM --kv-cache-dtype auto); the dtype a
# deployment really used is Ceilings.kv (planner.physics.memory.kv_dtype).
ESTIMATE_KV_BYTES_PER_ELEMENT = 2.0
ASSUMED_16BIT_KV = KvDtype((ESTIMATE_KV_BYTES_PER_ELEMENT,), "16-bit KV cache (assumed)")


@dataclass(frozen=True, slots=True)
class Ceilings:
    """Physical limits of one model at one precision on TP GPUs of one kind (one replica)."""

    model: str
    precision: str
    gpu: str
    tp: int  # GPUs in the replica (TP x attention DP)
    weight_bytes: float  # every weight, as stored in GPU memory (attention DP keeps copies)
    decode_read_bytes: float  # weights one decode token must read: the always-read and top-k
    prefill_params: int  # active parameters in the per-token matrix multiplies
    kv_bytes_per_token_per_byte: float  # KV-cache elements per token (x bytes per element)
    mem_bw_bytes_s: float  # all the replica's GPUs together
    peak_flops: float | None  # all GPUs, dense, at the precision; None: spec has no such peak
    memory_bytes: float  # all the replica's GPUs together, driver-reported capacity
    engine: str | None = None  # whose memory rule sizes the KV cache
    kv: KvDtype = ASSUMED_16BIT_KV
    facts: ModelFacts | None = None
    always_read_bytes: float = 0.0  # one copy of what every step reads whatever the routing
    expert_bytes: float = 0.0  # every routed expert
    attention_dp: int = 1  # attention data-parallel ranks (each with its own copy)

    def kv_bytes(self, context: float, bytes_per_element: float) -> float:
        """Cache bytes one sequence holds at `context` tokens (sliding windows capped, fixed
        linear-attention/SSM state added)."""
        if self.facts is None:
            return float(self.kv_bytes_per_token_per_byte * bytes_per_element * context)
        elements = self.facts.kv_elements(context) * bytes_per_element
        return float(elements + self.facts.state_bytes_per_seq)

    @property
    def kv_budget_bytes(self) -> float:
        """Bytes for the KV cache under the engine's memory rule (negative: weights do not fit)."""
        return kv_budget_bytes(self.engine, self.memory_bytes, self.weight_bytes)

    def streams_for(self, isl: int, osl: int) -> int:
        """Estimate: streams of isl + osl whose KV cache fits (at their mean context isl + osl/2,
        or all of it where the engine reserves it), at the deployment's KV dtype (its larger
        candidate when unknown)."""
        return estimate_streams(self, isl, osl)[0]

    def capacity(
        self,
        isl: int,
        osl: int,
        points: tuple[CurvePoint, ...] = (),
        report: EngineKvReport | None = None,
    ) -> KvCapacity:
        """The KV capacity for a workload: the engine's own report (when given) or the estimate,
        reconciled with measured points of it."""
        return kv_capacity(self, isl, osl, points, report)

    @property
    def decode_tok_s_single_stream(self) -> float:
        """Bound: one stream's decode speed, TP x bandwidth / weight bytes read per token."""
        return self.mem_bw_bytes_s / self.decode_read_bytes

    def min_prefill_ms(self, isl: int) -> float | None:
        """Bound: fastest possible prefill of isl tokens, 2 x params x isl / (TP x peak FLOPS)."""
        if self.peak_flops is None:
            return None
        return 2.0 * self.prefill_params * isl / self.peak_flops * 1000.0

    def max_output_tok_s(self, concurrency: float, isl: int | None, osl: int | None) -> float:
        """Bound: aggregate output tok/s at a concurrency, the lower of memory and compute limits.

        Memory: each decode step reads the weights once plus every stream's KV cache (at least
        isl tokens each, at 1 byte per element) and yields one token per stream. Compute: each
        request needs 2 x params FLOPs per prompt and output token. Unknown isl/osl leave the
        KV reads and prefill work out, which only loosens the bound.
        """
        kv_read = concurrency * self.kv_bytes(isl or 0, BOUND_KV_BYTES_PER_ELEMENT)
        step_bytes = self.decode_read_bytes + kv_read
        memory_bound = concurrency * self.mem_bw_bytes_s / step_bytes
        if self.peak_flops is None:
            return memory_bound
        output_share = osl / (isl + osl) if isl and osl else 1.0
        compute_bound = self.peak_flops * output_share / (2.0 * self.prefill_params)
        return min(memory_bound, compute_bound)

    def max_streams(
        self, tokens_per_stream: float, kv_bytes_per_element: float | None = None
    ) -> int:
        """Estimate: streams holding tokens_per_stream each whose KV cache fits beside the weights
        under the engine's memory rule; 0 when the weights alone do not fit."""
        per_element = kv_bytes_per_element if kv_bytes_per_element else self.kv.most_bytes
        per_stream = self.kv_bytes(tokens_per_stream, per_element)
        budget = self.kv_budget_bytes
        return max(0, math.floor(budget / per_stream)) if budget > 0 else 0


@dataclass(frozen=True, slots=True)
class PointCheck:
    """One measured point against the ceilings; None where the point or ceiling lacks the number."""

    concurrency: float
    stream_tok_s: float | None  # single-stream decode speed implied by the point
    stream_pct_of_ceiling: float | None
    output_pct_of_ceiling: float | None  # output tok/s vs max_output_tok_s at this concurrency
    ttft_ms: float | None
    min_prefill_ms: float | None
    flags: tuple[str, ...]  # every bound this point breaks, in words with the numbers


@dataclass(frozen=True, slots=True)
class PhysicsCheck:
    """A curve against its ceilings; ceilings None when they cannot be computed (notes say why)."""

    ceilings: Ceilings | None
    points: tuple[PointCheck, ...]
    max_streams: int | None  # streams that fit at the curve's mean context (measurement wins)
    notes: tuple[str, ...]
    memory: KvCapacity | None = None  # the capacity estimate behind max_streams

    @property
    def flags(self) -> tuple[str, ...]:
        """Every above-ceiling flag of every point."""
        return tuple(flag for point in self.points for flag in point.flags)

    @property
    def above_ceiling(self) -> bool:
        """Whether any point breaks a physical bound."""
        return bool(self.flags)


def ceilings(
    model: str,
    precision: str | None,
    gpu: GpuSpec,
    tp: int,
    *,
    engine: str | None = None,
    kv_cache_dtype: str | None = None,
    attention_dp: int = 1,
) -> Ceilings | str:
    """The ceilings for a model on `tp` GPUs (the whole replica: TP x attention DP) under an
    engine (and its stated KV-cache dtype), or why they cannot be computed."""
    facts = resolve(model)
    if isinstance(facts, str):
        return f"no physics check: {facts}"
    name = canonical_precision(precision)
    if name is None or bytes_per_weight(name) is None:
        return (
            f"no physics check: bytes per weight unknown for precision {precision!r} "
            f"(known: {', '.join(known_precisions())})"
        )
    found = _ceilings(facts, name, gpu, tp, max(1, attention_dp))
    engine_name = canonical_engine(engine) if engine else None
    return replace(found, engine=engine_name, kv=kv_dtype(engine_name, name, kv_cache_dtype))


def _ceilings(facts: ModelFacts, precision: str, gpu: GpuSpec, gpus: int, dp: int) -> Ceilings:
    peak_tflops = gpu.dense_tflops(precision)  # None: no peak for the precision, so no floor
    parts = facts.part_bytes(precision)
    assert parts is not None  # the caller checked the precision
    copied = parts.total - parts.experts
    return Ceilings(
        model=facts.model,
        precision=precision,
        gpu=gpu.gpu,
        tp=gpus,
        weight_bytes=copied * dp + parts.experts,
        decode_read_bytes=parts.always_read + parts.experts * facts.expert_share,
        prefill_params=facts.matmul_params_per_token,
        kv_bytes_per_token_per_byte=facts.kv_bytes_per_token(1.0),
        mem_bw_bytes_s=gpus * gpu.mem_bw_tb_s * 1e12,
        peak_flops=None if peak_tflops is None else peak_tflops * gpus * 1e12,
        memory_bytes=gpus * gpu.memory_bytes,
        facts=facts,
        always_read_bytes=parts.always_read,
        expert_bytes=parts.experts,
        attention_dp=dp,
    )


def curve_ceilings(curve: LoadCurve, specs: list[GpuSpec] | None = None) -> Ceilings | str:
    """The ceilings for a curve's deployment, or why there are none.

    The GPUs are the most of TP, the GPUs per replica and the GPU count (never fewer GPUs than
    really used, so the ceiling stays a bound); attention DP keeps a copy of the dense weights
    per rank.
    """
    key = curve.key
    tp = max(key.tp or 0, curve.gpus_per_replica or 0, key.gpu_count or 0) or None
    if tp is None:
        return "no physics check: GPUs per replica not stated"
    if key.gpu is None:
        return "no physics check: GPU not stated"
    by_gpu = {spec.gpu: spec for spec in (specs if specs is not None else load_gpu_specs())}
    spec = by_gpu.get(canonical_gpu(key.gpu))
    if spec is None:
        return f"no physics check: no specs for GPU {key.gpu!r}"
    return ceilings(
        key.model, key.precision, spec, tp, engine=key.engine,
        kv_cache_dtype=curve.kv_cache_dtype, attention_dp=key.attention_dp,
    )  # fmt: skip


def curve_capacity(curve: LoadCurve, specs: list[GpuSpec] | None = None) -> KvCapacity | None:
    """The KV capacity at a curve's own workload from all its evidence (the engine's start-up
    report, the estimate, the measured levels); None without ISL/OSL or ceilings."""
    found = curve_ceilings(curve, specs)
    isl, osl = curve.key.isl, curve.key.osl
    if isinstance(found, str) or not isl or not osl:
        return None
    return found.capacity(isl, osl, curve.points, curve.engine_kv)


def workload_capacity(ceil: Ceilings, curve: LoadCurve, isl: int, osl: int) -> KvCapacity:
    """The KV capacity at any workload on a curve's deployment: the engine's report carries over
    (its tokens over the workload's tokens per stream); measured levels count only at the curve's
    own ISL/OSL."""
    own = (curve.key.isl, curve.key.osl) == (isl, osl)
    return ceil.capacity(isl, osl, curve.points if own else (), curve.engine_kv)


def check_curve(curve: LoadCurve, specs: list[GpuSpec] | None = None) -> PhysicsCheck:
    """Every point of a curve as % of its ceilings, with a flag for each point above one."""
    found = curve_ceilings(curve, specs)
    if isinstance(found, str):
        return PhysicsCheck(None, (), None, (found,))
    isl, osl = curve.key.isl, curve.key.osl
    points = tuple(_check_point(point, found, isl, osl) for point in curve.points)
    memory = found.capacity(isl, osl, curve.points, curve.engine_kv) if isl and osl else None
    streams = memory.streams if memory is not None else None
    return PhysicsCheck(found, points, streams, _memory_notes(curve, found, memory), memory)


def _check_point(point: CurvePoint, ceil: Ceilings, isl: int | None, osl: int | None) -> PointCheck:
    flags: list[str] = []
    stream = _stream_tok_s(point)
    limit = ceil.decode_tok_s_single_stream
    if stream is not None and stream > limit:
        flags.append(
            f"{stream:.1f} tok/s per stream at concurrency {point.concurrency:g} is above the "
            f"single-stream decode ceiling of {limit:.1f} tok/s ({_hardware(ceil)} reading "
            f"{ceil.decode_read_bytes / 1e9:.1f} GB of {ceil.precision} weights per token): "
            "the GPU count, precision or model is likely misstated (or speculative decoding was on)"
        )
    output_pct = None
    stream_flagged = bool(flags)
    if point.output_tok_s is not None:
        most = ceil.max_output_tok_s(point.concurrency, isl, osl)
        output_pct = 100.0 * point.output_tok_s / most
        if point.output_tok_s > most and not stream_flagged:
            flags.append(
                f"{point.output_tok_s:.1f} output tok/s at concurrency {point.concurrency:g} is "
                f"above the aggregate ceiling of {most:.1f} tok/s on {_hardware(ceil)}"
            )
    ttft = _fastest(point.p50_ttft_ms, point.ttft_ms, point.p99_ttft_ms)
    floor = ceil.min_prefill_ms(isl) if isl else None
    if ttft is not None and floor is not None and ttft < floor:
        flags.append(
            f"TTFT {ttft:.1f} ms at concurrency {point.concurrency:g} is below the prefill floor "
            f"of {floor:.1f} ms for {isl} prompt tokens on {_hardware(ceil)}"
        )
    return PointCheck(
        concurrency=point.concurrency,
        stream_tok_s=stream,
        stream_pct_of_ceiling=None if stream is None else 100.0 * stream / limit,
        output_pct_of_ceiling=output_pct,
        ttft_ms=ttft,
        min_prefill_ms=floor,
        flags=tuple(flags),
    )


def _stream_tok_s(point: CurvePoint) -> float | None:
    """Per-stream decode speed: 1000 / the fastest stated TPOT, else output tok/s at c = 1."""
    tpot = _fastest(point.p50_tpot_ms, point.tpot_ms, point.p99_tpot_ms)
    if tpot is not None and tpot > 0:
        return 1000.0 / tpot
    if point.concurrency == 1 and point.output_tok_s is not None:
        return point.output_tok_s
    return None


def _fastest(*values: float | None) -> float | None:
    stated = [value for value in values if value is not None]
    return min(stated) if stated else None


def _hardware(ceil: Ceilings) -> str:
    return f"{ceil.tp} x {ceil.gpu}"


def _memory_notes(curve: LoadCurve, ceil: Ceilings, memory: KvCapacity | None) -> tuple[str, ...]:
    if ceil.kv_budget_bytes <= 0:
        return (
            f"estimate: {ceil.weight_bytes / 1e9:.1f} GB of {ceil.precision} weights leave no "
            f"room for a KV cache on {_hardware(ceil)} "
            f"({ceil.memory_bytes / 2**30:.1f} GiB, {ceil.engine or 'engine ?'})",
        )
    if memory is None:
        return ()
    if memory.stated_streams is not None:
        return (
            f"{memory.stated_text}: {memory.stated_streams} streams of {curve.key.isl}+"
            f"{curve.key.osl} tokens fit (the estimate said {memory.estimate_text()}); the "
            "engine's report is used",
        )
    if memory.contradiction is not None:
        return (memory.contradiction,)
    over = [p.concurrency for p in curve.points if p.concurrency > memory.streams]
    if not over:
        return ()
    listed = ", ".join(f"{c:g}" for c in over)
    return (
        f"estimate: only about {memory.estimate_text()} of {curve.key.isl}+{curve.key.osl} "
        f"tokens fit ({memory.basis}); at concurrency {listed} the engine likely queued or "
        "preempted requests",
    )
