"""inference-perf `per_request_lifecycle_metrics.json` (a list, times in seconds on one clock) ->
one level of RequestSamples with capplan's recomputed aggregates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise

from measurements.importers.common import Reader, checked_number
from measurements.importers.limits import MAX_SAMPLES, over
from measurements.importers.sample_level import SampleLoad, sample_level, sample_workload
from measurements.run_file import (
    Level,
    LoadKind,
    RequestSample,
    Workload,
)

_KEYS = ("start_time", "end_time", "info")


def is_per_request(doc: object) -> bool:
    """True when `doc` is a non-empty list of inference-perf per-request records."""
    return (
        isinstance(doc, list)
        and bool(doc)
        and all(isinstance(item, dict) and all(k in item for k in _KEYS) for item in doc)
    )


def per_request_level(name: str, doc: Sequence[Mapping[str, object]]) -> tuple[Level, Workload]:
    """The records as one level: samples, recomputed metrics, the span as duration."""
    over(len(doc), MAX_SAMPLES, "per-request records", file=name)
    readers = [Reader(name, obj, f"request {i + 1}: ") for i, obj in enumerate(doc)]
    spans = [_span(reader) for reader in readers]
    first = min(start for start, _ in spans)
    duration_s = max(end for _, end in spans) - first
    if not duration_s:
        raise readers[0].fail("end_time", "every request starts and ends at the same instant")
    samples = tuple(
        _sample(reader, start, end, first)
        for reader, (start, end) in zip(readers, spans, strict=True)
    )
    load = SampleLoad(
        LoadKind.RATE,
        len(samples) / duration_s,
        False,
        "per-request records alone: the file states no stage rate or concurrency (records of "
        "several stages are mixed); recorded at the achieved rate over the whole span and "
        "marked load not stated, kept out of curve fits",
    )
    return sample_level(name, samples, duration_s, load), sample_workload(samples)


def _span(reader: Reader) -> tuple[float, float]:
    start = checked_number(reader, "start_time", reader.obj.get("start_time"), signed=True)
    end = checked_number(reader, "end_time", reader.obj.get("end_time"), signed=True)
    if end < start:
        raise reader.fail("end_time", f"is before start_time ({start:g})", end)
    return start, end


def _nested(reader: Reader, key: str) -> Reader:
    value = reader.obj.get(key)
    if value is not None and not isinstance(value, dict):
        raise reader.fail(key, "expected an object", value)
    return Reader(reader.file, value or {}, f"{reader.where}{key}.")


def _sample(reader: Reader, start: float, end: float, first: float) -> RequestSample:
    info = _nested(reader, "info")
    response = _nested(info, "response_metrics")
    error = _error(reader)
    times = _chunk_times(response, start)
    ttft_ms = (times[0] - start) * 1000 if times and error is None else None
    return RequestSample(
        send_s=start - first,
        ttft_ms=ttft_ms,
        e2e_ms=(end - start) * 1000 if error is None else None,
        input_tokens=info.count("input_tokens"),
        output_tokens=response.count("output_tokens"),
        chunk_gaps_ms=tuple((b - a) * 1000 for a, b in pairwise(times)),
        error=error,
    )


def _chunk_times(response: Reader, start: float) -> list[float]:
    raw = response.obj.get("chunk_times")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise response.fail("chunk_times", "expected a list of times in seconds", raw)
    times = [
        checked_number(response, f"chunk_times[{i}]", v, signed=True) for i, v in enumerate(raw)
    ]
    if any(b < a for a, b in pairwise([start, *times])):
        raise response.fail("chunk_times", "must be in order and not before start_time")
    return times


def _error(reader: Reader) -> str | None:
    error = reader.obj.get("error")
    if error is None:
        return None
    if isinstance(error, dict):
        kind, message = error.get("error_type"), error.get("error_msg")
        return ": ".join(str(part) for part in (kind, message) if part) or "error"
    return str(error) or "error"
