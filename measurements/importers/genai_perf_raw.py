"""GenAI-Perf's raw `profile_export.json` (written by perf_analyzer: experiments of requests with
response timestamps in ns and the response bodies) -> one RunFile, one level per experiment."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from errors import InputError
from measurements.importers.common import (
    DeploymentOverrides,
    Reader,
    checked_number,
    resolve_deployment,
)
from measurements.importers.limits import MAX_SAMPLES, over
from measurements.importers.sample_level import (
    SampleLoad,
    sample_level,
    sample_run,
    timestamp_ns,
)
from measurements.run_file import (
    Level,
    LoadKind,
    Provenance,
    RequestSample,
    RunFile,
    Source,
)

FORMAT_ID = "genai-perf-raw"
DESCRIPTION = (
    "GenAI-Perf / perf_analyzer raw profile_export.json: experiments[] with experiment "
    "{mode, value} and requests[] {timestamp, response_timestamps, response_outputs} in ns"
)
CLIENT = "genai-perf"

_MODES = {"concurrency": LoadKind.CONCURRENCY, "request_rate": LoadKind.RATE}
_NS_PER_MS = 1e6
_TEXT_KEYS = ("content", "reasoning_content", "text")


@dataclass(frozen=True, slots=True)
class _Response:
    """What one recorded response carried: output text, token usage, an error."""

    has_text: bool
    sse: bool
    completion_tokens: int | None = None
    prompt_tokens: int | None = None
    error: str | None = None


def _experiments(doc: object) -> list[Mapping[str, object]] | None:
    if not isinstance(doc, dict):
        return None
    experiments = doc.get("experiments")
    if not isinstance(experiments, list) or not experiments:
        return None
    if all(
        isinstance(e, dict) and isinstance(e.get("experiment"), dict) and "requests" in e
        for e in experiments
    ):
        return experiments
    return None


def sniff(name: str, doc: object) -> str | None:
    """Describe the file when `doc` is a raw profile_export.json, else None."""
    experiments = _experiments(doc)
    if experiments is None or not isinstance(doc, dict):
        return None
    service = doc.get("service_kind")
    shown = f", service_kind {service}" if isinstance(service, str) and service else ""
    return f"GenAI-Perf raw profile_export.json ({len(experiments)} experiments{shown})"


def parse(
    name: str,
    doc: object,
    data: bytes,
    overrides: DeploymentOverrides,
    provenance: Provenance,
) -> list[RunFile]:
    """The experiments as levels of one RunFile; the model comes from the request payloads."""
    experiments = _experiments(doc)
    if experiments is None:
        raise InputError(f"not a {DESCRIPTION}", file=name)
    models: set[str] = set()
    levels = tuple(
        _level(Reader(name, exp, f"experiments[{i}]."), models) for i, exp in enumerate(experiments)
    )
    notes: list[str] = []
    model = next(iter(models)) if len(models) == 1 else None
    if len(models) > 1:
        notes.append(f"requests name several models ({', '.join(sorted(models))}): model unset")
    hint = " (perf_analyzer does not record the serving engine)"
    stated = DeploymentOverrides(model=model)
    deployment, conflicts = resolve_deployment(name, stated, overrides, hint=hint)
    run = sample_run(
        name,
        data,
        source=Source.GENAI_PERF,
        client=CLIENT,
        provenance=provenance,
        deployment=deployment,
        levels=levels,
        notes=conflicts + notes,
    )
    return [run]


def _level(exp: Reader, models: set[str]) -> Level:
    load = _load(_nested(exp, "experiment"))
    raw = exp.obj.get("requests")
    if not isinstance(raw, list) or not raw:
        raise exp.fail("requests", "expected a non-empty list of requests", raw)
    over(len(raw), MAX_SAMPLES, "requests", file=exp.file, field=exp.field("requests"))
    readers = [_item(exp, f"requests[{j}]", obj) for j, obj in enumerate(raw)]
    spans = [_times(reader) for reader in readers]
    first = min(start for start, _ in spans)
    last = max(times[-1] if times else start for start, times in spans)
    duration_s = (last - first) / 1e9
    if not duration_s:
        raise exp.fail("requests", "every request starts and ends at the same instant")
    samples = [
        _sample(reader, start, times, first, models)
        for reader, (start, times) in zip(readers, spans, strict=True)
    ]
    return sample_level(exp.file, samples, duration_s, load, _notes(samples))


def _item(parent: Reader, key: str, obj: object) -> Reader:
    if not isinstance(obj, dict):
        raise parent.fail(key, "expected an object", obj)
    return Reader(parent.file, obj, f"{parent.where}{key}.")


def _nested(reader: Reader, key: str) -> Reader:
    return _item(reader, key, reader.obj.get(key))


def _load(experiment: Reader) -> SampleLoad:
    mode = experiment.text("mode")
    if mode not in _MODES:
        expected = " or ".join(_MODES)
        raise experiment.fail("mode", f"expected {expected}", mode)
    raw = experiment.obj.get("value")
    if raw is None:
        raise experiment.fail("value", f"is missing: expected the {mode.replace('_', ' ')}")
    return SampleLoad(_MODES[mode], checked_number(experiment, "value", raw, positive=True), True)


def _times(request: Reader) -> tuple[float, list[float]]:
    """The send time and the response times (ns), checked to be in order."""
    start = timestamp_ns(request, "timestamp", request.obj.get("timestamp"))
    raw = request.obj.get("response_timestamps")
    if not isinstance(raw, list):
        raise request.fail("response_timestamps", "expected a list of times in ns", raw)
    times = [timestamp_ns(request, f"response_timestamps[{i}]", v) for i, v in enumerate(raw)]
    if any(b < a for a, b in pairwise([start, *times])):
        raise request.fail("response_timestamps", "must be in order and not before timestamp")
    return start, times


def _sample(
    request: Reader, start: float, times: list[float], first: float, models: set[str]
) -> RequestSample:
    model = _payload_model(request)
    if model:
        models.add(model)
    responses = _responses(request, len(times))
    text_times = [t for t, r in zip(times, responses, strict=True) if r.has_text]
    error = next((r.error for r in responses if r.error), None)
    if error is None and not text_times:
        error = "no output text in the responses" if times else "no response"
    completion = [r.completion_tokens for r in responses if r.completion_tokens is not None]
    prompt = [r.prompt_tokens for r in responses if r.prompt_tokens is not None]
    streamed = len(times) > 1 or any(r.sse for r in responses)
    ok = error is None
    return RequestSample(
        send_s=(start - first) / 1e9,
        ttft_ms=(text_times[0] - start) / _NS_PER_MS if ok and streamed else None,
        e2e_ms=(text_times[-1] - start) / _NS_PER_MS if ok else None,
        input_tokens=prompt[-1] if prompt else None,
        output_tokens=completion[-1] if completion else None,
        chunk_gaps_ms=tuple((b - a) / _NS_PER_MS for a, b in pairwise(text_times)) if ok else (),
        error=error,
    )


def _payload_model(request: Reader) -> str | None:
    """The `model` of the request body perf_analyzer sent (request_inputs.payload, JSON text)."""
    inputs = request.obj.get("request_inputs")
    payload = inputs.get("payload") if isinstance(inputs, dict) else None
    if not isinstance(payload, str):
        return None
    try:
        body = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    model = body.get("model") if isinstance(body, dict) else None
    return model.strip() if isinstance(model, str) and model.strip() else None


def _responses(request: Reader, count: int) -> list[_Response]:
    raw = request.obj.get("response_outputs")
    if raw is None and count == 0:
        return []
    if not isinstance(raw, list) or len(raw) != count:
        shown = len(raw) if isinstance(raw, list) else raw
        message = f"expected one output per response timestamp ({count})"
        raise request.fail("response_outputs", message, shown)
    return [_response(_item(request, f"response_outputs[{i}]", o)) for i, o in enumerate(raw)]


def _response(output: Reader) -> _Response:
    if "text_output" in output.obj:  # Triton service kind: the generated text itself
        return _Response(has_text=bool(output.text("text_output")), sse=False)
    body = output.text("response")
    if body is None:
        raise output.fail("response", "is missing: expected the response body (or text_output)")
    events = [line[5:].strip() for line in body.splitlines() if line.startswith("data:")]
    if not events:  # a whole (non-streamed) response body
        return _event(output, body, sse=False) if body.strip() else _Response(False, False)
    parsed = [_event(output, event, sse=True) for event in events if event != "[DONE]"]
    return _Response(
        has_text=any(p.has_text for p in parsed),
        sse=True,
        completion_tokens=_last(p.completion_tokens for p in parsed),
        prompt_tokens=_last(p.prompt_tokens for p in parsed),
        error=next((p.error for p in parsed if p.error), None),
    )


def _last(values: Iterable[int | None]) -> int | None:
    kept = [v for v in values if v is not None]
    return kept[-1] if kept else None


def _event(output: Reader, text: str, *, sse: bool) -> _Response:
    """One OpenAI JSON body or SSE event: output text, usage and error."""
    try:
        event = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise output.fail("response", f"not JSON: {exc}", text[:80]) from exc
    if not isinstance(event, dict):
        return _Response(False, sse)
    error = event.get("error")
    usage = event.get("usage")
    usage_obj = usage if isinstance(usage, dict) else {}
    usage_reader = Reader(output.file, usage_obj, f"{output.where}usage.")
    return _Response(
        has_text=any(_choice_text(choice) for choice in _choices(event)),
        sse=sse,
        completion_tokens=usage_reader.count("completion_tokens"),
        prompt_tokens=usage_reader.count("prompt_tokens"),
        error=_error_text(error) if error else None,
    )


def _choices(event: Mapping[str, object]) -> list[Mapping[str, object]]:
    choices = event.get("choices")
    return [c for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []


def _choice_text(choice: Mapping[str, object]) -> bool:
    parts = [choice, *(choice.get(k) for k in ("delta", "message"))]
    return any(
        isinstance(part, dict) and isinstance(part.get(key), str) and part.get(key) != ""
        for part in parts
        for key in _TEXT_KEYS
    )


def _error_text(error: object) -> str:
    if isinstance(error, dict):
        message = error.get("message")
        return str(message) if message else json.dumps(error)[:200]
    return str(error)


def _notes(samples: Sequence[RequestSample]) -> list[str]:
    notes: list[str] = []
    ok = [s for s in samples if s.ok]
    untokened = sum(s.output_tokens is None for s in ok)
    if untokened:
        notes.append(
            f"output tokens unknown for {untokened} of {len(ok)} successful requests: their "
            f"responses carry no usage.completion_tokens and GenAI-Perf counted tokens with a "
            f"client tokenizer the raw file does not name; tpot, itl and token rates are left "
            f"out rather than guessed from chunks (send stream_options include_usage to get them)"
        )
    unstreamed = sum(s.ttft_ms is None for s in ok)
    if unstreamed:
        notes.append(f"ttft unknown for {unstreamed} requests answered in one response")
    return notes
