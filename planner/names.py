"""The names a person reads: engines, GPUs, precisions, options and data provenance in their proper
spelling (vLLM, TensorRT-LLM, H100 SXM 80GB). Stored keys and JSON keep the canonical names; every
shell that shows a name to a person asks here, so each has one spelling in one place.
"""

from __future__ import annotations

from planner.curves import LoadCurve, canonical_engine, canonical_gpu
from planner.options import OptionKey

# Canonical engine name (planner.curves.canonical_engine) -> how the project spells it.
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
    """'TP2', or 'TP not stated'."""
    return f"TP{tp}" if tp else "TP not stated"


def engine_tp(engine: str, tp: int | None) -> str:
    """'vLLM TP2', or 'vLLM (TP not stated)'."""
    return f"{engine_name(engine)} {tp_text(tp) if tp else '(TP not stated)'}"


def option_name(key: OptionKey, *, precision: bool = True) -> str:
    """'TensorRT-LLM TP2 on H200 SXM 141GB (FP8)': an option as a person reads it."""
    text = f"{engine_tp(key.engine, key.tp)} on {gpu_name(key.gpu)}"
    return f"{text} ({precision_name(key.precision)})" if precision else text


def short_option_names(keys: list[OptionKey]) -> list[str]:
    """Names for options compared side by side, dropping what they all share: 'vLLM TP2' and
    'vLLM TP4' when both run on the same GPU at the same precision."""
    same_gpu = len({key.gpu for key in keys}) == 1
    same_precision = len({key.precision for key in keys}) == 1
    names = []
    for key in keys:
        text = engine_tp(key.engine, key.tp)
        if not same_gpu:
            text += f" on {gpu_name(key.gpu)}"
        if not same_precision:
            text += f" ({precision_name(key.precision)})"
        names.append(text)
    return names


def curve_name(curve: LoadCurve) -> str:
    """'vLLM 0.7.3 · H100 SXM 80GB x8 · TP2 · 1024/1024': a measured curve as a person reads it."""
    key = curve.key
    version = f" {key.engine_version}" if key.engine_version else ""
    count = f" x{key.gpu_count}" if key.gpu_count else ""
    workload = f"{key.isl or '?'}/{key.osl or '?'}"
    return (
        f"{engine_name(key.engine)}{version} · {gpu_name(key.gpu)}{count} · {tp_text(key.tp)} · "
        f"{workload}"
    )
