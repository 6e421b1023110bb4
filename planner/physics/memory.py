"""KV-cache capacity: how many streams of a workload fit beside the weights. Evidence ranks:
the engine's own start-up report (its KV-cache tokens over the tokens a stream holds) beats the
estimate from the GPU's real capacity, the engine's memory rule and the KV dtype; a measured level
that ran clean above either raises it (the estimate is then flagged as wrong). Where only an
uncertain figure remains the capacity is a range (KvCapacity.low/high, `side`), not one number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from planner.curves.kv_report import EngineKvReport
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
# A level ran clean when the curve kept it (failures under its threshold, planner.curves.load)
# and its TTFT is under this multiple of the level below's: a request that waited for a KV slot
# waits a share of a whole request time (seconds), which multiplies a prefill-sized TTFT many
# times over (silicon sample: x9-x13 at the first queued level; x1.1-x2.1 below it).
CLEAN_TTFT_RATIO = 3.0
# The most a replica can hold in any configuration: all its memory but the weights, at 1 byte a
# KV element (fp8, the smallest format engines use), every stream at its mean context.
BOUND_KV_BYTES = 1.0

Basis = Literal["stated", "estimate", "measured"]
Side = Literal["below", "uncertain", "above"]


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
    """Streams whose KV cache fits at a workload, and what the figure rests on.

    `streams` is what caps use: the engine's own report where there is one, else the estimate
    (its conservative side); a measurement that ran more streams raises either
    (`measured_streams`, `clean_streams`; `contradiction` says so in words). `low`/`high` bound
    the capacity (`side` places a concurrency against them) and `knee` is where queueing surely
    starts (None: nowhere the evidence can place it).
    """

    estimate_low: int  # at the larger KV dtype candidate
    estimate_high: int  # at the smaller one (equal when the dtype is known)
    measured_streams: int | None  # most streams a measurement shows running together
    basis: str  # the estimate's assumptions in words
    contradiction: str | None
    stated_streams: int | None = None  # the engine's KV-cache tokens / tokens per stream
    clean_streams: int | None = None  # top of the levels that ran clean from the lowest up
    bound_streams: int = 0  # the most any configuration holds (all memory, 1 byte a value)
    stated_text: str | None = None  # the engine's report in words

    @property
    def streams(self) -> int:
        """Streams per replica to plan with: the engine's report, else the estimate's
        conservative side, raised by any measurement that ran more."""
        base = self.stated_streams if self.stated_streams is not None else self.estimate_low
        return max(base, self.measured_streams or 0, self.clean_streams or 0)

    @property
    def source(self) -> Basis:
        """What the capacity rests on: the engine's report, the estimate, or (the estimate
        contradicted) measurements alone."""
        if self.stated_streams is not None:
            return "stated"
        return "measured" if self.contradiction is not None else "estimate"

    @property
    def low(self) -> int:
        """Streams that surely fit (the report, else the measurements or the estimate)."""
        return self.streams

    @property
    def high(self) -> int | None:
        """Streams beyond which none fit: the report; the estimate's larger candidate; with the
        estimate contradicted, the all-memory bound (None where even that is exceeded)."""
        if self.source == "stated":
            return self.streams
        if self.source == "estimate":
            return max(self.estimate_high, self.streams)
        return self.bound_streams if self.bound_streams >= self.streams else None

    @property
    def knee(self) -> int | None:
        """Where queueing for a KV slot is taken to start: `high`, past which no evidence lets
        the streams fit (between `low` and `high` the capacity is unknown: `side` says
        'uncertain' there, and the band widens instead of the curve bending); None: nowhere."""
        high = self.high
        return high if high is not None and high > 0 else None

    def side(self, concurrency: float) -> Side:
        """Whether `concurrency` streams surely fit ('below'), surely do not ('above'), or
        fall where the evidence cannot tell ('uncertain')."""
        return capacity_side(self.low, self.high, concurrency)

    def estimate_text(self) -> str:
        """'9 streams' or '9-18 streams'."""
        if self.estimate_low == self.estimate_high:
            return f"{self.estimate_low} streams"
        return f"{self.estimate_low}-{self.estimate_high} streams"


def capacity_side(low: int, high: int | None, concurrency: float) -> Side:
    """'below' when `concurrency` <= low (surely fits), 'above' when > high (surely queues),
    else 'uncertain' (high None: no upper bound)."""
    if concurrency <= low:
        return "below"
    if high is not None and concurrency > high:
        return "above"
    return "uncertain"


def estimate_streams(ceil: Ceilings, isl: int, osl: int) -> tuple[int, int]:
    """(low, high) streams that fit (reserved_tokens each); 0 when the weights leave no room."""
    budget = ceil.kv_budget_bytes
    context = reserved_tokens(ceil.engine, isl, osl)

    def fit(bytes_per_element: float) -> int:
        per_stream = ceil.kv_bytes(context, bytes_per_element)
        return max(0, math.floor(budget / per_stream)) if budget > 0 else 0

    return fit(ceil.kv.most_bytes), fit(ceil.kv.least_bytes)


def bound_streams(ceil: Ceilings, isl: int, osl: int) -> int:
    """The most streams any configuration could hold: every byte but the weights for the KV
    cache, 1 byte a value, each stream at its mean context (0 when the weights leave none)."""
    room = ceil.memory_bytes - ceil.weight_bytes
    per_stream = ceil.kv_bytes(mean_context_tokens(isl, osl), BOUND_KV_BYTES)
    return max(0, math.floor(room / per_stream)) if room > 0 else 0


def stated_streams(report: EngineKvReport | None, engine: str | None, isl: int, osl: int) -> int:
    """Streams the engine's reported cache holds: its tokens over the tokens a stream takes
    (reserved_tokens); -1 without a report."""
    tokens = report.tokens if report is not None else None
    return -1 if tokens is None else math.floor(tokens / reserved_tokens(engine, isl, osl))


def kv_capacity(
    ceil: Ceilings,
    isl: int,
    osl: int,
    points: Sequence[CurvePoint] = (),
    report: EngineKvReport | None = None,
) -> KvCapacity:
    """The capacity for a workload: the engine's report or the estimate, reconciled with the
    measured points of that workload."""
    low, high = estimate_streams(ceil, isl, osl)
    basis = (
        f"{ceil.kv.text}; {memory_rule_text(ceil.engine)} of {ceil.tp} x "
        f"{ceil.memory_bytes / ceil.tp / 2**30:.1f} GiB; "
        f"{ceil.weight_bytes / 1e9:.1f} GB of weights; "
        f"{reserved_tokens(ceil.engine, isl, osl):g} tokens per stream"
    )
    measured, where = _measured_streams(ceil, osl, points, low)
    clean = clean_streams(points)
    stated = stated_streams(report, ceil.engine, isl, osl)
    return KvCapacity(
        estimate_low=low,
        estimate_high=high,
        measured_streams=measured,
        basis=basis,
        contradiction=None
        if stated >= 0
        else _contradiction(high, (measured, where), clean, basis),
        stated_streams=stated if stated >= 0 else None,
        clean_streams=clean,
        bound_streams=bound_streams(ceil, isl, osl),
        stated_text=report.text() if report is not None and stated >= 0 else None,
    )


def _contradiction(
    high: int, measured: tuple[int | None, str], clean: int | None, basis: str
) -> str | None:
    """The estimate's contradiction in words, None when no measurement exceeds it."""
    found, where = measured
    if clean is not None and clean > max(high, found or 0):
        found, where = clean, f"concurrency {clean} (every level up to it ran clean)"
    if found is None or found <= high:
        return None
    return (
        f"the KV-cache estimate is wrong: the measurement at {where} ran at least {found} "
        f"streams together, more than the {high} the estimate allows ({basis}); the "
        "measurement is used"
    )


def clean_streams(points: Sequence[CurvePoint]) -> int | None:
    """Top concurrency of the levels that ran clean from the lowest up: each kept by the curve
    (failures under its threshold) with a TTFT under CLEAN_TTFT_RATIO x the level below's (the
    lowest: any TTFT); None when the lowest level states no TTFT."""
    top: int | None = None
    before: float | None = None
    for point in sorted(points, key=lambda p: p.concurrency):
        ttft = _ttft_ms(point)
        if ttft is None or (before is not None and ttft >= CLEAN_TTFT_RATIO * before):
            break
        top, before = math.floor(point.concurrency), ttft
    return top


def _ttft_ms(point: CurvePoint) -> float | None:
    return next((v for v in (point.p50_ttft_ms, point.ttft_ms, point.mean_ttft_ms) if v), None)


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
    ttft = _ttft_ms(point)
    tpot = next((v for v in (point.p50_tpot_ms, point.tpot_ms, point.mean_tpot_ms) if v), None)
    if low <= 0 or point.concurrency <= low or ttft is None or tpot is None:
        return 0
    wait_ms = (point.concurrency / low - 1.0) * (osl - 1) * tpot
    return math.floor(point.concurrency) if ttft < _NO_QUEUE_SHARE * wait_ms else 0
