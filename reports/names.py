"""The names a person reads: engines, GPUs, precisions, options and data provenance in their proper
spelling (vLLM, TensorRT-LLM, H100 SXM 80GB). Stored keys and JSON keep the canonical names; every
shell that shows a name to a person asks here, so each has one spelling in one place.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from planner.curves.load import LoadCurve
from planner.curves.spelling import (
    ENGINE_NAMES,
    PROVENANCE_WORDS,
    engine_name,
    engine_tp,
    gpu_name,
    precision_name,
    provenance_word,
    tp_text,
)
from planner.sizing.options import Option, OptionKey, RejectedOption

__all__ = [
    "ENGINE_NAMES",
    "PROVENANCE_WORDS",
    "curve_name",
    "engine_name",
    "engine_tp",
    "gpu_name",
    "option_name",
    "precision_name",
    "provenance_word",
    "short_option_names",
    "tp_text",
]


def option_name(key: OptionKey, *, precision: bool = True) -> str:
    """'TensorRT-LLM TP2 on H200 SXM 141GB (FP8)': an option as a person reads it."""
    layout = f" {key.layout}" if key.layout else ""
    text = f"{engine_tp(key.engine, key.tp)}{layout} on {gpu_name(key.gpu)}"
    return f"{text} ({precision_name(key.precision)})" if precision else text


def serving_name(key: OptionKey, others: Iterable[OptionKey] = ()) -> str:
    """'TensorRT-LLM TP2' (with its layout): what serves, the GPU left out; with the precision
    when another of `others` differs only in precision (one name would name both)."""
    text = engine_tp(key.engine, key.tp) + (f" {key.layout}" if key.layout else "")
    same = (key.engine, key.tp, key.gpu, key.layout)
    if any((o.engine, o.tp, o.gpu, o.layout) == same and o != key for o in others):
        text += f" ({precision_name(key.precision)})"
    return text


def short_option_names(keys: list[OptionKey]) -> list[str]:
    """Names for options compared side by side, dropping what they all share: 'vLLM TP2' and
    'vLLM TP4' when both run on the same GPU at the same precision."""
    same_gpu = len({key.gpu for key in keys}) == 1
    same_precision = len({key.precision for key in keys}) == 1
    names = []
    for key in keys:
        text = engine_tp(key.engine, key.tp) + (f" {key.layout}" if key.layout else "")
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


def rejected_lines(options: Sequence[Option]) -> list[str]:
    """'TensorRT-LLM TP1 on H200 SXM 141GB (FP8): TTFT fails ...', one per rejected option, the
    TP always named (a reason is true of that TP only)."""
    return [
        f"{option_name(o.key)}: {o.reason}"
        for o in options
        if isinstance(o, RejectedOption) and o.reason
    ]
