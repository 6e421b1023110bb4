"""llm-d-benchmark "benchmark report" v0.2 / v0.2.1 (YAML or JSON) -> RunFile, one level per report.

Reads results.request_performance.aggregate (latency with units, throughput, request counts),
scenario.load.standardized (rate_qps / concurrency, sequence lengths) and the scenario stack."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import datetime

from pydantic import ValidationError

from errors import InputError
from measurements.bounded import load_yaml
from measurements.importers.common import (
    DeploymentOverrides,
    MetricSet,
    Reader,
    checked_number,
    join_notes,
    resolve_deployment,
)
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

FORMAT_ID = "llmd-report"
DESCRIPTION = (
    "llm-d-benchmark benchmark report v0.2/v0.2.1 (YAML or JSON): version 0.2.x with results."
    "request_performance and scenario.load"
)
_VERSIONS = ("0.2", "0.2.1")
_AGG = "results.request_performance.aggregate."
_LATENCY = {
    "time_to_first_token": "ttft",
    "time_per_output_token": "tpot",
    "inter_token_latency": "itl",
    "request_latency": "e2e",
    "normalized_time_per_output_token": "e2e_per_token",
}
_STATS = {"mean": "mean", "p50": "p50", "p90": "p90", "p95": "p95", "p99": "p99"} | {
    "stddev": "std",
    "min": "min",
    "max": "max",
}
# vLLM bench's "itl" is per streamed chunk (canonical icl); llm-d copies it as inter_token_latency.
_CHUNK_ITL_TOOLS = ("vllm-benchmark",)
# Latency unit -> factor to milliseconds; "/token" suffixes are per-token times in the same unit.
_TO_MS = {"s": 1000.0, "ms": 1.0, "us": 0.001, "ns": 1e-6}
_RATES = {
    "output_token_rate": ("output_tok_s", ("tokens/s",)),
    "total_token_rate": ("total_tok_s", ("tokens/s",)),
    "input_token_rate": ("input_tok_s", ("tokens/s",)),
    "request_rate": ("request_s", ("queries/s", "requests/s")),
}
# scenario.load.standardized.tool -> the capplan source of the numbers it normalised.
_SOURCES = {
    "vllm-benchmark": Source.VLLM_BENCH,
    "guidellm": Source.GUIDELLM,
    "inference-perf": Source.INFERENCE_PERF,
    "aiperf": Source.AIPERF,
}
# llm-d's serving images run vLLM; other stack tools are engine names already.
_ENGINE_TOOLS = {"llm-d": "vllm"}
_DURATION = re.compile(r"PT(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?")


def _looks_like_report(text: str) -> bool:
    return "results:" in text and "scenario:" in text and "version:" in text


def _load_doc(name: str, doc: object) -> object:
    if not isinstance(doc, str):
        return doc
    if not (name.lower().endswith((".yaml", ".yml")) or _looks_like_report(doc)):
        return None
    return load_yaml(doc, name)


def _report(name: str, doc: object) -> Mapping[str, object] | None:
    try:
        loaded = _load_doc(name, doc)
    except InputError:
        return None
    if not isinstance(loaded, dict) or str(loaded.get("version")) not in _VERSIONS:
        return None
    results = loaded.get("results")
    if not isinstance(results, dict) or "request_performance" not in results:
        return None
    return loaded if isinstance(loaded.get("scenario"), dict) else None


def sniff(name: str, doc: object) -> str | None:
    """Describe the report when `doc` is an llm-d-benchmark benchmark report, else None."""
    report = _report(name, doc)
    if report is None:
        return None
    kind = "YAML" if isinstance(doc, str) else "JSON"
    return f"llm-d-benchmark benchmark report v{report['version']} ({kind})"


def parse(
    name: str,
    doc: object,
    data: bytes,
    overrides: DeploymentOverrides,
    provenance: Provenance,
) -> list[RunFile]:
    """The report as one RunFile with one level."""
    loaded = _load_doc(name, doc)  # raises the YAML error that sniff swallowed
    report = _report(name, loaded)
    if report is None:
        raise InputError(f"not an {DESCRIPTION}", file=name)
    scenario = _section(Reader(name, report), "scenario")
    load = _section(Reader(name, scenario, "scenario."), "load")
    standard = _section(Reader(name, load, "scenario.load."), "standardized")
    std = Reader(name, standard, "scenario.load.standardized.")
    tool = std.text("tool")
    stated, notes = _stack(Reader(name, scenario, "scenario."))
    deployment, conflicts = resolve_deployment(name, stated, overrides)
    source = _SOURCES.get(tool or "", Source.PUBLISHED)
    if tool and source is Source.PUBLISHED:
        notes.append(f"load tool {tool!r} has no capplan source: recorded as published")
    return [
        RunFile(
            source=source,
            provenance=provenance,
            deployment=deployment,
            workload=_workload(std),
            environment=Environment(client=tool, client_version=std.text("tool_version")),
            levels=(_level(name, report, std),),
            started_at=_started_at(name, report),
            label=_label(report),
            notes=join_notes(notes + conflicts, "\n"),
            origin_file=name,
        )
    ]


def _section(reader: Reader, key: str) -> Mapping[str, object]:
    value = reader.obj.get(key)
    if not isinstance(value, dict):
        raise reader.fail(key, "is missing or not a mapping", value)
    return value


def _optional(reader: Reader, key: str) -> Mapping[str, object]:
    value = reader.obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise reader.fail(key, "expected a mapping", value)
    return value


def _stack(scenario: Reader) -> tuple[DeploymentOverrides, list[str]]:
    """Engine, model, GPU and parallelism of the first inference_engine in scenario.stack."""
    stack = scenario.obj.get("stack") or []
    if not isinstance(stack, list):
        raise scenario.fail("stack", "expected a list", stack)
    for i, item in enumerate(stack):
        where = f"scenario.stack[{i}].standardized."
        standard = item.get("standardized") if isinstance(item, dict) else None
        if isinstance(standard, dict) and standard.get("kind") == "inference_engine":
            return _engine(Reader(scenario.file, standard, where))
    return DeploymentOverrides(), ["scenario.stack names no inference_engine"]


def _engine(reader: Reader) -> tuple[DeploymentOverrides, list[str]]:
    tool = reader.text("tool")
    engine = _ENGINE_TOOLS.get(tool, tool) if tool else None
    notes = [f"stack tool {tool!r} serves {engine}"] if tool in _ENGINE_TOOLS else []
    model = Reader(reader.file, _optional(reader, "model"), reader.field("model."))
    gpu = Reader(reader.file, _optional(reader, "accelerator"), reader.field("accelerator."))
    par = Reader(gpu.file, _optional(gpu, "parallelism"), gpu.field("parallelism."))
    try:
        stated = DeploymentOverrides(
            engine=engine,
            engine_version=reader.text("tool_version"),
            model=model.text("name"),
            gpu=gpu.text("model"),
            gpu_count=gpu.count("count") or None,
            tp=par.count("tp") or None,
            pp=par.count("pp") or None,
        )
    except ValidationError as exc:
        raise input_error_from_validation(exc, reader.file) from exc
    return stated, notes


def _seq_len(std: Reader, key: str) -> tuple[int | None, str | None]:
    spec = Reader(std.file, _optional(std, key), std.field(f"{key}."))
    value = spec.count("value")
    return (value or None), spec.text("distribution")


def _workload(std: Reader) -> Workload:
    isl, isl_dist = _seq_len(std, "input_seq_len")
    osl, osl_dist = _seq_len(std, "output_seq_len")
    return Workload(isl=isl, osl=osl, isl_distribution=isl_dist, osl_distribution=osl_dist)


def _load_number(std: Reader, key: str) -> float | None:
    """A stated rate or concurrency; infinity (.inf: unbounded) counts as not stated."""
    value = std.obj.get(key)
    if value is None or (isinstance(value, float) and math.isinf(value) and value > 0):
        return None
    number = checked_number(std, key, value)
    if number == 0:
        raise std.fail(key, "must be greater than 0", value)
    return number


def _level(name: str, report: Mapping[str, object], std: Reader) -> Level:
    agg = _aggregate(name, report)
    metrics = MetricSet()
    notes = _latency(agg, metrics, per_chunk=std.text("tool") in _CHUNK_ITL_TOOLS)
    notes += _throughput(agg, metrics)
    stage = std.obj.get("stage")
    if stage is not None:
        notes.append(f"stage {stage} of the load tool's run")
    requests = Reader(name, _optional(agg, "requests"), _AGG + "requests.")
    total, failed = requests.count("total"), requests.count("failures")
    rate, concurrency = _load_number(std, "rate_qps"), _load_number(std, "concurrency")
    kind, value, stated = LoadKind.RATE, rate, True
    if rate is not None and concurrency is not None:
        notes.append(f"open loop at {rate:g} req/s, at most {concurrency:g} in flight")
    elif rate is None and concurrency is not None:
        kind, value = LoadKind.CONCURRENCY, concurrency
    elif rate is None:
        value, stated = _achieved_rate(metrics), False
        if value is None:
            raise std.fail("rate_qps", "is missing, so are concurrency and request_rate")
        notes.append("load not stated: load_value is the achieved request rate")
    completed = None if total is None else total - (failed or 0)
    if completed is not None and completed < 0:
        raise requests.fail("failures", f"is more than total ({total})", failed)
    try:
        return Level(
            load_kind=kind,
            load_value=value,
            load_stated=stated,
            duration_s=_duration_s(name, report),
            requests_sent=total,
            completed=completed,
            failed=failed,
            metrics=metrics.metrics(),
            notes=join_notes(notes + metrics.notes),
        )
    except ValidationError as exc:
        raise input_error_from_validation(exc, name) from exc


def _aggregate(name: str, report: Mapping[str, object]) -> Reader:
    reader = Reader(name, report)
    results = Reader(name, _section(reader, "results"), "results.")
    perf = Reader(name, _section(results, "request_performance"), "results.request_performance.")
    return Reader(name, _section(perf, "aggregate"), _AGG)


def _latency(agg: Reader, metrics: MetricSet, *, per_chunk: bool) -> list[str]:
    latency = Reader(agg.file, _optional(agg, "latency"), _AGG + "latency.")
    unmapped = []
    for key in latency.obj:
        metric = _LATENCY.get(key)
        if metric == "itl" and per_chunk:
            metric = "icl"
        if metric is None:
            unmapped.append(key)
            continue
        stats = Reader(agg.file, _optional(latency, key), latency.field(f"{key}."))
        units = stats.text("units")
        factor = _TO_MS.get((units or "").removesuffix("/token"))
        if factor is None:
            raise stats.fail(
                "units", f"unknown latency unit; expected one of {list(_TO_MS)}", units
            )
        for stat, canonical in _STATS.items():
            raw = stats.number(stat)
            if raw is not None:
                name = f"{canonical}_{metric}_ms"
                metrics.add(name, raw * factor, source=(stats.field(stat), raw))
    return [f"latency not mapped: {', '.join(unmapped)}"] if unmapped else []


def _throughput(agg: Reader, metrics: MetricSet) -> list[str]:
    rates = Reader(agg.file, _optional(agg, "throughput"), _AGG + "throughput.")
    for key, (canonical, units) in _RATES.items():
        if rates.obj.get(key) is None:
            continue
        stats = Reader(agg.file, _optional(rates, key), rates.field(f"{key}."))
        unit = stats.text("units")
        if unit not in units:
            raise stats.fail("units", f"expected {' or '.join(units)}", unit)
        mean = stats.number("mean")
        if mean is not None:
            metrics.add(canonical, mean, source=(stats.field("mean"), mean))
    return []


def _achieved_rate(metrics: MetricSet) -> float | None:
    rates = [m.value for m in metrics.metrics() if m.name == "request_s" and m.value > 0]
    return rates[0] if rates else None


def _time(name: str, report: Mapping[str, object]) -> Reader:
    run = Reader(name, _optional(Reader(name, report), "run"), "run.")
    return Reader(name, _optional(run, "time"), "run.time.")


def _duration_s(name: str, report: Mapping[str, object]) -> float | None:
    """run.time.duration, an ISO 8601 duration such as PT49.97S."""
    time = _time(name, report)
    text = time.text("duration")
    match = _DURATION.fullmatch(text) if text else None
    if text is None:
        return None
    if match is None or not any(match.groups()):
        raise time.fail("duration", "expected an ISO 8601 duration such as PT49.9S", text)
    hours, minutes, seconds = (float(part) if part else 0.0 for part in match.groups())
    return (hours * 3600 + minutes * 60 + seconds) or None


def _started_at(name: str, report: Mapping[str, object]) -> datetime | None:
    time = _time(name, report)
    start = time.obj.get("start")
    if start is None or isinstance(start, datetime):
        return start
    if not isinstance(start, str):
        raise time.fail("start", "expected an ISO 8601 time", start)
    try:
        return datetime.fromisoformat(start)
    except ValueError as exc:
        raise time.fail("start", "expected an ISO 8601 time", start) from exc


def _label(report: Mapping[str, object]) -> str | None:
    run = report.get("run")
    description = run.get("description") if isinstance(run, dict) else None
    return description if isinstance(description, str) else None
