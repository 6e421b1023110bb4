"""The seed article's qualitative factors (shared/seed-article.txt), decided per factor:
multi_lora and weekly_model_changes prefer vLLM (native LoRA switching; an 18 s start against a
14-minute TensorRT-LLM engine build per change, whose rebuild cost and lead time are given in
numbers); structured_output and consumer_gpus only annotate (the runs carry no capability probe,
so it says "not checked"; the priced fleet is data-centre GPUs)."""

from __future__ import annotations

from planner.inputs.scenario import FactorsSpec
from planner.sizing.options import SizedOption

WEEKS_PER_MONTH = 52 / 12
VLLM = "vllm"
TRTLLM = "tensorrt-llm"


SEED = {
    "multi_lora": "seed article: vLLM switches LoRA adapters natively with Punica kernels; "
    "TensorRT-LLM needs a complex runtime reload",
    "weekly_model_changes": "seed article: vLLM serves a new checkpoint after an 18 s start; "
    "TensorRT-LLM rebuilds its engine in 14 min per change, and rollback is not instant unless "
    "the old engine was cached",
    "structured_output": "seed article: vLLM integrates Outlines and XGrammar natively; "
    "TensorRT-LLM needs C++ plugins or a proxy such as LiteLLM in front of Triton",
    "consumer_gpus": "seed article: TensorRT-LLM builds for RTX 4090/3090/5090 cards often hit "
    "driver and compute-capability mismatches, while vLLM runs on them",
}
NEEDS = {
    "multi_lora": "multi-LoRA is required",
    "weekly_model_changes": "the model changes weekly",
}


def preferring(factors: FactorsSpec | None) -> list[str]:
    """Factors set by the user that prefer vLLM over TensorRT-LLM."""
    if factors is None:
        return []
    return [name for name in NEEDS if getattr(factors, name)]


def factor_notes(option: SizedOption, factors: FactorsSpec | None) -> tuple[str, ...]:
    """One sentence per user-set factor on what it means for this option, with its source."""
    return tuple(text for _, text in _keyed_notes(option, factors))


def _keyed_notes(option: SizedOption, factors: FactorsSpec | None) -> list[tuple[str, str]]:
    if factors is None:
        return []
    notes = []
    if factors.multi_lora:
        notes.append(("multi_lora", _lora_note(option)))
    if factors.weekly_model_changes:
        notes.append(("weekly_model_changes", _weekly_note(option)))
    if factors.structured_output:
        text = (
            "structured output: not checked on this run (no capability probe is recorded); "
            + SEED["structured_output"]
        )
        notes.append(("structured_output", text))
    if factors.consumer_gpus:
        notes.append(("consumer_gpus", _consumer_note(option)))
    return notes


def _lora_note(option: SizedOption) -> str:
    if option.engine == VLLM:
        return f"multi-LoRA: vLLM switches adapters natively ({SEED['multi_lora']})"
    if option.engine == TRTLLM:
        return f"multi-LoRA: TensorRT-LLM is the harder engine for it ({SEED['multi_lora']})"
    return f"multi-LoRA: the seed article does not cover {option.engine}; check its support"


def _weekly_note(option: SizedOption) -> str:
    if option.engine != TRTLLM:
        cold = option.curve.cold_start_s
        start = f"{cold:g} s start measured on this run" if cold else "start not measured here"
        return (
            f"weekly model changes: {option.engine} needs no engine build per change ({start}; "
            f"{SEED['weekly_model_changes']})"
        )
    build_s = option.curve.engine_build_s
    if build_s is None:
        return (
            "weekly model changes: this run has no measured engine build time, so the rebuild "
            f"cost is not estimated ({SEED['weekly_model_changes']})"
        )
    weekly_usd = (
        WEEKS_PER_MONTH * build_s / 3600 * option.gpus_per_replica * option.usd_per_gpu_hour
    )
    advice = (
        f"; set model_updates_per_month to {WEEKS_PER_MONTH:.2f} to price them"
        if option.ops_cost_usd + 0.005 < weekly_usd
        else ""
    )
    return (
        f"weekly model changes: each change waits for a {build_s / 60:.0f}-minute engine build "
        f"before serving; {WEEKS_PER_MONTH:.2f} builds/month x {option.gpus_per_replica} GPU(s) "
        f"cost an estimated ${weekly_usd:,.2f}/month, the plan counts "
        f"${option.ops_cost_usd:,.2f}/month{advice} ({SEED['weekly_model_changes']})"
    )


def _consumer_note(option: SizedOption) -> str:
    if option.engine == VLLM:
        return (
            "consumer GPUs: vLLM also runs on the consumer cards, one engine for both "
            f"({SEED['consumer_gpus']})"
        )
    if option.engine == TRTLLM:
        return (
            "consumer GPUs: the consumer cards would need a second engine (vLLM) next to "
            f"TensorRT-LLM ({SEED['consumer_gpus']})"
        )
    return f"consumer GPUs: the seed article does not cover {option.engine}; check it runs there"


def factor_suffix(option: SizedOption, factors: FactorsSpec | None, decision: str | None) -> str:
    """The factor notes for the reason, less the multi-LoRA one when the decision already cites
    it (the weekly note stays: it carries the rebuild numbers)."""
    skip = "multi_lora" if decision else ""
    rest = [text for key, text in _keyed_notes(option, factors) if key != skip]
    return f" Factors: {'; '.join(rest)}." if rest else ""


# --- cost-only choice and the sentences -------------------------------------------------------

# Flags that weaken what "meets every SLA target" means; the reason must say them.
