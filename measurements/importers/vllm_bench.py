"""vLLM `bench serve` / old `benchmark_serving.py` --save-result JSON -> RunFile, every variant.

One result object is one load level; --append-result JSON lines (or a JSON list) hold several.
Aggregates are in ms, per-request lists in seconds; vLLM's `itl` is per chunk (canonical `icl`)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import NamedTuple

from pydantic import ValidationError

from errors import InputError
from measurements.importers.common import (
    DeploymentOverrides,
    MetricSet,
    Reader,
    checked_number,
    content_key,
    join_notes,
    resolve_deployment,
)
from measurements.importers.samples import recompute
from measurements.importers.vllm_requests import request_samples
from measurements.run_file import (
    Environment,
    Level,
    LoadKind,
    Provenance,
    RunFile,
    Source,
    Workload,
    input_error_from_validation,
)

FORMAT_ID = "vllm-bench"
DESCRIPTION = (
    "vLLM bench serve / benchmark_serving.py --save-result JSON: an object (or JSON lines, one "
    "per load level) with request_throughput, output_throughput and completed or duration"
)
NEW_CLIENT = "vllm bench serve"
OLD_CLIENT = "benchmark_serving.py (old)"
TRT_CLIENT = "TensorRT-LLM benchmark_serving.py"
# Keys only TensorRT-LLM's fork of benchmark_serving.py writes (benchmark-formats.md 2.3).
_TRT_KEYS = ("user_throughput", "avg_decoded_tokens_per_iter", "energy")

_STAT_KEY = re.compile(r"(mean|median|std|min|max|p\d+(?:\.\d+)?)_([a-z0-9_]+)_ms")
_METRICS = {"ttft": "ttft", "tpot": "tpot", "itl": "icl", "e2el": "e2e"}
_STATS = {"mean": "mean", "median": "p50", "std": "std", "min": "min", "max": "max"} | {
    f"p{p}": f"p{p}" for p in (50, 90, 95, 99)
}
_RATES = (
    ("output_throughput", "output_tok_s"),
    ("total_token_throughput", "total_tok_s"),
    ("request_throughput", "request_s"),
    ("request_goodput", "goodput_request_s"),
    ("request_goodput:", "goodput_request_s"),  # old script's key, trailing colon included
    ("max_output_tokens_per_s", "max_output_tok_s"),
    ("max_concurrent_requests", "max_concurrent_requests"),
)


@dataclass(frozen=True, slots=True)
class _Counts:
    sent: int | None
    completed: int | None
    failed: int | None
    input_total: int | None
    output_total: int | None
    duration_s: float | None


@dataclass(frozen=True, slots=True)
class _Result:
    level: Level
    counts: _Counts
    model: str | None
    engine: str | None
    backend: str | None
    started_at: datetime | None
    label: str | None
    client: str
    notes: tuple[str, ...]


def _is_result(obj: object) -> bool:
    return (
        isinstance(obj, dict)
        and "request_throughput" in obj
        and "output_throughput" in obj
        and ("completed" in obj or "duration" in obj)
    )


def _results(doc: object) -> list[Mapping[str, object]] | None:
    if isinstance(doc, dict):
        return [doc] if _is_result(doc) else None
    if isinstance(doc, list) and doc and all(_is_result(item) for item in doc):
        return list(doc)
    return None


def _is_old(obj: Mapping[str, object]) -> bool:
    if "request_goodput:" in obj or "best_of" in obj:
        return True
    return "failed" not in obj and "endpoint_type" not in obj


def _is_trt(obj: Mapping[str, object]) -> bool:
    return any(key in obj for key in _TRT_KEYS)


def sniff(name: str, doc: object) -> str | None:
    """Describe the vLLM variant when `doc` is a --save-result document, else None."""
    results = _results(doc)
    if results is None:
        return None
    first = results[0]
    if _is_trt(first):
        kind = f"{TRT_CLIENT} (fork of vLLM's"
    else:
        kind = "benchmark_serving.py (old" if _is_old(first) else "vLLM bench serve (new"
    if "ttfts" in first or "itls" in first:
        detail = "--save-detailed"
    elif "latencies" in first or "e2els" in first:
        detail = "per-request latencies"
    else:
        detail = "summary only"
    if len(results) > 1:
        detail += f", {len(results)} results (--append-result)"
    return f"{kind}, {detail})"


def parse(
    name: str,
    doc: object,
    data: bytes,
    overrides: DeploymentOverrides,
    provenance: Provenance,
) -> list[RunFile]:
    """One --save-result document (or JSON lines of them) as RunFiles, one per model and engine."""
    results = _results(doc)
    if results is None:
        raise InputError(f"not a {DESCRIPTION}", file=name)
    several = len(results) > 1
    parsed = [
        _parse_result(Reader(name, obj, f"result {i + 1}: " if several else ""))
        for i, obj in enumerate(results)
    ]
    groups: dict[tuple[str | None, str | None], list[_Result]] = {}
    for result in parsed:
        groups.setdefault((result.model, result.engine), []).append(result)
    parts = [None] if len(groups) == 1 else [f"{i + 1}:{m}" for i, (m, _) in enumerate(groups)]
    return [
        _run(name, data, members, overrides=overrides, provenance=provenance, part=part)
        for part, members in zip(parts, groups.values(), strict=True)
    ]


def _run(
    name: str,
    data: bytes,
    results: Sequence[_Result],
    *,
    overrides: DeploymentOverrides,
    provenance: Provenance,
    part: str | None,
) -> RunFile:
    first = results[0]
    stated = DeploymentOverrides(engine=first.engine, model=first.model)
    hint = ""
    if first.engine is None and first.backend:
        hint = f" (backend {first.backend!r} can be any OpenAI-compatible server)"
    deployment, notes = resolve_deployment(name, stated, overrides, hint=hint)
    notes += [note for result in results for note in result.notes]
    return RunFile(
        source=Source.VLLM_BENCH,
        provenance=provenance,
        deployment=deployment,
        workload=_workload([result.counts for result in results]),
        environment=Environment(client=first.client),
        levels=tuple(result.level for result in results),
        started_at=min((r.started_at for r in results if r.started_at), default=None),
        label=first.label,
        notes=join_notes(notes, "\n"),
        origin_file=name,
        source_sha256=content_key(data, part),
    )


def _workload(counts: Sequence[_Counts]) -> Workload:
    inputs = [(c.input_total, c.completed) for c in counts if c.input_total is not None]
    outputs = [(c.output_total, c.completed) for c in counts if c.output_total is not None]
    return Workload(isl=_mean_tokens(inputs), osl=_mean_tokens(outputs))


def _mean_tokens(pairs: Sequence[tuple[int | None, int | None]]) -> int | None:
    """round(total tokens / completed requests) over the levels that state both."""
    known = [(tokens or 0, completed) for tokens, completed in pairs if completed]
    completed = sum(n for _, n in known)
    if not completed:
        return None
    return round(sum(tokens for tokens, _ in known) / completed) or None


def _parse_result(reader: Reader) -> _Result:
    load = _load(reader)
    kind, value, notes = load.kind, load.value, load.notes
    counts = _counts(reader)
    samples = request_samples(reader, counts.sent, counts.completed)
    metrics = MetricSet()
    notes += _reported(reader, metrics, counts.completed)
    if samples and "errors" not in reader.obj and counts.failed:
        notes.append("failed requests are not marked per request (no errors list): not recomputed")
    elif samples:
        notes += recompute(metrics, samples, counts.duration_s)
    notes += metrics.notes
    try:
        level = Level(
            load_kind=kind,
            load_value=value,
            burst=load.burst,
            duration_s=counts.duration_s,
            requests_sent=counts.sent,
            completed=counts.completed,
            failed=counts.failed,
            input_tokens_total=counts.input_total,
            output_tokens_total=counts.output_total,
            metrics=metrics.metrics(),
            samples=samples,
            notes=join_notes(notes),
        )
    except ValidationError as exc:
        raise input_error_from_validation(exc, reader.file) from exc
    return _describe(reader, level, counts)


def _describe(reader: Reader, level: Level, counts: _Counts) -> _Result:
    backend = reader.text("backend")
    engine = "vllm" if "vllm" in (backend, reader.text("endpoint_type")) else None
    started_at, notes = None, _trt_extras(reader)
    date = reader.text("date")
    if date is not None:
        try:
            started_at = datetime.strptime(date, "%Y%m%d-%H%M%S").replace(tzinfo=UTC)
        except ValueError:
            notes.append(f"date {date!r} not understood (expected YYYYMMDD-HHMMSS)")
    return _Result(
        level=level,
        counts=counts,
        model=reader.text("model_id"),
        engine=engine,
        backend=backend,
        started_at=started_at,
        label=reader.text("label"),
        client=_client(reader.obj),
        notes=tuple(notes),
    )


def _client(obj: Mapping[str, object]) -> str:
    if _is_trt(obj):
        return TRT_CLIENT
    return OLD_CLIENT if _is_old(obj) else NEW_CLIENT


def _trt_extras(reader: Reader) -> list[str]:
    """TensorRT-LLM's extra keys, kept as notes: none has a canonical name."""
    notes: list[str] = []
    user = reader.number("user_throughput")
    if user is not None:
        notes.append(
            f"user_throughput={user:g} tok/s (mean over requests of output tokens / e2e, TTFT "
            "included: not stream_tok_s)"
        )
    energy = reader.obj.get("energy")
    if isinstance(energy, dict):
        parts = Reader(reader.file, energy, "energy.")
        shown = [
            f"{key}={value:g}"
            for key in ("total_energy_j", "total_gpu_power_w", "output_tps_per_w")
            if (value := parts.number(key)) is not None
        ]
        if shown:
            notes.append("energy: " + ", ".join(shown))
    elif energy is not None:
        raise reader.fail("energy", "expected an object", energy)
    decoded = reader.obj.get("avg_decoded_tokens_per_iter")
    if isinstance(decoded, dict):
        mean = Reader(reader.file, decoded, "avg_decoded_tokens_per_iter.").number("mean")
        if mean is not None:
            notes.append(f"speculative decoding: {mean:g} tokens decoded per iteration (mean)")
    elif decoded is not None:
        raise reader.fail("avg_decoded_tokens_per_iter", "expected an object", decoded)
    return notes


def _rate(reader: Reader) -> float | None:
    value = reader.obj.get("request_rate")
    if isinstance(value, str) and value.strip().lower() in ("inf", "infinity"):
        return math.inf
    if isinstance(value, float) and value == math.inf:
        return math.inf
    if value is None:
        return None
    if isinstance(value, str):
        raise reader.fail("request_rate", "expected a number or 'inf'", value)
    return checked_number(reader, "request_rate", value)


class _Load(NamedTuple):
    kind: LoadKind
    value: float
    burst: bool
    notes: list[str]


def _load(reader: Reader) -> _Load:
    """Closed loop (max_concurrency, infinite rate), open loop (a finite rate, capped or not),
    or a burst (infinite rate, no cap: every request at once)."""
    rate = _rate(reader)
    concurrency = reader.count("max_concurrency")
    if concurrency is not None and concurrency < 1:
        raise reader.fail("max_concurrency", "must be at least 1", concurrency)
    if rate is None and concurrency is None:
        raise reader.fail("request_rate", "is missing and so is max_concurrency: load unknown")
    if rate is None or math.isinf(rate):
        if concurrency is not None:
            return _Load(LoadKind.CONCURRENCY, float(concurrency), False, [])
        sent = reader.count("num_prompts", required=True) or 0
        if sent < 1:
            raise reader.fail("num_prompts", "must be at least 1", sent)
        note = (
            f"request_rate inf, no max_concurrency: all {sent} requests were sent at once "
            "(a burst, recorded as concurrency = num_prompts and kept out of curve fits)"
        )
        return _Load(LoadKind.CONCURRENCY, float(sent), True, [note])
    if rate == 0:
        raise reader.fail("request_rate", "must be greater than 0", rate)
    burstiness = reader.number("burstiness")
    shape = "" if burstiness is None else f", burstiness {burstiness:g}"
    cap = "" if concurrency is None else f", at most {concurrency} in flight (max_concurrency)"
    return _Load(LoadKind.RATE, rate, False, [f"open loop at {rate:g} req/s{shape}{cap}"])


def _counts(reader: Reader) -> _Counts:
    counts = _Counts(
        sent=reader.count("num_prompts"),
        completed=reader.count("completed"),
        failed=reader.count("failed"),
        input_total=reader.count("total_input_tokens"),
        output_total=reader.count("total_output_tokens"),
        duration_s=reader.number("duration", positive=True),
    )
    sent, completed, failed = counts.sent, counts.completed, counts.failed
    if sent is not None and completed is not None and completed > sent:
        raise reader.fail("completed", f"is more than num_prompts ({sent})", completed)
    if sent is not None and completed is not None and completed + (failed or 0) > sent:
        message = f"completed ({completed}) + failed is more than num_prompts ({sent})"
        raise reader.fail("failed", message, failed)
    return counts


def _reported(reader: Reader, metrics: MetricSet, completed: int | None) -> list[str]:
    for key, canonical in _RATES:
        value = reader.number(key)
        if value is not None:
            metrics.add(canonical, value, source=(key, value))
    unmapped: list[str] = []
    skipped = False
    for key, raw in reader.obj.items():
        match = _STAT_KEY.fullmatch(key)
        stat = _STATS.get(match[1]) if match else None
        metric = _METRICS.get(match[2]) if match else None
        if stat is None or metric is None:
            if key.endswith("_ms") and raw is not None:
                unmapped.append(f"{key}={_show(raw)}")
            continue
        value = reader.number(key)
        if value is None:
            continue
        if completed == 0:
            skipped = True  # vLLM writes 0 for latency stats when nothing completed
            continue
        metrics.add(f"{stat}_{metric}_ms", value, source=(key, value))
    notes = ["not mapped (no canonical name): " + ", ".join(unmapped)] if unmapped else []
    if skipped:
        notes.append("no request completed: the file's latency statistics (0) were not imported")
    return notes


def _show(value: object) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:g}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
