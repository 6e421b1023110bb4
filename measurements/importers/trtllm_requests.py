"""trtllm-bench `--request_json` (a list of per-request RequestRecord dumps, times in ns) -> one
level of RequestSamples with capplan's recomputed aggregates; the engine is TensorRT-LLM."""

from __future__ import annotations

from collections.abc import Sequence

from errors import InputError
from measurements.importers.common import (
    DeploymentOverrides,
    Reader,
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

FORMAT_ID = "trtllm-requests"
DESCRIPTION = (
    "trtllm-bench --request_json: a list of per-request records (id, start_timestamp, "
    "first_token_timestamp, end_timestamp in ns, num_input_tokens, num_output_tokens)"
)
CLIENT = "trtllm-bench"
ENGINE = "tensorrt-llm"

_KEYS = ("id", "start_timestamp", "first_token_timestamp", "end_timestamp")
_UNSET = -1  # RequestRecord's default for a value the benchmark never recorded
_NS_PER_MS = 1e6


def _is_record(item: object) -> bool:
    return isinstance(item, dict) and all(key in item for key in _KEYS)


def sniff(name: str, doc: object) -> str | None:
    """Describe the file when `doc` is a --request_json list of records, else None."""
    if isinstance(doc, list) and doc and all(_is_record(item) for item in doc):
        return f"trtllm-bench --request_json ({len(doc)} requests)"
    return None


def parse(
    name: str,
    doc: object,
    data: bytes,
    overrides: DeploymentOverrides,
    provenance: Provenance,
) -> list[RunFile]:
    """The records as one RunFile with one level; the load comes from the user or is achieved."""
    if not isinstance(doc, list) or sniff(name, doc) is None:
        raise InputError(f"not a {DESCRIPTION}", file=name)
    over(len(doc), MAX_SAMPLES, "per-request records", file=name)
    readers = [Reader(name, obj, f"request {i + 1}: ") for i, obj in enumerate(doc)]
    spans = [_span(reader) for reader in readers]
    first_ns = min(start for start, _ in spans)
    duration_s = (max(end for _, end in spans) - first_ns) / 1e9
    if not duration_s:
        raise readers[0].fail("end_timestamp", "every request starts and ends at the same instant")
    samples = [
        _sample(reader, start, end, first_ns)
        for reader, (start, end) in zip(readers, spans, strict=True)
    ]
    why = "trtllm-bench --request_json does not state the concurrency or issue rate"
    load = unstated_load(overrides, len(samples), duration_s, why)
    level = sample_level(name, samples, duration_s, load, _notes(samples))
    hint = " (trtllm-bench request records do not name the model)"
    stated = DeploymentOverrides(engine=ENGINE)
    deployment, conflicts = resolve_deployment(name, stated, overrides, hint=hint)
    run = sample_run(
        name,
        data,
        source=Source.TRTLLM_BENCH,
        client=CLIENT,
        provenance=provenance,
        deployment=deployment,
        levels=(level,),
        notes=conflicts,
    )
    return [run]


def _timestamp(reader: Reader, key: str) -> float | None:
    """A timestamp in ns, or None when the record holds RequestRecord's unset default (-1)."""
    value = reader.obj.get(key)
    if value == _UNSET:
        return None
    if value is None:
        raise reader.fail(key, "is missing: expected a timestamp in nanoseconds")
    return timestamp_ns(reader, key, value)


def _span(reader: Reader) -> tuple[float, float]:
    start = _timestamp(reader, "start_timestamp")
    end = _timestamp(reader, "end_timestamp")
    if start is None:
        raise reader.fail("start_timestamp", "was not recorded (-1): the request never started")
    if end is None:
        raise reader.fail("end_timestamp", "was not recorded (-1): the request never finished")
    if end < start:
        raise reader.fail("end_timestamp", f"is before start_timestamp ({start:g})", end)
    return start, end


def _sample(reader: Reader, start: float, end: float, first_ns: float) -> RequestSample:
    output_tokens = _output_tokens(reader)
    errors = reader.count("error_tokens") or 0
    return RequestSample(
        send_s=(start - first_ns) / 1e9,
        ttft_ms=_ttft_ms(reader, start, end, output_tokens),
        e2e_ms=(end - start) / _NS_PER_MS,
        input_tokens=_input_tokens(reader),
        output_tokens=output_tokens,
        error=f"error_tokens: {errors} responses reported an error" if errors else None,
    )


def _ttft_ms(reader: Reader, start: float, end: float, output_tokens: int | None) -> float | None:
    """First token - start; unknown when not recorded (0 or -1) or only at the end (no stream)."""
    raw = reader.obj.get("first_token_timestamp")
    if raw in (0, _UNSET, None):
        return None
    first = timestamp_ns(reader, "first_token_timestamp", raw)
    if not start <= first <= end:
        message = f"is outside start_timestamp..end_timestamp ({start:g}..{end:g})"
        raise reader.fail("first_token_timestamp", message, raw)
    if first == end and output_tokens != 1:
        return None  # non-streaming: the first token arrived with the last one
    return (first - start) / _NS_PER_MS


def _input_tokens(reader: Reader) -> int | None:
    if reader.obj.get("num_input_tokens") == _UNSET:
        return None
    return reader.count("num_input_tokens")


def _output_tokens(reader: Reader) -> int | None:
    """num_output_tokens, else the length of the token-id list the record keeps."""
    if "num_output_tokens" in reader.obj:
        return reader.count("num_output_tokens")
    for key in ("output_tokens", "tokens"):
        tokens = reader.obj.get(key)
        if isinstance(tokens, list):
            return len(tokens)
        if tokens is not None:
            raise reader.fail(key, "expected a list of token ids", tokens)
    return None


def _notes(samples: Sequence[RequestSample]) -> list[str]:
    notes = [
        "times from the in-process timestamps (ns); the records' own time_to_first_token, "
        "intertoken_latency and end_to_end_latency are not read: recomputed from the timestamps",
        "no per-chunk times in the records: itl and icl not available",
    ]
    unknown = sum(s.ok and s.ttft_ms is None for s in samples)
    if unknown:
        notes.append(
            f"ttft unknown for {unknown} requests: no first-token time apart from the end "
            f"(run without --streaming), so ttft and tpot are left out for them"
        )
    return notes
