"""KV-cache capacity: how many streams of a workload fit beside the weights, from the GPU's real
capacity, the engine's memory rule and the KV dtype the deployment used; and where a measurement
shows more streams running than the estimate allows, the measurement wins and the estimate is
flagged as wrong.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from planner.curves.load import CurvePoint

if TYPE_CHECKING:
    from planner.physics.roofline import Ceilings

FP8_KV_BYTES = 1.0
BF16_KV_BYTES = 2.0
# vLLM: gpu_memory_utilization (default 0.9) of total memory holds weights + KV cache.
# TensorRT-LLM: free_gpu_memory_fraction (default 0.9) of the memory left after the weights.
ENGINE_MEMORY_FRACTION = 0.9
_STATED_KV = {
    "fp8": FP8_KV_BYTES,
    "fp8_e4m3": FP8_KV_BYTES,
    "fp8_e5m2": FP8_KV_BYTES,
    "int8": FP8_KV_BYTES,
    "bf16": BF16_KV_BYTES,
    "fp16": BF16_KV_BYTES,
    "float16": BF16_KV_BYTES,
    "bfloat16": BF16_KV_BYTES,
}
# A level whose TTFT stays below this share of the queueing delay that the estimate implies ran
# its streams together: a KV cache that small would have made requests wait for a slot. On the
# silicon sample, vLLM 70B FP8 TP1 on H200 at 1024/8192, c=64 (throughput 1.6x that of c=32)
# waits 2% of the implied delay; at 8192/1024, c=64 (throughput +8%: saturated) 19%.
_NO_QUEUE_SHARE = 0.05


@dataclass(frozen=True, slots=True)
class KvDtype:
    """Bytes per KV element the deployment used: one value when known, (low, high) when not."""

    bytes_per_element: tuple[float, ...]
    text: str

    @property
    def most_bytes(self) -> float:
        """The larger candidate: fewest streams, the conservative side for caps."""
        return max(self.bytes_per_element)

    @property
    def least_bytes(self) -> float:
        """The smaller candidate: most streams, the side a contradiction must pass."""
        return min(self.bytes_per_element)


def kv_dtype(engine: str | None, precision: str | None, stated: str | None = None) -> KvDtype:
    """The KV dtype: as stated, else the engine's default for the checkpoint, else unknown."""
    if stated is not None:
        found = _STATED_KV.get(stated.strip().lower())
        if found is not None:
            return KvDtype((found,), f"{stated.strip().lower()} KV cache (stated)")
    quantised = (precision or "").strip().lower() in ("fp8", "nvfp4", "fp4", "w8a8")
    if engine == "vllm":
        return KvDtype((BF16_KV_BYTES,), "16-bit KV cache (vLLM default --kv-cache-dtype auto)")
    if engine == "tensorrt-llm" and quantised:
        return KvDtype(
            (FP8_KV_BYTES,),
            "FP8 KV cache (TensorRT-LLM default for NVIDIA's FP8/FP4 checkpoints, "
            "kv_cache_quant_algo FP8)",
        )
    if engine == "tensorrt-llm":
        return KvDtype((BF16_KV_BYTES,), "16-bit KV cache (TensorRT-LLM default)")
    return KvDtype(
        (FP8_KV_BYTES, BF16_KV_BYTES),
        f"KV dtype unknown for engine {engine or '?'}: FP8 or 16-bit",
    )


def kv_budget_bytes(engine: str | None, memory_bytes: float, weight_bytes: float) -> float:
    """Bytes left for the KV cache under the engine's memory rule (activations not subtracted,
    so this errs high by the engine's working memory, a few GB)."""
    if engine == "tensorrt-llm":
        return ENGINE_MEMORY_FRACTION * (memory_bytes - weight_bytes)
    return ENGINE_MEMORY_FRACTION * memory_bytes - weight_bytes


def memory_rule_text(engine: str | None) -> str:
    """The engine's memory rule in words."""
    if engine == "tensorrt-llm":
        return (
            f"TensorRT-LLM free_gpu_memory_fraction {ENGINE_MEMORY_FRACTION:g} of the memory "
            "free after weights"
        )
    if engine == "vllm":
        return f"vLLM gpu_memory_utilization {ENGINE_MEMORY_FRACTION:g} of memory"
    return f"{ENGINE_MEMORY_FRACTION:.0%} of memory (engine {engine or '?'}: vLLM's rule assumed)"


def mean_context_tokens(isl: int, osl: int) -> float:
    """Tokens a stream holds on average over its life: the prompt plus half the output."""
    return isl + osl / 2.0


def reserved_tokens(engine: str | None, isl: int, osl: int) -> float:
    """KV-cache tokens one stream takes from the engine's budget: TensorRT-LLM's default
    scheduler (GUARANTEED_NO_EVICT) admits a request only with blocks for its whole isl + osl;
    vLLM (and engines assumed to act like it) allocate blocks as tokens come, so a stream holds
    its mean context."""
    if engine == "tensorrt-llm":
        return float(isl + osl)
    return mean_context_tokens(isl, osl)


@dataclass(frozen=True, slots=True)
class KvCapacity:
    """Streams whose KV cache fits at a workload, and what the estimate rests on.

    `streams` is what caps use: the estimate (its conservative side), unless a measurement ran
    more streams, which then wins (`measured_streams`, `contradiction` says so in words).
    """

    estimate_low: int  # at the larger KV dtype candidate
    estimate_high: int  # at the smaller one (equal when the dtype is known)
    measured_streams: int | None  # most streams a measurement shows running together
    basis: str
    contradiction: str | None

    @property
    def streams(self) -> int:
        """Streams per replica to plan with: the measurement where it beats the estimate."""
        return max(self.estimate_low, self.measured_streams or 0)

    def estimate_text(self) -> str:
        """'9 streams' or '9-18 streams'."""
        if self.estimate_low == self.estimate_high:
            return f"{self.estimate_low} streams"
        return f"{self.estimate_low}-{self.estimate_high} streams"


def estimate_streams(ceil: Ceilings, isl: int, osl: int) -> tuple[int, int]:
    """(low, high) streams that fit (reserved_tokens each); 0 when the weights leave no room."""
    budget = ceil.kv_budget_bytes
    context = reserved_tokens(ceil.engine, isl, osl)

    def fit(bytes_per_element: float) -> int:
        per_stream = ceil.kv_bytes(context, bytes_per_element)
        return max(0, math.floor(budget / per_stream)) if budget > 0 else 0

    return fit(ceil.kv.most_bytes), fit(ceil.kv.least_bytes)


def kv_capacity(
    ceil: Ceilings, isl: int, osl: int, points: Sequence[CurvePoint] = ()
) -> KvCapacity:
    """The capacity estimate for a workload, reconciled with measured points of that workload."""
    low, high = estimate_streams(ceil, isl, osl)
    basis = (
        f"{ceil.kv.text}; {memory_rule_text(ceil.engine)} of {ceil.tp} x "
        f"{ceil.memory_bytes / ceil.tp / 2**30:.1f} GiB; "
        f"{ceil.weight_bytes / 1e9:.1f} GB of weights; "
        f"{reserved_tokens(ceil.engine, isl, osl):g} tokens per stream"
    )
    measured, where = _measured_streams(ceil, osl, points, low)
    contradiction = None
    if measured is not None and measured > high:
        contradiction = (
            f"the KV-cache estimate is wrong: the measurement at {where} ran at least {measured} "
            f"streams together, more than the {high} the estimate allows ({basis}); the "
            "measurement is used"
        )
    return KvCapacity(low, high, measured, basis, contradiction)


def _measured_streams(
    ceil: Ceilings, osl: int, points: Sequence[CurvePoint], low: int
) -> tuple[int | None, str]:
    """Most streams any point shows running together, and where ('' when none)."""
    best: tuple[int | None, str] = (None, "")
    for point in points:
        found = max(_streams_by_throughput(ceil, point), _streams_by_no_queue(point, low, osl))
        if found > (best[0] or 0):
            best = (found, f"concurrency {point.concurrency:g}")
    return best


def _streams_by_throughput(ceil: Ceilings, point: CurvePoint) -> int:
    """Streams the output rate needs at least: no stream decodes faster than the single-stream
    ceiling (TP x bandwidth / weight bytes), so output tok/s / that ceiling streams ran."""
    if point.output_tok_s is None:
        return 0
    needed = math.ceil(point.output_tok_s / ceil.decode_tok_s_single_stream - 1e-9)
    return min(needed, math.floor(point.concurrency))


def _streams_by_no_queue(point: CurvePoint, low: int, osl: int) -> int:
    """The level's concurrency when its TTFT is far below the wait a cache of `low` streams
    implies ((c / low - 1) x the request time), else 0."""
    ttft = next((v for v in (point.p50_ttft_ms, point.ttft_ms, point.mean_ttft_ms) if v), None)
    tpot = next((v for v in (point.p50_tpot_ms, point.tpot_ms, point.mean_tpot_ms) if v), None)
    if low <= 0 or point.concurrency <= low or ttft is None or tpot is None:
        return 0
    wait_ms = (point.concurrency / low - 1.0) * (osl - 1) * tpot
    return math.floor(point.concurrency) if ttft < _NO_QUEUE_SHARE * wait_ms else 0
