"""The physical facts one deployment's serving model starts from: bytes every decode step reads,
FLOPs per token, KV-cache bytes per token and the cache's size, the engine's batch limits (its
token budget per step and most sequences at once), all for one replica (TP GPUs together).

Built from planner.physics.roofline's Ceilings (model facts x precision x GPU x TP x engine);
the engine's limits come from its launch arguments where stated, else the release defaults.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hardware.gpus import GpuSpec
from planner.physics.memory import reserved_tokens
from planner.physics.roofline import Ceilings

Array = npt.NDArray[np.float64]

# Engine defaults on 80+ GB GPUs (H100, H200, B200): tokens one step may carry and sequences
# running at once. vLLM >= 0.8 (V1) OpenAI server: max_num_batched_tokens 8192, max_num_seqs
# 1024 on GPUs with 70 GiB or more; trtllm-serve: max_num_tokens 8192, max_batch_size 2048;
# SGLang: chunked_prefill_size 8192, running requests bounded by memory only.
_DEFAULT_LIMITS: dict[str, tuple[int, int]] = {
    "vllm": (8192, 1024),
    "tensorrt-llm": (8192, 2048),
    "sglang": (8192, 4096),
}
_FALLBACK_LIMITS = (8192, 1024)
_ARG_NAMES = {
    "token_budget": ("max_num_batched_tokens", "max_num_tokens", "chunked_prefill_size"),
    "max_seqs": ("max_num_seqs", "max_batch_size", "max_running_requests"),
}


@dataclass(frozen=True, slots=True)
class EngineSpec:
    """One replica's physics for the serving model (bytes, FLOPs and seconds; TP GPUs together)."""

    engine: str
    gpu: str
    tp: int  # GPUs in the replica
    weight_read_bytes: float  # one copy of the weights every step reads whatever the routing
    matmul_flops_per_token: float  # 2 x the active per-token matmul parameters
    attention_flops_per_token_ctx: float  # prefill attention: FLOPs per token per context token
    kv_bytes_per_token: float  # full-attention layers, at the deployment's KV dtype
    kv_budget_bytes: float  # bytes the cache has (0: the weights leave no room)
    mem_bw_bytes_s: float
    peak_flops: float
    token_budget: int  # tokens one step may carry (decode tokens + prefill chunks)
    max_seqs: int  # sequences running at once, at most
    limits_basis: str  # where the two limits come from, in words
    physics: str = "physics: the model's config and the GPU's datasheet"
    expert_read_bytes: float = 0.0  # every routed expert (MoE); read as the batch touches them
    expert_share: float = 0.0  # top-k / routed experts
    attention_dp: int = 1  # attention data-parallel ranks, each reading its own copy
    window_kv_bytes_per_token: float = 0.0  # sliding-window layers, up to window_tokens
    window_tokens: float = 0.0
    state_bytes_per_seq: float = 0.0  # linear-attention / SSM state

    def weights_read(self, tokens: Array, running: Array) -> Array:
        """Weight bytes one step reads: a copy of the always-read weights per busy attention
        rank, plus the routed experts that `tokens` tokens touch (uniform top-k routing: a layer
        with E experts is left untouched by a token with chance 1 - k/E)."""
        copies = np.clip(running, 1.0, float(self.attention_dp))
        read: Array = copies * self.weight_read_bytes
        if self.expert_share > 0:
            touched = 1.0 - np.power(1.0 - self.expert_share, np.maximum(tokens, 1.0))
            read = read + self.expert_read_bytes * touched
        return read

    def seq_kv_bytes(self, context: Array | float) -> Array:
        """Cache bytes one sequence holds at `context` tokens."""
        ctx = np.asarray(context, dtype=np.float64)
        window = np.minimum(ctx, self.window_tokens) if self.window_tokens else ctx
        out: Array = (
            self.kv_bytes_per_token * ctx
            + self.window_kv_bytes_per_token * window
            + self.state_bytes_per_seq
        )
        return out

    def tokens_per_seq(self, isl: float, osl: float) -> float:
        """KV tokens one running sequence takes from the budget (the engine's admission rule)."""
        return reserved_tokens(self.engine, round(isl), round(osl))

    def capacity_seqs(self, isl: float, osl: float) -> float:
        """Sequences that run at once at a workload: the KV cache's or the engine's limit."""
        per_seq = float(self.seq_kv_bytes(max(self.tokens_per_seq(isl, osl), 1.0)))
        if per_seq <= 0:
            return float(self.max_seqs)
        return float(min(self.max_seqs, self.kv_budget_bytes / per_seq))


def engine_spec(
    ceil: Ceilings,
    gpu: GpuSpec,
    engine: str,
    launch: str = "",
    engine_args: tuple[tuple[str, str], ...] = (),
) -> EngineSpec | str:
    """The spec of one deployment, or why there is none (the words say what is missing)."""
    facts = ceil.facts
    if facts is None:
        return f"no serving model: model facts unknown for {ceil.model!r}"
    peak = ceil.peak_flops
    if peak is None:
        bf16 = gpu.dense_tflops("bf16")
        if bf16 is None:
            return f"no serving model: no dense FLOPS peak for {gpu.gpu}"
        peak = bf16 * 1e12 * ceil.tp
    per_element = ceil.kv.most_bytes
    budget, seqs, basis = engine_limits(engine, launch, dict(engine_args))
    return EngineSpec(
        engine=engine,
        gpu=ceil.gpu,
        tp=ceil.tp,
        weight_read_bytes=ceil.always_read_bytes,
        matmul_flops_per_token=2.0 * ceil.prefill_params,
        attention_flops_per_token_ctx=facts.attention_flops_per_token_ctx,
        kv_bytes_per_token=facts.kv_elements_per_token * per_element,
        kv_budget_bytes=max(0.0, ceil.kv_budget_bytes),
        mem_bw_bytes_s=ceil.mem_bw_bytes_s,
        peak_flops=peak,
        token_budget=budget,
        max_seqs=seqs,
        limits_basis=basis,
        expert_read_bytes=ceil.expert_bytes,
        expert_share=facts.expert_share,
        attention_dp=ceil.attention_dp,
        window_kv_bytes_per_token=facts.window_kv_elements_per_token * per_element,
        window_tokens=float(facts.window_tokens),
        state_bytes_per_seq=facts.state_bytes_per_seq,
    )


def empirical_spec(
    engine: str, gpu: str, tp: int, *, isl: float, fastest: tuple[float, float]
) -> EngineSpec:
    """A spec without physics facts (a model or GPU capplan does not know, a CPU server): unit
    weights and FLOPs scaled so the priors put the step at the fastest TPOT measured and the
    prefill at half the fastest TTFT (`fastest`: seconds); no KV-cache limit is known. Good for
    reading another load of a measured workload, never for another workload or GPU."""
    tpot_s, ttft_s = fastest
    eta_bw, eta_f = 0.7, 0.45  # the priors' medians (planner.engine.step.PRIOR_MEDIAN)
    budget, seqs, basis = engine_limits(engine, "", {})
    return EngineSpec(
        engine=engine,
        gpu=gpu,
        tp=tp,
        weight_read_bytes=1.0,
        matmul_flops_per_token=0.5 * ttft_s * eta_f / max(isl, 1.0),
        attention_flops_per_token_ctx=0.0,
        kv_bytes_per_token=0.0,
        kv_budget_bytes=0.0,
        mem_bw_bytes_s=1.0 / (tpot_s * eta_bw * eta_bw),
        peak_flops=1.0,
        token_budget=budget,
        max_seqs=seqs,
        limits_basis=basis,
        physics="empirical: no model or GPU facts, the step law's shape scaled to the levels",
    )


def engine_limits(engine: str, launch: str, engine_args: dict[str, str]) -> tuple[int, int, str]:
    """(token budget per step, most sequences at once, their basis): stated beats default."""
    default_budget, default_seqs = _DEFAULT_LIMITS.get(engine, _FALLBACK_LIMITS)
    budget = _stated(launch, engine_args, _ARG_NAMES["token_budget"])
    seqs = _stated(launch, engine_args, _ARG_NAMES["max_seqs"])
    said = []
    said.append(
        f"{budget} tokens per step (stated)"
        if budget
        else f"{default_budget} tokens per step ({engine} default)"
    )
    said.append(
        f"{seqs} sequences (stated)" if seqs else f"{default_seqs} sequences ({engine} default)"
    )
    return budget or default_budget, seqs or default_seqs, ", ".join(said)


def _stated(launch: str, engine_args: dict[str, str], names: tuple[str, ...]) -> int | None:
    for name in names:
        for key in (name, name.replace("_", "-")):
            text = (engine_args.get(key) or "").strip()
            if text.isdigit() and int(text) > 0:
                return int(text)
        pattern = rf"--{name.replace('_', '[-_]')}[ =]+(\d+)"
        found = re.search(pattern, launch)
        if found and int(found.group(1)) > 0:
            return int(found.group(1))
    return None
