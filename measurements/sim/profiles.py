"""Profiles of the simulated engine: the step-time law T(c) = c / (a + b*c) fitted to the seed
article's H100 curves, plus `tiny-fast`, whose steps are so short that the client is the limit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from errors import InputError

StructuredOutputMode = Literal["supported", "ignored", "rejected"]
ToolCallingMode = Literal["supported", "rejected"]


@dataclass(frozen=True, slots=True)
class SimProfile:
    """How one simulated engine behaves: step-time law, limits and which features it answers.

    One decode step takes `step_base_s + step_per_seq_s * batch` seconds and gives one token to
    every running sequence; a request's prompt adds `prefill_per_token_s` per prompt token to the
    step in which it joins (that step also yields its first token).
    """

    name: str
    imitates: str  # the engine whose published curve the law was fitted to ("none" for tiny-fast)
    model: str  # served model id; always starts with "sim-" so nobody mistakes it for a real one
    engine_version: str
    step_base_s: float  # a: fixed cost of one decode step (weights read once per step)
    step_per_seq_s: float  # b: added cost per running sequence
    prefill_per_token_s: float
    max_batch: int  # running sequences at most; later requests wait in a FIFO queue
    max_model_len: int  # prompt + output tokens at most, as vLLM's --max-model-len
    structured_output: StructuredOutputMode  # "ignored": answers free text, as if unconstrained
    tool_calling: ToolCallingMode
    lora_adapters: tuple[str, ...] = ()
    mean_natural_output_tokens: int = 200  # mean length when EOS is honoured (ignore_eos false)
    description: str = ""

    def step_time_s(self, batch: float, prefill_tokens: float = 0) -> float:
        """Duration of one step with `batch` running sequences and `prefill_tokens` joining."""
        return (
            self.step_base_s
            + self.step_per_seq_s * batch
            + self.prefill_per_token_s * prefill_tokens
        )

    def decode_tok_s(self, concurrency: int) -> float:
        """Steady-state output tok/s of pure decode at `concurrency` streams (queue beyond max)."""
        running = min(concurrency, self.max_batch)
        return running / self.step_time_s(running)

    def closed_loop_tok_s(self, concurrency: int, isl: int, osl: int) -> float:
        """Expected output tok/s of a closed loop: each request needs `osl` steps plus the wait
        for the next step boundary; its prefill is spread over those steps."""
        slots = min(concurrency, self.max_batch)
        # A slot is busy for osl steps, then idle for one while the next request arrives.
        busy = slots * osl / (osl + 1)
        joining_tokens = slots * isl / (osl + 1)
        step_s = self.step_time_s(0, joining_tokens) + self.step_per_seq_s * busy
        return busy / step_s


@dataclass(frozen=True, slots=True)
class StepLawFit:
    """A least-squares fit of T(c) = c / (a + b*c) and its relative residuals per point."""

    step_base_s: float
    step_per_seq_s: float
    residuals_pct: tuple[float, ...]  # (fitted - published) / published * 100, per point


def fit_step_law(concurrency: Sequence[float], output_tok_s: Sequence[float]) -> StepLawFit:
    """Fit a and b of T(c) = c / (a + b*c), minimising the relative error of T.

    c / T = a + b*c is linear in (a, b); weighting each row by T / c makes the residual the
    relative error of T to first order, so small and large concurrencies count alike.
    """
    if len(concurrency) != len(output_tok_s) or len(concurrency) < 2:
        raise InputError(
            "need at least two (concurrency, output tok/s) points of equal count",
            field="output_tok_s",
            value=(len(concurrency), len(output_tok_s)),
        )
    c = np.asarray(concurrency, dtype=float)
    tok_s = np.asarray(output_tok_s, dtype=float)
    step_per_token = c / tok_s
    weight = 1.0 / step_per_token
    design = np.stack([np.ones_like(c), c], axis=1) * weight[:, None]
    (a, b), *_ = np.linalg.lstsq(design, step_per_token * weight, rcond=None)
    fitted = c / (a + b * c)
    residuals = tuple(float(r) for r in (fitted - tok_s) / tok_s * 100.0)
    return StepLawFit(step_base_s=float(a), step_per_seq_s=float(b), residuals_pct=residuals)


# Seed article (measurements/demo/data/seed_article_h100_llama31_70b_fp8.csv), H100, Llama 3.1
# 70B FP8.
# vLLM 0.7.3 at 1/16/64/128 streams: 68.2/1010/2840/3710 tok/s. fit_step_law gives
# a = 13.936 ms, b = 0.14965 ms; fitted 71.0/979.8/2721.9/3868.2 tok/s,
# residuals +4.1 % / -3.0 % / -4.2 % / +4.3 % (the published curve bends more than the law).
# Prefill: the article's 198 ms for 4,000 prompt tokens = 49.5 us per token.
VLLM_H100_LLAMA70B_FP8 = SimProfile(
    name="vllm-h100-llama70b-fp8",
    imitates="vllm",
    model="sim-llama-3.1-70b-fp8",
    engine_version="0.7.3",
    step_base_s=13.936e-3,
    step_per_seq_s=0.14965e-3,
    prefill_per_token_s=49.5e-6,
    max_batch=256,
    max_model_len=16384,
    structured_output="supported",
    tool_calling="supported",
    lora_adapters=("sim-lora-sql", "sim-lora-support"),
    description="vLLM 0.7.3 on one H100, Llama 3.1 70B FP8, as the seed article reports it",
)

# TensorRT-LLM 0.17.0 at 1/16/64/128 streams: 81.4/1240/3620/4890 tok/s. fit_step_law gives
# a = 11.652 ms, b = 0.10560 ms; fitted 85.1/1199.3/3476.4/5085.7 tok/s,
# residuals +4.5 % / -3.3 % / -4.0 % / +4.0 %. Prefill: 142 ms per 4,000 tokens = 35.5 us.
# The article's engine was built with --max_batch_size 128; structured output needs a C++ plugin
# (answered as unconstrained text here) and there is no dynamic multi-LoRA.
TRTLLM_H100_LLAMA70B_FP8 = SimProfile(
    name="trtllm-h100-llama70b-fp8",
    imitates="tensorrt-llm",
    model="sim-llama-3.1-70b-fp8",
    engine_version="0.17.0",
    step_base_s=11.652e-3,
    step_per_seq_s=0.10560e-3,
    prefill_per_token_s=35.5e-6,
    max_batch=128,
    max_model_len=16384,
    structured_output="ignored",
    tool_calling="rejected",
    description="TensorRT-LLM 0.17.0 on one H100, Llama 3.1 70B FP8, as the seed article says",
)

# Not calibrated to any engine: 0.5 ms + 2 us per sequence offers 120k tok/s at 1,024 streams,
# far above what an HTTP client on a small box can read, so the client is what gets measured.
TINY_FAST = SimProfile(
    name="tiny-fast",
    imitates="none",
    model="sim-tiny",
    engine_version="0",
    step_base_s=0.5e-3,
    step_per_seq_s=2e-6,
    prefill_per_token_s=0.01e-6,
    max_batch=4096,
    max_model_len=65536,
    structured_output="supported",
    tool_calling="supported",
    lora_adapters=("sim-tiny-lora",),
    description="very short steps for tests and the probe-overhead benchmark",
)

PROFILES: dict[str, SimProfile] = {
    p.name: p for p in (VLLM_H100_LLAMA70B_FP8, TRTLLM_H100_LLAMA70B_FP8, TINY_FAST)
}


def get_profile(name: str) -> SimProfile:
    """The named profile; unknown names raise InputError listing the known ones."""
    try:
        return PROFILES[name]
    except KeyError:
        raise InputError(
            f"unknown simulator profile; known: {', '.join(sorted(PROFILES))}",
            field="profile",
            value=name,
        ) from None
