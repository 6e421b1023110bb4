"""How a person reads the catalog's keys: engines, GPUs, precisions, TP and data provenance in
their proper spelling (vLLM, TensorRT-LLM, H100 SXM 80GB). Stored keys and JSON keep the
canonical names (planner.curves.load); reports.names builds option and curve names on these.
"""

from __future__ import annotations

from planner.curves.names import canonical_engine, canonical_gpu

# Canonical engine name (planner.curves.load.canonical_engine) -> how the project spells it.
ENGINE_NAMES = {
    "vllm": "vLLM",
    "tensorrt-llm": "TensorRT-LLM",
    "sglang": "SGLang",
    "tgi": "TGI",
    "llama.cpp": "llama.cpp",
    "other": "other engine",
}
# What a curve's provenance means on a chart or a page: only a probe run here is "measured".
PROVENANCE_WORDS = {
    "measured": "measured",
    "imported": "measured (imported)",
    "published": "published",
    "projected": "projected",
    "adjusted": "adjusted",
    "simulated": "simulated",
}


def engine_name(engine: str) -> str:
    """'tensorrt-llm' / 'trtllm' -> 'TensorRT-LLM'; an unknown engine as given."""
    return ENGINE_NAMES.get(canonical_engine(engine), engine.strip())


def gpu_name(gpu: str | None) -> str:
    """'H100-SXM-80GB' -> 'H100 SXM 80GB' (the catalog's name, spaced); None -> 'GPU not stated'."""
    if not gpu:
        return "GPU not stated"
    return canonical_gpu(gpu).replace("-", " ")


def precision_name(precision: str | None) -> str:
    """'fp8' -> 'FP8'; None -> 'precision not stated'."""
    return precision.upper() if precision else "precision not stated"


def provenance_word(provenance: str) -> str:
    """What kind of data a curve is, for a legend: 'published', 'projected', 'measured'..."""
    return PROVENANCE_WORDS.get(provenance, provenance)


def tp_text(tp: int | None) -> str:
    """'TP2', or 'TP unknown' (the source did not say)."""
    return f"TP{tp}" if tp else "TP unknown"


def engine_tp(engine: str, tp: int | None) -> str:
    """'vLLM TP2', or 'vLLM (TP unknown)'."""
    return f"{engine_name(engine)} {tp_text(tp) if tp else '(TP unknown)'}"
