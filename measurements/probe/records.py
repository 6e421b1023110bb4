"""One request as the probe recorded it (RequestRecord), and how a level's records become a
RunFile Level: counts, canonical metrics over the steady-state window, samples and notes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from measurements import aggregate
from measurements.aggregate import SteadyWindow
from measurements.probe.config import ProbeConfig
from measurements.probe.send import RequestRecord
from measurements.run_file import Level, LoadKind, Metric, RequestSample

MAX_SAMPLE_GAPS = 200_000  # chunk gaps kept in one level's samples (keeps run files small)
LAG_LIMIT_MS = 10.0
LAG_LIMIT_GAP_SHARE = 0.05


def level_from_records(
    records: Sequence[RequestRecord],
    *,
    load_kind: LoadKind,
    load_value: float,
    window: SteadyWindow,
    config: ProbeConfig,
) -> Level:
    """One Level from a level's records: counts, canonical metrics, samples and notes."""
    ok = [r for r in records if r.ok]
    failed = [r for r in records if r.error is not None]
    notes = [window.note] if window.note else []
    steady = [r for r in ok if window.holds(r.send_s)]
    if ok and not steady:
        notes.append("no request was sent inside the window: latencies use every request")
    metrics = aggregate.latency_metrics(steady or ok, notes)
    served = [r for r in records if r.error is None]  # completed, or cut while streaming
    if served:
        metrics += aggregate.window_metrics(served, ok, window)
        overlap = [(r.send_s, r.end_s) for r in records if r.end_s is not None]
        peak = aggregate.peak_overlap(overlap)
        metrics.append(Metric(name="max_concurrent_requests", value=peak))
    notes += _failure_notes(ok, failed, config.max_failure_rate)
    notes += _length_notes(ok, config.ignore_eos)
    notes += _lag_notes(records, load_kind, load_value, ok)
    t0 = window.level_start_s
    ends = [r.end_s for r in records if r.end_s is not None]
    span = max([*ends, *(r.send_s for r in records)]) - t0 if records else 0.0
    samples = _samples(records, t0, notes)  # before the notes are joined: it may add one
    return Level(
        load_kind=load_kind,
        load_value=load_value,
        duration_s=span if span > 0 else None,
        window_start_s=window.start_s - t0,
        window_end_s=window.end_s - t0,
        requests_sent=len(records),
        completed=len(ok),
        failed=len(failed),
        incomplete=sum(r.incomplete for r in records),
        input_tokens_total=_total([r.input_tokens for r in ok]),
        output_tokens_total=_total([r.output_tokens for r in ok]),
        metrics=tuple(metrics),
        samples=samples,
        notes="; ".join(notes) or None,
    )


def _total(values: list[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known and len(known) == len(values) else None


def _failure_notes(ok: list[RequestRecord], failed: list[RequestRecord], limit: float) -> list[str]:
    if not failed:
        return []
    rate = len(failed) / (len(ok) + len(failed))
    common, times = Counter(r.error for r in failed).most_common(1)[0]
    what = f"{len(failed)} failed ({times}x {common!s:.160})"
    if rate > limit:
        return [f"failure rate {rate:.1%} is above the {limit:.1%} limit: kept out of fits; {what}"]
    return [what]


def _length_notes(ok: list[RequestRecord], ignore_eos: bool) -> list[str]:
    notes: list[str] = []
    lied = [r.usage_note for r in ok if r.usage_note is not None]
    if lied:
        notes.append(
            f"{len(lied)} of {len(ok)} answers: the server's usage disagreed with its own "
            f"stream (first: {lied[0]}); the streamed count is the floor"
        )
    short = [r for r in ok if r.output_tokens != r.requested_output_tokens]
    if ignore_eos and short:
        notes.append(f"{len(short)} of {len(ok)} answers were not max_tokens long")
    asked = [(r.input_tokens, r.requested_input_tokens) for r in ok]
    pairs = [(got, want) for got, want in asked if got is not None and want is not None]
    if pairs:
        got_mean = sum(g for g, _ in pairs) / len(pairs)
        want_mean = sum(w for _, w in pairs) / len(pairs)
        if abs(got_mean - want_mean) > max(1.0, 0.01 * want_mean):
            notes.append(f"mean prompt tokens {got_mean:.1f} vs {want_mean:.1f} requested")
    return notes


def _lag_notes(
    records: Sequence[RequestRecord], kind: LoadKind, value: float, ok: list[RequestRecord]
) -> list[str]:
    lags = [1000 * (r.send_s - r.scheduled_s) for r in records if r.scheduled_s is not None]
    summary = aggregate.distribution(lags)
    if summary is None:
        return []
    text = (
        f"schedule lag p50 {summary.p50:.2f} ms, p99 {summary.p99:.2f} ms, max {summary.max:.2f} ms"
    )
    if kind is LoadKind.RATE:
        gap_ms = 1000 / value
    else:  # a slot's gap between sends is one request's duration
        spans = [r.end_s - r.send_s for r in ok if r.end_s is not None]
        gap_ms = 1000 * sum(spans) / len(spans) if spans else 0.0
    limit = max(LAG_LIMIT_MS, LAG_LIMIT_GAP_SHARE * gap_ms)
    if summary.p99 > limit:
        text += f"; the client fell behind its schedule (p99 lag above {limit:.1f} ms)"
    return [text]


def _samples(
    records: Sequence[RequestRecord], t0: float, notes: list[str]
) -> tuple[RequestSample, ...]:
    budget, cut = MAX_SAMPLE_GAPS, 0
    samples: list[RequestSample] = []
    for r in records:
        gaps = tuple(round(1000 * g, 3) for g in aggregate.chunk_gaps(r.chunk_times_s))
        if len(gaps) > budget:
            gaps, cut = (), cut + 1
        budget -= len(gaps)
        samples.append(_sample(r, t0, gaps))
    if cut:
        notes.append(f"chunk gaps left out of {cut} samples to keep the file small")
    escaped = sum(r.error_escaped for r in records)
    if escaped:
        notes.append(
            f"{escaped} error text(s) from the server held control or bidi characters (NUL, "
            "ESC, U+202E ...): kept as \\xNN / \\uNNNN escapes"
        )
    return tuple(samples)


def _sample(r: RequestRecord, t0: float, gaps: tuple[float, ...]) -> RequestSample:
    first = None if r.first_token_s is None else 1000 * (r.first_token_s - r.send_s)
    return RequestSample(
        send_s=round(r.send_s - t0, 6),
        ttft_ms=first if r.error is None else None,
        e2e_ms=1000 * (r.end_s - r.send_s) if r.ok and r.end_s is not None else None,
        input_tokens=r.input_tokens,
        output_tokens=r.output_tokens if r.error is None else None,
        chunk_gaps_ms=gaps,
        http_status=r.http_status,
        error=r.error or ("incomplete: cut at the end of the level" if r.incomplete else None),
    )
