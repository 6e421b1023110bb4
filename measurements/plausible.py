"""The invariants every stored level holds, whichever door it came through (an importer, the
probe, a restore): a level's statistics of one metric in order (min <= p50 <= ... <= p99 <= max,
the mean between min and max), no more requests completed than were sent (at most
MAX_COMPLETED_PER_LEVEL when the sent count is unknown), and loads and token
counts within physical bounds. RunFile's Level checks them, so a file or row that breaks one is
refused with the level and the numbers named, before anything is stored.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from measurements.run_file import Level, Metric

# Ordered statistics of one latency metric; the mean and std are checked apart.
ORDER = ("min", "p50", "p90", "p95", "p99", "max")
# Rounding slack: files write statistics rounded (AIPerf and vLLM to 2 decimals, some to 0.1 ms).
TOLERANCE_MS = 0.051
MAX_LOAD = 1e6  # concurrent streams or requests/s: far above any one deployment
MAX_TOKENS_PER_REQUEST = 2**24  # 16.8 M: beyond any model's context window
MAX_TOK_S = 1e9  # tokens/s: a thousand times the largest fleet's
MAX_LATENCY_MS = 1e9  # 11.6 days for one request, one token or one gap
MAX_GPU_POWER_W = 5000.0  # one GPU's board power: over three times a GB300's 1,400 W
MAX_SPAN_S = 1e7  # a send time 116 days from its level's start
# Requests completed in one level whose sent count is unknown (else completed <= sent bounds
# it): 10 M, a thousand requests/s for almost three hours, far beyond any benchmark's level.
MAX_COMPLETED_PER_LEVEL = 10**7


def metric_problem(name: str, value: float) -> str | None:
    """Why a metric's value is beyond what any instrument could give (None when plausible)."""
    if name.endswith("_tok_s"):
        ceiling, unit = MAX_TOK_S, "tok/s"
    elif name.endswith("_ms"):
        ceiling, unit = MAX_LATENCY_MS, "ms"
    elif name.endswith("_w"):
        ceiling, unit = MAX_GPU_POWER_W, "W per GPU"
    else:  # requests/s and concurrent requests
        ceiling, unit = MAX_LOAD, ""
    if value > ceiling:
        return f"{name} {value:g} is beyond {ceiling:g} {unit}".rstrip()
    return None


def sample_problems(send_s: float | None, times_ms: Iterable[tuple[str, float]]) -> list[str]:
    """What no clock could have measured in one request: a send time beyond MAX_SPAN_S of its
    level's start, a negative time or gap, or one beyond MAX_LATENCY_MS."""
    problems = []
    if send_s is not None and abs(send_s) > MAX_SPAN_S:
        problems.append(f"send_s {send_s:g} is more than {MAX_SPAN_S:g} s from the level start")
    for what, value in times_ms:
        if not 0 <= value <= MAX_LATENCY_MS:
            problems.append(f"{what} {value:g} is not between 0 and {MAX_LATENCY_MS:g} ms")
    return problems


def level_problems(level: Level) -> list[str]:
    """What makes this level impossible, in words (empty when it is plausible)."""
    problems = list(_count_problems(level))
    problems.extend(_order_problems(level.metrics))
    if level.load_value > MAX_LOAD:
        problems.append(f"load {level.load_value:g} is beyond {MAX_LOAD:g}")
    return problems


def repeated_levels(levels: Sequence[Level]) -> list[str]:
    """Levels that repeat an earlier one exactly (same load, counts and metrics): a file written
    twice over, which would count one measurement as two."""
    by_load: dict[tuple[str, float], list[int]] = defaultdict(list)
    for index, level in enumerate(levels):
        by_load[(str(level.load_kind), level.load_value)].append(index)
    problems: list[str] = []
    for (kind, value), indices in by_load.items():
        if len(indices) < 2:  # the usual case: nothing to compare
            continue
        seen: dict[str, int] = {}
        for index in indices:
            key = levels[index].model_dump_json(exclude={"samples", "notes"})
            if key in seen:
                earlier = seen[key]
                problems.append(f"level {index} repeats level {earlier} exactly ({kind} {value:g})")
            seen.setdefault(key, index)
    return problems


def _count_problems(level: Level) -> Iterable[str]:
    sent, completed, failed = level.requests_sent, level.completed, level.failed
    if sent is not None and completed is not None and completed > sent:
        yield f"{completed} requests completed but only {sent} were sent"
    if sent is None and completed is not None and completed > MAX_COMPLETED_PER_LEVEL:
        yield (
            f"completed {completed:,} with no requests_sent is beyond the "
            f"{MAX_COMPLETED_PER_LEVEL:,} requests one level may hold"
        )
    if (
        sent is not None
        and completed is not None
        and failed is not None
        and completed + failed > sent
    ):
        yield f"{completed} completed + {failed} failed is more than the {sent} sent"
    for total, what in ((level.output_tokens_total, "output"), (level.input_tokens_total, "input")):
        if total is not None and completed:
            per_request = total / completed
            if per_request > MAX_TOKENS_PER_REQUEST:
                yield (
                    f"{total:,} {what} tokens over {completed} requests is {per_request:,.0f} "
                    f"per request, beyond any context window ({MAX_TOKENS_PER_REQUEST:,})"
                )


def _order_problems(metrics: Iterable[Metric]) -> Iterable[str]:
    """Per metric and origin: the statistics out of order."""
    stats: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for metric in metrics:
        stat, _, rest = metric.name.partition("_")
        if stat in (*ORDER, "mean") and rest.endswith("_ms"):
            stats[(rest, str(metric.origin))][stat] = metric.value
    for (name, _), values in stats.items():
        given = [(s, values[s]) for s in ORDER if s in values]
        for (low_stat, low), (high_stat, high) in itertools.pairwise(given):
            if low > high + TOLERANCE_MS:
                yield f"{low_stat}_{name} {low:g} is above {high_stat}_{name} {high:g}"
        mean = values.get("mean")
        low_end, high_end = values.get("min"), values.get("max")
        if mean is not None and low_end is not None and mean < low_end - TOLERANCE_MS:
            yield f"mean_{name} {mean:g} is below min_{name} {low_end:g}"
        if mean is not None and high_end is not None and mean > high_end + TOLERANCE_MS:
            yield f"mean_{name} {mean:g} is above max_{name} {high_end:g}"
