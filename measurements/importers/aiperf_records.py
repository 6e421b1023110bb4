"""AIPerf `profile_export.jsonl` (one record per request: metadata with epoch-ns times, per-request
metric values with units, error) -> one level of RequestSamples with recomputed aggregates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from errors import InputError
from measurements.importers.aiperf import TO_MS
from measurements.importers.common import (
    DeploymentOverrides,
    Reader,
    checked_number,
    resolve_deployment,
)
from measurements.importers.limits import MAX_SAMPLES, over
from measurements.importers.sample_level import (
    sample_level,
    sample_run,
    timestamp_ns,
    unstated_load,
)
from measurements.run_file import Provenance, RequestSample, RunFile, Source

FORMAT_ID = "aiperf-records"
DESCRIPTION = (
    "AIPerf profile_export.jsonl: one JSON object per request with metadata "
    "(request_start_ns, benchmark_phase), metrics {tag: {value, unit}} and error"
)
CLIENT = "aiperf"

_PHASES = ("profiling", "warmup")
_TOKEN_UNITS = ("tokens",)
# Tags read into the samples; AIPerf's own per-request derivations (inter_token_latency, ...)
# are recomputed by capplan from these, so they are listed in the notes as not read.
_READ_TAGS = frozenset(
    {
        "time_to_first_token",
        "request_latency",
        "inter_chunk_latency",
        "input_sequence_length",
        "output_sequence_length",
        "output_token_count",
    }
)


def _is_record(item: object) -> bool:
    if not isinstance(item, dict) or "metrics" not in item:
        return False
    metadata = item.get("metadata")
    return isinstance(metadata, dict) and "request_start_ns" in metadata


def _records(doc: object) -> list[Mapping[str, object]] | None:
    if _is_record(doc) and isinstance(doc, dict):
        return [doc]  # a one-line file decodes to the object itself
    if isinstance(doc, list) and doc and all(_is_record(item) for item in doc):
        return doc
    return None


def sniff(name: str, doc: object) -> str | None:
    """Describe the file when `doc` holds AIPerf per-request records, else None."""
    records = _records(doc)
    if records is None:
        return None
    return f"AIPerf profile_export.jsonl ({len(records)} per-request records)"


def parse(
    name: str,
    doc: object,
    data: bytes,
    overrides: DeploymentOverrides,
    provenance: Provenance,
) -> list[RunFile]:
    """The profiling-phase records as one RunFile with one level; warmup records are skipped."""
    records = _records(doc)
    if records is None:
        raise InputError(f"not an {DESCRIPTION}", file=name)
    over(len(records), MAX_SAMPLES, "per-request records", file=name)
    readers = [Reader(name, obj, f"line {i + 1}: ") for i, obj in enumerate(records)]
    kept = [reader for reader in readers if _phase(reader) == "profiling"]
    if not kept:
        raise InputError("every record is from the warmup phase: nothing was profiled", file=name)
    spans = [_span(reader) for reader in kept]
    first = min(start for start, _ in spans)
    duration_s = (max(end for _, end in spans) - first) / 1e9
    if not duration_s:
        raise kept[0].fail("metadata.request_end_ns", "every request starts and ends at once")
    samples = [
        _sample(reader, start, end, first) for reader, (start, end) in zip(kept, spans, strict=True)
    ]
    why = "AIPerf per-request records do not state the concurrency or request rate"
    load = unstated_load(overrides, len(samples), duration_s, why)
    notes = _notes(kept, len(readers) - len(kept))
    level = sample_level(name, samples, duration_s, load, notes)
    hint = " (AIPerf per-request records do not name it; profile_export_aiperf.json does)"
    deployment, conflicts = resolve_deployment(name, DeploymentOverrides(), overrides, hint=hint)
    run = sample_run(
        name,
        data,
        source=Source.AIPERF,
        client=CLIENT,
        provenance=provenance,
        deployment=deployment,
        levels=(level,),
        notes=conflicts,
    )
    return [run]


def _section(reader: Reader, key: str) -> Reader:
    value = reader.obj.get(key)
    if value is not None and not isinstance(value, dict):
        raise reader.fail(key, "expected an object", value)
    return Reader(reader.file, value or {}, f"{reader.where}{key}.")


def _phase(record: Reader) -> str:
    metadata = _section(record, "metadata")
    phase = metadata.text("benchmark_phase") or "profiling"
    if phase not in _PHASES:
        raise metadata.fail("benchmark_phase", f"expected one of {', '.join(_PHASES)}", phase)
    return phase


def _span(record: Reader) -> tuple[float, float]:
    """Request start and end (epoch ns); a record without an end ends where it started."""
    metadata = _section(record, "metadata")
    raw_start, raw_end = metadata.obj.get("request_start_ns"), metadata.obj.get("request_end_ns")
    if raw_start is None:
        raise metadata.fail("request_start_ns", "is missing: expected the send time in ns")
    start = timestamp_ns(metadata, "request_start_ns", raw_start)
    end = None if raw_end is None else timestamp_ns(metadata, "request_end_ns", raw_end)
    if end is not None and end < start:
        raise metadata.fail("request_end_ns", f"is before request_start_ns ({start:g})", end)
    return start, start if end is None else end


def _sample(record: Reader, start: float, end: float, first: float) -> RequestSample:
    metrics = _section(record, "metrics")
    error, status = _error(record)
    ok = error is None
    e2e_ms = _time_ms(metrics, "request_latency")
    osl = _tokens(metrics, "output_sequence_length")
    return RequestSample(
        send_s=(start - first) / 1e9,
        ttft_ms=_time_ms(metrics, "time_to_first_token") if ok else None,
        e2e_ms=(e2e_ms if e2e_ms is not None else (end - start) / 1e6) if ok else None,
        input_tokens=_tokens(metrics, "input_sequence_length"),
        output_tokens=osl if osl is not None else _tokens(metrics, "output_token_count"),
        chunk_gaps_ms=_gaps_ms(metrics) if ok else (),
        http_status=status,
        error=error,
    )


def _metric(metrics: Reader, tag: str) -> tuple[Reader, str] | None:
    """The `{value, unit}` object of one tag and its unit, or None when the tag is absent."""
    if metrics.obj.get(tag) is None:
        return None
    metric = _section(metrics, tag)
    unit = metric.text("unit")
    if unit is None:
        raise metric.fail("unit", "is missing: expected a unit such as ms or tokens")
    return metric, unit


def _time_ms(metrics: Reader, tag: str) -> float | None:
    found = _metric(metrics, tag)
    if found is None:
        return None
    metric, unit = found
    if unit not in TO_MS:
        raise metric.fail("unit", f"expected a time unit ({', '.join(TO_MS)})", unit)
    value = metric.number("value", required=True)
    return None if value is None else value * TO_MS[unit]


def _tokens(metrics: Reader, tag: str) -> int | None:
    found = _metric(metrics, tag)
    if found is None:
        return None
    metric, unit = found
    if unit not in _TOKEN_UNITS:
        raise metric.fail("unit", "expected tokens", unit)
    return metric.count("value", required=True)


def _gaps_ms(metrics: Reader) -> tuple[float, ...]:
    found = _metric(metrics, "inter_chunk_latency")
    if found is None:
        return ()
    metric, unit = found
    if unit not in TO_MS:
        raise metric.fail("unit", f"expected a time unit ({', '.join(TO_MS)})", unit)
    raw = metric.obj.get("value")
    if not isinstance(raw, list):
        raise metric.fail("value", "expected a list of gaps between chunks", raw)
    return tuple(checked_number(metric, f"value[{i}]", v) * TO_MS[unit] for i, v in enumerate(raw))


def _error(record: Reader) -> tuple[str | None, int | None]:
    """The error text and HTTP status of a failed (or cancelled) request."""
    error = record.obj.get("error")
    if isinstance(error, dict):
        kind, message = error.get("type"), error.get("message")
        code = error.get("code")
        status = code if isinstance(code, int) and not isinstance(code, bool) else None
        return ": ".join(str(p) for p in (kind, message) if p) or "error", status
    if error is not None:
        return str(error) or "error", None
    if _section(record, "metadata").obj.get("was_cancelled") is True:
        return "cancelled", None
    return None, None


def _notes(kept: Sequence[Reader], warmup: int) -> list[str]:
    notes = [f"{warmup} warmup-phase records skipped"] if warmup else []
    unread = sorted(
        {tag for reader in kept for tag in _section(reader, "metrics").obj if tag not in _READ_TAGS}
    )
    if unread:
        notes.append(
            f"per-request tags not read (capplan recomputes its metrics from the samples): "
            f"{', '.join(unread)}"
        )
    return notes
