"""Recompute a level's aggregates from its per-request samples by capplan's canonical definitions
(the design notes, "Canonical metrics"); the math itself lives in measurements/aggregate.py."""

from __future__ import annotations

from collections.abc import Sequence

from measurements import aggregate
from measurements.aggregate import PERCENTILES
from measurements.importers.common import MetricSet
from measurements.run_file import Origin, RequestSample

__all__ = ["PERCENTILES", "add_distribution", "one_token_per_chunk", "recompute", "tpot_ms"]


def add_distribution(metrics: MetricSet, metric: str, values_ms: Sequence[float]) -> None:
    """Add RECOMPUTED mean and p50/p90/p95/p99 of one latency metric (nothing when no values)."""
    summary = aggregate.distribution(values_ms)
    if summary is None:
        return
    for name, value in summary.named(metric, spread=False):
        metrics.add(name, value, origin=Origin.RECOMPUTED)


def tpot_ms(sample: RequestSample) -> float | None:
    """(e2e - ttft) / (output_tokens - 1), defined only for more than one output token."""
    return aggregate.tpot_ms(sample.ttft_ms, sample.e2e_ms, sample.output_tokens)


def one_token_per_chunk(samples: Sequence[RequestSample]) -> bool:
    """True when every sample streamed exactly one token per chunk (gaps + 1 == output tokens)."""
    return bool(samples) and all(
        s.output_tokens is not None and len(s.chunk_gaps_ms) + 1 == s.output_tokens for s in samples
    )


def recompute(
    metrics: MetricSet, samples: Sequence[RequestSample], duration_s: float | None
) -> list[str]:
    """Add RECOMPUTED metrics for the successful samples; return notes on what could not be."""
    ok = [s for s in samples if s.ok]
    notes: list[str] = []
    add_distribution(metrics, "ttft", [s.ttft_ms for s in ok if s.ttft_ms is not None])
    add_distribution(metrics, "tpot", [v for v in map(tpot_ms, ok) if v is not None])
    add_distribution(metrics, "e2e", [s.e2e_ms for s in ok if s.e2e_ms is not None])
    gaps = [gap for s in ok for gap in s.chunk_gaps_ms]
    add_distribution(metrics, "icl", gaps)
    if gaps and one_token_per_chunk(ok):
        add_distribution(metrics, "itl", gaps)
    elif gaps and any(s.output_tokens is None for s in ok):
        notes.append("per-token itl not recomputed: output token counts unknown")
    elif gaps:
        notes.append("per-token itl not recomputed: some chunks carried several tokens")
    _add_rates(metrics, ok, duration_s)
    return notes


def _add_rates(metrics: MetricSet, ok: Sequence[RequestSample], duration_s: float | None) -> None:
    if not duration_s or not ok:
        return
    outputs = [s.output_tokens for s in ok]
    if all(n is not None for n in outputs):
        output_total = sum(n or 0 for n in outputs)
        metrics.add("output_tok_s", output_total / duration_s, origin=Origin.RECOMPUTED)
        inputs = [s.input_tokens for s in ok]
        if all(n is not None for n in inputs):
            total = output_total + sum(n or 0 for n in inputs)
            metrics.add("total_tok_s", total / duration_s, origin=Origin.RECOMPUTED)
    metrics.add("request_s", len(ok) / duration_s, origin=Origin.RECOMPUTED)
