"""Warnings and flags as a person reads them: 'curve not used' lines that share a reason merged
into one naming every curve, a curve's flags without restatements or repeats that differ only in
their numbers, and each flag cut to its gist for one-line lists."""

from __future__ import annotations

import re
from collections.abc import Sequence

from reports.names import engine_name, gpu_name

_NOT_USED = re.compile(
    r"^(\d+) curve\(s\) not used: (.+?) on (\S+) (TP\d+|TP not stated|TP unknown): (.+)$"
)
_CANONICAL = re.compile(r"\b(vllm|tensorrt-llm|sglang) on ([A-Z]\d+\S*-\d+GB)")
_COUNTED = re.compile(r"\b(\d+) curve\(s\)")
# Numbers, but not a statistic's name (p50, p90, p99): flags on two statistics are two kinds.
_NUMBERS = re.compile(r"(?<![pP\d])\d+(?:[.,]\d+)*")


def group_warnings(warnings: Sequence[str]) -> list[str]:
    """Plan warnings with repeats merged: 'curve not used' lines that share a reason become one
    line naming every curve; identical lines appear once."""
    grouped: dict[str, list[str]] = {}
    order: list[str] = []
    for text in warnings:
        match = _NOT_USED.match(text)
        key = match[5] if match else text
        if key not in grouped:
            grouped[key] = []
            order.append(key)
        if match:
            grouped[key].append(f"{engine_name(match[2])}|{gpu_name(match[3])}|{match[4]}")
    lines = []
    for key in order:
        subjects = list(dict.fromkeys(grouped[key]))
        if not subjects:
            lines.append(_CANONICAL.sub(_proper, _COUNTED.sub(_plural, key)))
            continue
        count = len(subjects)
        lines.append(
            f"{count} curve{'s' if count != 1 else ''} not used ({_curves(subjects)}): {key}"
        )
    return lines


def _proper(match: re.Match[str]) -> str:
    return f"{engine_name(match[1])} on {gpu_name(match[2])}"


def _plural(match: re.Match[str]) -> str:
    return f"{match[1]} curve{'' if match[1] == '1' else 's'}"


def _curves(subjects: list[str]) -> str:
    """'vLLM TP2, TP4 on H100 SXM 80GB; TensorRT-LLM TP1 on H200 SXM 141GB'."""
    by_family: dict[tuple[str, str], list[str]] = {}
    for subject in subjects:
        engine, gpu, tp = subject.split("|")
        by_family.setdefault((engine, gpu), []).append(tp)
    return "; ".join(f"{e} {', '.join(tps)} on {g}" for (e, g), tps in by_family.items())


# Fit-level restatements of a curve flag ("TTFT p99 fitted to values whose statistic is
# unstated" repeats "TTFT statistic not stated by source"): dropped from the grouped list.
_RESTATED = ("fitted to values whose statistic is unstated", "checked against values whose")


def group_flags(flags: Sequence[str]) -> list[str]:
    """A curve's or an option's flags without restatements and repeats that differ only in their
    numbers (one line per kind of flag, the first instance kept, with a count)."""
    kept: dict[str, tuple[str, int]] = {}
    for flag in dict.fromkeys(flags):  # the same flag twice is one flag
        if any(marker in flag for marker in _RESTATED):
            continue
        shape = _NUMBERS.sub("#", flag)
        first, count = kept.get(shape, (flag, 0))
        kept[shape] = (first, count + 1)
    return [
        first if n == 1 else f"{first} (and {n - 1} more like it)" for first, n in kept.values()
    ]


TWIN_MARK = "(same architecture)"
_GIST_END = re.compile(r": | \(")


def flag_gist(flag: str) -> str:
    """A flag up to its first explanation ('...ceiling of 48.2 tok/s (1 x H100...)' loses the
    parenthesis), for a one-line list."""
    if flag.endswith(TWIN_MARK):  # the twin's name and why its data counts are the gist
        return flag
    cut = _GIST_END.search(flag)
    return flag[: cut.start()] if cut and cut.start() > 10 else flag
