"""The canonical aggregate math shared by the probe and the importers (the design notes, "Canonical
metrics"): linear-interpolation percentiles, TPOT, per-token gaps, the steady-state window and
what happened inside it. Pure functions over plain numbers; no I/O, no clock."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from measurements.run_file import Metric, Origin

PERCENTILES = (50, 90, 95, 99)


@dataclass(frozen=True, slots=True)
class Distribution:
    """Summary of one latency metric over requests (or tokens, or chunks), in milliseconds."""

    count: int
    mean: float
    p50: float
    p90: float
    p95: float
    p99: float
    std: float
    min: float
    max: float

    def named(self, metric: str, *, spread: bool = True) -> list[tuple[str, float]]:
        """(`<stat>_<metric>_ms`, value) pairs: mean, p50..p99, and std/min/max when `spread`."""
        pairs = [(f"mean_{metric}_ms", self.mean)]
        pairs += [(f"p{pct}_{metric}_ms", getattr(self, f"p{pct}")) for pct in PERCENTILES]
        if spread:
            pairs += [
                (f"{stat}_{metric}_ms", getattr(self, stat)) for stat in ("std", "min", "max")
            ]
        return pairs


def distribution(values: Sequence[float]) -> Distribution | None:
    """Mean, linear-interpolation percentiles, std, min and max; None when there are no values."""
    if not values:
        return None
    array = np.asarray(values, dtype=float)
    # numpy's default "linear" method is the canonical definition and what vLLM itself uses.
    p50, p90, p95, p99 = (float(v) for v in np.percentile(array, PERCENTILES))
    return Distribution(
        count=len(array),
        mean=float(array.mean()),
        p50=p50,
        p90=p90,
        p95=p95,
        p99=p99,
        std=float(array.std()),
        min=float(array.min()),
        max=float(array.max()),
    )


def tpot_ms(ttft_ms: float | None, e2e_ms: float | None, output_tokens: int | None) -> float | None:
    """(e2e - ttft) / (output_tokens - 1), defined only for more than one output token."""
    if ttft_ms is None or e2e_ms is None or output_tokens is None or output_tokens <= 1:
        return None
    return (e2e_ms - ttft_ms) / (output_tokens - 1)


def chunk_gaps(times_s: Sequence[float]) -> list[float]:
    """Gaps between consecutive chunk times (same unit as the times)."""
    return [later - earlier for earlier, later in itertools.pairwise(times_s)]


def per_token_gaps(times_s: Sequence[float], tokens: Sequence[int]) -> list[float]:
    """Per-token gaps: the gap before a chunk carrying k tokens counts k times as gap / k.

    The first chunk's tokens have no gap (they belong to TTFT), so the gaps sum to
    last chunk time - first chunk time, i.e. e2e - ttft."""
    gaps: list[float] = []
    for gap, count in zip(chunk_gaps(times_s), tokens[1:], strict=True):
        gaps.extend([gap / count] * count)
    return gaps


@dataclass(frozen=True, slots=True)
class SteadyWindow:
    """The steady-state window of one level, in clock seconds, and how it was chosen."""

    level_start_s: float
    start_s: float
    end_s: float
    note: str | None = None

    @property
    def length_s(self) -> float:
        """Window length in seconds."""
        return self.end_s - self.start_s

    def holds(self, at_s: float) -> bool:
        """True when `at_s` lies inside the window (start included, end excluded)."""
        return self.start_s <= at_s < self.end_s


@dataclass(frozen=True, slots=True)
class WindowRule:
    """How a level's window is cut (see `steady_window`)."""

    ramp_fraction: float
    drain_fraction: float
    fill_count: int | None = None  # closed loop: in-flight target; the window waits for it
    cut_at_s: float | None = None  # duration mode: in-flight requests were cut at this time


def steady_window(
    level_start_s: float, send_s: Sequence[float], last_s: Sequence[float], rule: WindowRule
) -> SteadyWindow:
    """Choose the steady-state window from send times and last-activity times.

    span = first send .. last activity (or the cut time in duration mode);
    start = the later of first send + ramp_fraction x span and, in a closed loop, the send of
    the `fill_count`-th request (the moment the target concurrency was first in flight);
    end = the cut time in duration mode (the load was held until then), else the earlier of
    the last send (after it the in-flight count only drains) and span end - drain_fraction x span.
    An empty window falls back to the whole span, with a note saying so."""
    sends = sorted(send_s)
    first = sends[0]
    span_end = rule.cut_at_s if rule.cut_at_s is not None else max([*last_s, *sends])
    span = span_end - first
    start = first + rule.ramp_fraction * span
    if rule.fill_count is not None and len(sends) >= rule.fill_count:
        start = max(start, sends[rule.fill_count - 1])
    if rule.cut_at_s is not None:
        end = rule.cut_at_s
    else:
        end = min(sends[-1], span_end - rule.drain_fraction * span)
    if end > start:
        return SteadyWindow(level_start_s, start, end)
    note = "no steady state between ramp-up and drain (too few requests); whole span used"
    return SteadyWindow(level_start_s, first, max(span_end, first + 1e-9), note)


def tokens_in_window(
    times_s: Sequence[float], tokens: Sequence[float], window: SteadyWindow
) -> float:
    """Tokens whose chunk arrived inside the window (straddling requests count in part)."""
    return float(sum(n for t, n in zip(times_s, tokens, strict=True) if window.holds(t)))


def peak_overlap(intervals: Sequence[tuple[float, float]]) -> int:
    """The largest number of [start, end) intervals open at one time."""
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    peak = current = 0
    for _, step in events:  # ends sort before starts at equal times: [start, end) semantics
        current += step
        peak = max(peak, current)
    return peak


class TimedRequest(Protocol):
    """What the level metrics read from one request (the probe's RequestRecord has it)."""

    @property
    def send_s(self) -> float: ...
    @property
    def first_token_s(self) -> float | None: ...
    @property
    def end_s(self) -> float | None: ...
    @property
    def chunk_times_s(self) -> tuple[float, ...]: ...
    @property
    def chunk_tokens(self) -> tuple[int, ...]: ...
    @property
    def input_tokens(self) -> int | None: ...
    @property
    def output_tokens(self) -> int | None: ...
    @property
    def tokens_exact(self) -> bool: ...


def latency_metrics(ok: Sequence[TimedRequest], notes: list[str]) -> list[Metric]:
    """ttft, tpot, itl (per token), icl (per chunk), e2e and e2e/token over successful requests."""
    timed = [
        (r, 1000 * (r.first_token_s - r.send_s), 1000 * (r.end_s - r.send_s))
        for r in ok
        if r.first_token_s is not None and r.end_s is not None
    ]
    ttft = [t for _, t, _ in timed]
    e2e = [e for _, _, e in timed]
    tpot = [v for r, t, e in timed if (v := tpot_ms(t, e, r.output_tokens)) is not None]
    per_token = [e / r.output_tokens for r, _, e in timed if r.output_tokens]
    icl = [1000 * gap for r in ok for gap in chunk_gaps(r.chunk_times_s)]
    series = [("ttft", ttft), ("tpot", tpot), ("e2e", e2e), ("e2e_per_token", per_token)]
    series.append(("icl", icl))
    if all(r.tokens_exact for r in ok):
        itl = [1000 * g for r in ok for g in per_token_gaps(r.chunk_times_s, r.chunk_tokens)]
        series.append(("itl", itl))
    elif ok:
        notes.append(
            "per-token itl not reported: the server did not say how many tokens each chunk "
            "carried (no continuous usage); inter-chunk gaps (icl) kept"
        )
    metrics = [
        Metric(name=name, value=value)
        for metric, values in series
        if (summary := distribution(values)) is not None
        for name, value in summary.named(metric)
    ]
    if tpot and (mean_tpot := sum(tpot) / len(tpot)) > 0:
        metrics.append(Metric(name="stream_tok_s", value=1000 / mean_tpot, origin=Origin.DERIVED))
    return metrics


def window_metrics(
    served: Sequence[TimedRequest], completed: Sequence[TimedRequest], window: SteadyWindow
) -> list[Metric]:
    """Rates inside the window: output tokens by chunk arrival (requests straddling an edge
    count in part), input tokens at first token, completed requests at their end."""
    output = sum(tokens_in_window(r.chunk_times_s, _scaled_tokens(r), window) for r in served)
    prefilled = [
        r.input_tokens
        for r in served
        if r.first_token_s is not None
        and r.input_tokens is not None
        and window.holds(r.first_token_s)
    ]
    ended = [r for r in completed if r.end_s is not None and window.holds(r.end_s)]
    length = window.length_s
    rates = [
        ("output_tok_s", output / length),
        ("input_tok_s", sum(prefilled) / length),
        ("total_tok_s", (output + sum(prefilled)) / length),
    ]
    if completed:  # no completion at all is "unknown", never a rate of 0
        rates.append(("request_s", len(ended) / length))
    return [Metric(name=name, value=value) for name, value in rates]


def _scaled_tokens(request: TimedRequest) -> list[float]:
    # Without per-chunk counts, spread the server's total over the chunks so rates stay right.
    counted = sum(request.chunk_tokens)
    total = request.output_tokens
    scale = total / counted if not request.tokens_exact and total and counted else 1.0
    return [n * scale for n in request.chunk_tokens]
