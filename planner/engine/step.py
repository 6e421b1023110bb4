"""The step-time law of continuous batching and the steady states it makes (all vectorised).

One engine step carries B decode tokens (one per running sequence) and P prefill tokens (chunks
of waiting prompts). It reads the weights once and every running sequence's KV cache (memory
time), multiplies B + P tokens through the weights plus the prefill's attention (compute time),
and pays a fixed and a per-sequence overhead:

    step = t0 + t_seq * B + (mem^k + comp^k)^(1/k),  mem = (W + KV read) / (BW * eta_bw),
    comp = (F_tok * (B + P) + attention) / (FLOPS * eta_f)

(k = 1: the memory and compute parts add; on the silicon sample's dev split the sum read the
next level up better than k = 2's partial overlap: TPOT 9.1% against 11.3%, bench_validation).
In a steady state every running sequence decodes one token a step and prefill keeps pace with
completions (P = B * ISL / OSL), so TPOT is the mean step; a new request's TTFT is its own
prefill plus the wait for prefill capacity (an M/D/1 queue on the compute the prefills need)
plus, past the sequences the cache or the engine admits, the wait for a free slot (Little's law
on the queue). Closed loop (c requests in flight) and open loop (Poisson arrivals at a rate) are
two ways to fix the same state.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from planner.engine.spec import EngineSpec

Array = npt.NDArray[np.float64]
OVERLAP_K = 1.0
# The parameters, in the order calibration keeps them (log space there).
PARAM_NAMES = ("eta_bw", "eta_f", "t0_s", "t_seq_s", "eta_prefill", "kv_scale", "waves")
# Physics priors: medians and log-space spreads (eta_bw: achieved share of bandwidth; eta_f:
# of dense peak in the decode matmuls; t0_s, t_seq_s: per step and per sequence overheads;
# eta_prefill: prefill compute relative to eta_f; kv_scale: the cache the engine really has
# relative to the memory rule's estimate; waves: requests per level / concurrency of the
# benchmark that measured it, whose first wave arrives at once: NVIDIA's sweeps send 10 x c).
PRIOR_MEDIAN = (0.7, 0.45, 0.003, 2e-5, 1.0, 1.0, 10.0)
PRIOR_LOG_SD = (0.5, 0.7, 1.2, 2.0, 0.8, 0.3, 0.5)


@dataclass(frozen=True, slots=True)
class StepParams:
    """The calibrated efficiencies and overheads of one deployment."""

    eta_bw: float
    eta_f: float
    t0_s: float
    t_seq_s: float
    eta_prefill: float
    kv_scale: float
    waves: float

    @classmethod
    def from_vector(cls, values: Array) -> StepParams:
        """From the values in PARAM_NAMES' order."""
        return cls(*(float(v) for v in values))

    def vector(self) -> Array:
        """The parameters as PARAM_NAMES orders them."""
        return np.array([getattr(self, name) for name in PARAM_NAMES], dtype=np.float64)


PRIOR = StepParams(*PRIOR_MEDIAN)


@dataclass(frozen=True, slots=True)
class SteadyState:
    """Means at one operating point per element (arrays of equal shape); nan where overloaded."""

    running: Array  # sequences decoding together
    queued: Array  # requests waiting for a slot (closed loop past the cache's capacity)
    output_tok_s: Array
    request_s: Array
    tpot_s: Array
    ttft_s: Array
    prefill_s: Array  # one request's own prefill (its service time)
    burst_s: Array  # mean wait of a closed-loop benchmark's first wave, spread over its requests
    prefill_load: Array  # share of time the prefills keep the compute busy (rho)
    e2e_s: Array


def step_time_s(
    spec: EngineSpec, p: StepParams, *, decode: Array, prefill: Array, kv_bytes: Array, ctx: Array
) -> Array:
    """Seconds of one step with `decode` sequences, `prefill` prompt tokens attending to `ctx`
    tokens on average, and `kv_bytes` of cache read."""
    weights = spec.weights_read(decode + prefill, decode)
    mem = (weights + kv_bytes) / (spec.mem_bw_bytes_s * p.eta_bw)
    flops = spec.matmul_flops_per_token * (decode + prefill)
    flops = flops + spec.attention_flops_per_token_ctx * prefill * ctx
    comp = flops / (spec.peak_flops * p.eta_f)
    overlap = (mem**OVERLAP_K + comp**OVERLAP_K) ** (1.0 / OVERLAP_K)
    step: Array = p.t0_s + p.t_seq_s * decode + overlap
    return step


def prefill_time_s(spec: EngineSpec, p: StepParams, isl: Array) -> Array:
    """One prompt's prefill compute, in chunks of the token budget, at the prefill efficiency."""
    flops = spec.matmul_flops_per_token * isl + spec.attention_flops_per_token_ctx * isl * isl / 2
    seconds: Array = flops / (spec.peak_flops * p.eta_f * p.eta_prefill)
    return seconds


def _decode_step(spec: EngineSpec, p: StepParams, n: Array, isl: Array, osl: Array) -> Array:
    """The mean steady step with n running sequences (prefill keeping pace with completions)."""
    prefill = n * isl / np.maximum(osl, 1.0)
    kv_bytes = n * spec.seq_kv_bytes(isl + osl / 2.0)
    return step_time_s(spec, p, decode=n, prefill=prefill, kv_bytes=kv_bytes, ctx=isl / 2.0)


def capacity(spec: EngineSpec, p: StepParams, isl: Array, osl: Array) -> Array:
    """Sequences that run together: the cache's (scaled by kv_scale) or the engine's limit."""
    # The engine's admission rule (planner.physics.memory.reserved_tokens): the whole request,
    # or its mean context, one prompt plus half the output.
    whole = spec.tokens_per_seq(1.0, 1.0) >= 2.0
    tokens = isl + osl if whole else isl + osl / 2.0
    per_seq = spec.seq_kv_bytes(np.maximum(tokens, 1.0))
    with np.errstate(divide="ignore", invalid="ignore"):  # 0 bytes per sequence: unbounded
        by_cache = np.where(per_seq > 0, spec.kv_budget_bytes * p.kv_scale / per_seq, np.inf)
    seqs: Array = np.maximum(np.minimum(float(spec.max_seqs), by_cache), 1.0)
    return seqs


def closed_loop(
    spec: EngineSpec, p: StepParams, concurrency: Array, isl: Array, osl: Array
) -> SteadyState:
    """The steady state with `concurrency` requests always in flight. Prefill already shares
    the steps (the P term), so a request's TTFT is one step plus its own prefill; past the
    sequences that run together the rest wait for a slot."""
    cap = capacity(spec, p, isl, osl)
    n = np.minimum(concurrency, cap)
    queued = np.maximum(concurrency - n, 0.0)
    state = _state(spec, p, n, isl=isl, osl=osl, waiting=False)
    slot_wait = queued / np.maximum(state.request_s, 1e-12)
    # A closed-loop benchmark starts its c requests at once: the k-th of the first wave waits
    # for k - 1 prefills; over `waves` waves that is (c - 1) x prefill / (2 x waves) on average.
    burst = np.maximum(n - 1.0, 0.0) * state.prefill_s / (2.0 * p.waves)
    extra = slot_wait + burst
    return replace(
        state, queued=queued, ttft_s=state.ttft_s + extra, e2e_s=state.e2e_s + extra, burst_s=burst
    )


def open_loop(spec: EngineSpec, p: StepParams, rate: Array, isl: Array, osl: Array) -> SteadyState:
    """The steady state under Poisson arrivals at `rate` requests/s (nan past what it serves):
    running sequences solve rate = n / request time(n) (bisection: it grows with n), and a new
    request waits for prefill capacity as in an M/D/1 queue."""
    cap = capacity(spec, p, isl, osl)
    low, high = np.zeros_like(rate), cap.copy()
    for _ in range(40):
        mid = (low + high) / 2.0
        served = _state(spec, p, np.maximum(mid, 1e-9), isl=isl, osl=osl, waiting=False)
        below = served.request_s < rate
        low, high = np.where(below, mid, low), np.where(below, high, mid)
    state = _state(spec, p, np.maximum(high, 1e-9), isl=isl, osl=osl, waiting=True)
    most = _state(spec, p, cap, isl=isl, osl=osl, waiting=False).request_s
    over = (rate > most * (1.0 - 1e-6)) | (state.prefill_load >= 1.0)
    return _masked(state, over)


def _state(
    spec: EngineSpec, p: StepParams, n: Array, *, isl: Array, osl: Array, waiting: bool
) -> SteadyState:
    """n sequences running: a request takes one step and its prefill to its first token, then
    OSL - 1 steps (Little's law gives the request rate); `waiting` adds the M/D/1 wait for
    prefill capacity of Poisson arrivals."""
    tau = _decode_step(spec, p, n, isl, osl)
    service = prefill_time_s(spec, p, isl)
    first = tau + service
    request = n / (first + (osl - 1.0) * tau)
    load = request * service
    if waiting:
        rho = np.minimum(load, 0.999)
        first = first + rho / (2.0 * (1.0 - rho)) * service
    return SteadyState(
        running=n,
        queued=np.zeros_like(n),
        output_tok_s=request * osl,
        request_s=request,
        tpot_s=tau,
        ttft_s=first,
        prefill_s=service,
        burst_s=np.zeros_like(service),
        prefill_load=load,
        e2e_s=first + (osl - 1.0) * tau,
    )


def _masked(state: SteadyState, over: npt.NDArray[np.bool_]) -> SteadyState:
    def mask(values: Array) -> Array:
        return np.where(over, np.nan, values)

    return SteadyState(
        running=mask(state.running),
        queued=mask(state.queued),
        output_tok_s=mask(state.output_tok_s),
        request_s=mask(state.request_s),
        tpot_s=mask(state.tpot_s),
        ttft_s=mask(state.ttft_s),
        prefill_s=state.prefill_s,
        burst_s=state.burst_s,
        prefill_load=state.prefill_load,
        e2e_s=mask(state.e2e_s),
    )
