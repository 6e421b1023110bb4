"""ray-project/llmperf (token_benchmark_ray.py): the flat `*_summary.json` as one closed-loop level,
or the `*_individual_responses.json` list alone as per-request samples (seconds -> ms)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from pydantic import ValidationError

from errors import InputError
from measurements.importers.common import (
    DeploymentOverrides,
    MetricSet,
    Reader,
    content_key,
    join_notes,
    resolve_deployment,
)
from measurements.importers.limits import MAX_SAMPLES, over
from measurements.importers.samples import add_distribution, recompute
from measurements.run_file import (
    Environment,
    Level,
    LoadKind,
    Provenance,
    RequestSample,
    RunFile,
    Source,
    Workload,
    input_error_from_validation,
)

FORMAT_ID = "llmperf"
DESCRIPTION = (
    "llmperf token_benchmark_ray.py *_summary.json (flat results_ttft_s_quantiles_p50 ... keys) "
    "or its *_individual_responses.json list (ttft_s, end_to_end_latency_s per request)"
)
CLIENT = "llmperf token_benchmark_ray.py"

_STAT_KEY = re.compile(r"results_([a-z_]+?)_s_(quantiles_p\d+|mean|min|max|stddev)")
# llmperf's inter_token_latency_s is (sum of gaps incl. TTFT) / N, i.e. e2e per token, not TPOT.
_METRICS = {"ttft": "ttft", "end_to_end_latency": "e2e", "inter_token_latency": "e2e_per_token"}
_STATS = {"mean": "mean", "min": "min", "max": "max", "stddev": "std"} | {
    f"quantiles_p{p}": f"p{p}" for p in (50, 90, 95, 99)
}
_SAMPLE_KEYS = ("ttft_s", "end_to_end_latency_s", "inter_token_latency_s")


def _is_summary(doc: object) -> bool:
    return isinstance(doc, dict) and any(
        f"results_{metric}_s_mean" in doc for metric in ("ttft", "end_to_end_latency")
    )


def _is_individual(doc: object) -> bool:
    return (
        isinstance(doc, list)
        and bool(doc)
        and all(isinstance(item, dict) and all(k in item for k in _SAMPLE_KEYS) for item in doc)
    )


def sniff(name: str, doc: object) -> str | None:
    """Describe the llmperf file kind when `doc` is one, else None."""
    if _is_summary(doc):
        return "llmperf summary (token_benchmark_ray.py *_summary.json)"
    if _is_individual(doc) and isinstance(doc, list):
        return f"llmperf individual responses ({len(doc)} requests, no summary)"
    return None


def parse(
    name: str,
    doc: object,
    data: bytes,
    overrides: DeploymentOverrides,
    provenance: Provenance,
) -> list[RunFile]:
    """One llmperf file as one RunFile with one level."""
    if isinstance(doc, dict) and _is_summary(doc):
        reader = Reader(name, doc)
        level, workload = _summary_level(reader), _summary_workload(reader)
        stated = DeploymentOverrides(model=reader.text("model"))
        label, notes = reader.text("name"), _summary_notes(reader)
    elif isinstance(doc, list) and _is_individual(doc):
        level = _individual_level(name, doc)
        workload, stated, label, notes = (
            _individual_workload(level),
            DeploymentOverrides(),
            None,
            [],
        )
    else:
        raise InputError(f"not {DESCRIPTION}", file=name)
    hint = " (llmperf talks to any OpenAI-compatible API)"
    deployment, conflicts = resolve_deployment(name, stated, overrides, hint=hint)
    return [
        RunFile(
            source=Source.LLMPERF,
            provenance=provenance,
            deployment=deployment,
            workload=workload,
            environment=Environment(client=CLIENT),
            levels=(level,),
            label=label,
            notes=join_notes(notes + conflicts, "\n"),
            origin_file=name,
            source_sha256=content_key(data),
        )
    ]


def _summary_notes(reader: Reader) -> list[str]:
    notes = []
    for key in ("framework", "api", "version"):
        text = reader.obj.get(key)
        if isinstance(text, str) and text:
            notes.append(f"{key}: {text}")
    stamp = reader.number("timestamp")
    if stamp is not None:
        notes.append(f"timestamp {stamp:.0f} (unix seconds, written when the run finished)")
    return notes


def _summary_workload(reader: Reader) -> Workload:
    isl = reader.number("results_number_input_tokens_mean")
    osl = reader.number("results_number_output_tokens_mean")
    return Workload(
        isl=round(isl) or None if isl is not None else None,
        osl=round(osl) or None if osl is not None else None,
    )


def _summary_level(reader: Reader) -> Level:
    concurrency = reader.count("num_concurrent_requests", required=True) or 0
    if concurrency < 1:
        raise reader.fail("num_concurrent_requests", "must be at least 1", concurrency)
    sent = reader.count("results_num_requests_started")
    finished = reader.count("results_num_completed_requests")
    failed = reader.count("results_number_errors")
    metrics = MetricSet()
    notes = _latencies(reader, metrics)
    completed, duration_s, rate_notes = _counts(reader, metrics, sent, finished, failed)
    notes += rate_notes + metrics.notes
    return _level(
        reader.file,
        concurrency=float(concurrency),
        duration_s=duration_s,
        counts=(sent, completed, failed),
        metrics=metrics,
        notes=notes,
    )


def _latencies(reader: Reader, metrics: MetricSet) -> list[str]:
    unmapped_metrics: set[str] = set()
    unmapped_stats: set[str] = set()
    for key in reader.obj:
        match = _STAT_KEY.fullmatch(key)
        value = None if match is None else reader.number(key)
        if match is None or value is None:
            continue
        metric, stat = _METRICS.get(match[1]), _STATS.get(match[2])
        if metric is None:
            unmapped_metrics.add(f"results_{match[1]}_s_*")
        elif stat is None:
            unmapped_stats.add(match[2])
        else:
            metrics.add(f"{stat}_{metric}_ms", value * 1000, source=(key, value))
    notes = []
    if unmapped_stats:
        notes.append("statistics with no canonical name: " + ", ".join(sorted(unmapped_stats)))
    if unmapped_metrics:
        notes.append("not mapped (no canonical name): " + ", ".join(sorted(unmapped_metrics)))
    return notes


def _counts(
    reader: Reader,
    metrics: MetricSet,
    sent: int | None,
    finished: int | None,
    failed: int | None,
) -> tuple[int | None, float | None, list[str]]:
    """Completed (llmperf counts only requests without an error), the derived duration, notes."""
    key = "results_mean_output_throughput_token_per_s"
    output_tok_s = reader.number(key)
    if output_tok_s is not None:
        metrics.add("output_tok_s", output_tok_s, source=(key, output_tok_s))
    if finished is not None and sent is not None and finished + (failed or 0) > sent:
        message = f"+ results_number_errors is more than results_num_requests_started ({sent})"
        raise reader.fail("results_num_completed_requests", message, finished)
    completed = finished
    per_min_key = "results_num_completed_requests_per_min"
    per_min = reader.number(per_min_key)
    if per_min is None or not per_min or not finished:
        return completed, None, []
    metrics.add("request_s", per_min / 60, source=(per_min_key, per_min))
    duration_s = finished / per_min * 60
    note = f"duration_s derived: results_num_completed_requests / {per_min_key} * 60"
    return completed, duration_s, [note]


def _level(
    file: str,
    *,
    concurrency: float,
    duration_s: float | None,
    counts: tuple[int | None, int | None, int | None],
    metrics: MetricSet,
    notes: list[str],
    samples: tuple[RequestSample, ...] = (),
    load_stated: bool = True,
) -> Level:
    sent, completed, failed = counts
    try:
        return Level(
            load_kind=LoadKind.CONCURRENCY,
            load_value=concurrency,
            load_stated=load_stated,
            duration_s=duration_s,
            requests_sent=sent,
            completed=completed,
            failed=failed,
            metrics=metrics.metrics(),
            samples=samples,
            notes=join_notes(notes),
        )
    except ValidationError as exc:
        raise input_error_from_validation(exc, file) from exc


def _individual_level(name: str, doc: Sequence[Mapping[str, object]]) -> Level:
    over(len(doc), MAX_SAMPLES, "per-request records", file=name)
    samples = tuple(_sample(Reader(name, obj, f"request {i + 1}: ")) for i, obj in enumerate(doc))
    metrics = MetricSet()
    notes = recompute(metrics, samples, None)
    per_token = [
        s.e2e_ms / s.output_tokens
        for s in samples
        if s.ok and s.e2e_ms is not None and s.output_tokens
    ]
    add_distribution(metrics, "e2e_per_token", per_token)
    notes.append(
        "individual responses alone: the file states no concurrency and no duration; the level "
        "is recorded as concurrency 1, marked load not stated and kept out of curve fits (import "
        "the matching _summary.json for the load level and throughput)"
    )
    ok = sum(sample.ok for sample in samples)
    counts = (len(samples), ok, len(samples) - ok)
    return _level(
        name,
        concurrency=1.0,
        duration_s=None,
        counts=counts,
        metrics=metrics,
        notes=notes + metrics.notes,
        samples=samples,
        load_stated=False,
    )


def _individual_workload(level: Level) -> Workload:
    ok = [s for s in level.samples if s.ok]
    inputs = [s.input_tokens for s in ok if s.input_tokens is not None]
    outputs = [s.output_tokens for s in ok if s.output_tokens is not None]
    return Workload(
        isl=round(sum(inputs) / len(inputs)) or None if inputs else None,
        osl=round(sum(outputs) / len(outputs)) or None if outputs else None,
    )


def _sample(reader: Reader) -> RequestSample:
    code, message = reader.obj.get("error_code"), reader.obj.get("error_msg")
    error = None
    if code is not None or (isinstance(message, str) and message):
        error = f"{code if code is not None else 'error'}: {message or ''}".rstrip(": ")
    ttft_s = reader.number("ttft_s")
    e2e_s = reader.number("end_to_end_latency_s")
    return RequestSample(
        ttft_ms=None if ttft_s is None else ttft_s * 1000,
        e2e_ms=None if e2e_s is None else e2e_s * 1000,
        input_tokens=reader.count("number_input_tokens"),
        output_tokens=reader.count("number_output_tokens"),
        error=error,
    )
