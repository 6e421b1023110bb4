"""NVIDIA AIPerf profile_export_aiperf.json -> RunFile (one load level per file).

Two layouts: current (one top-level `{unit, avg, pNN...}` object per metric tag) and early
(Oct 2025: the same objects under `records`, each with `tag` and `header`). The load is under
`input_config.loadgen` before 0.13 and in the profiling phase of `input_config.phases[]` from
0.13 on. Verified on real files of aiperf 0.13.0 (tests/fixtures/aiperf/real-0.13.0/). Also holds
the metric-object helpers the GenAI-Perf importer shares (same tags, same units)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from pydantic import ValidationError

from errors import InputError
from measurements.importers.aiperf_load import (
    NO_LOAD,
    Load,
    file_load,
    file_model,
    section,
)
from measurements.importers.common import (
    DeploymentOverrides,
    MetricSet,
    Reader,
    join_notes,
    resolve_deployment,
)
from measurements.importers.gpu_telemetry import add_telemetry_power
from measurements.importers.versions import named, version_notes
from measurements.run_file import (
    Environment,
    Level,
    Provenance,
    RunFile,
    Source,
    Workload,
    input_error_from_validation,
)

FORMAT_ID = "aiperf"
DESCRIPTION = (
    "AIPerf profile_export_aiperf.json: top-level metric objects {unit, avg, p99, ...} with "
    "error_summary or was_cancelled (early versions: the objects under records, with tag)"
)
CLIENT = "aiperf"

# AIPerf/GenAI-Perf inter_token_latency is (e2e - ttft) / (osl - 1): our TPOT; ICL is per chunk.
LATENCIES = {
    "time_to_first_token": "ttft",
    "ttft": "ttft",
    "inter_token_latency": "tpot",
    "inter_chunk_latency": "icl",
    "request_latency": "e2e",
}
STATS = {"avg": "mean", "p50": "p50", "p90": "p90", "p95": "p95", "p99": "p99"} | {
    "std": "std",
    "min": "min",
    "max": "max",
}
# tag -> (canonical name, units the tool writes for it)
RATES = {
    "request_throughput": ("request_s", ("requests/sec",)),
    "output_token_throughput": ("output_tok_s", ("tokens/sec",)),
    "total_token_throughput": ("total_tok_s", ("tokens/sec",)),
    "input_token_throughput": ("input_tok_s", ("tokens/sec",)),
    "output_token_throughput_per_user": ("stream_tok_s", ("tokens/sec/user",)),
    "goodput": ("goodput_request_s", ("requests/sec",)),
    "request_goodput": ("goodput_request_s", ("requests/sec",)),
}
TO_MS = {"ms": 1.0, "s": 1000.0, "sec": 1000.0, "us": 1e-3, "ns": 1e-6}
# Tags read into counts or the workload, so not listed as "not mapped".
COUNT_TAGS = frozenset(
    {
        "request_count",
        "error_request_count",
        "benchmark_duration",
        "total_isl",
        "total_osl",
        "input_sequence_length",
        "output_sequence_length",
        "min_request_timestamp",
    }
)

MetricObjects = Mapping[str, Reader]


def _is_metric_object(value: object) -> bool:
    return isinstance(value, dict) and "unit" in value and "avg" in value


def _early_records(doc: object) -> Mapping[str, object] | None:
    if not isinstance(doc, dict):
        return None
    records = doc.get("records")
    if not isinstance(records, dict) or not records:
        return None
    if all(_is_metric_object(v) and "tag" in v for v in records.values()):
        return records
    return None


def _is_flat(doc: object) -> bool:
    if not isinstance(doc, dict) or not _is_metric_object(doc.get("request_throughput")):
        return False
    markers = ("aiperf_version", "error_summary", "was_cancelled", "benchmark_id")
    return any(key in doc for key in markers)


def sniff(name: str, doc: object) -> str | None:
    """Describe the AIPerf layout when `doc` is a profile_export_aiperf.json, else None."""
    if _early_records(doc) is not None:
        return "AIPerf profile_export_aiperf.json (early layout: metrics under records)"
    if _is_flat(doc) and isinstance(doc, dict):
        version = doc.get("aiperf_version")
        shown = f", aiperf {version}" if isinstance(version, str) else ""
        return f"AIPerf profile_export_aiperf.json (flat layout{shown})"
    return None


def metric_objects(name: str, doc: Mapping[str, object], prefix: str = "") -> dict[str, Reader]:
    """Every `{unit, avg, ...}` object in `doc` by tag, each as a Reader naming its key path; a
    metric capplan reads that is given in another shape (a list, a bare number) is refused, not
    dropped."""
    for tag, value in doc.items():
        # null (not measured) and objects without an avg (not computed) are skipped, as before.
        if (tag in LATENCIES or tag in RATES) and isinstance(value, list | str | int | float):
            raise InputError(
                "expected a metric object with 'unit' and 'avg' (AIPerf's layout)",
                file=name,
                field=f"{prefix}{tag}",
                value=value,
            )
    return {
        tag: Reader(name, value, f"{prefix}{tag}.")
        for tag, value in doc.items()
        if _is_metric_object(value) and isinstance(value, dict)
    }


def unit_of(reader: Reader) -> str:
    """The `unit` of one metric object (must be a string)."""
    unit = reader.text("unit")
    if unit is None:
        raise reader.fail("unit", "is missing: expected a unit such as ms")
    return unit


def add_metrics(objects: MetricObjects, metrics: MetricSet) -> list[str]:
    """Map latency and rate objects to canonical metrics; return notes on what was not mapped."""
    unmapped: list[str] = []
    for tag, reader in objects.items():
        if tag in LATENCIES:
            _add_latency(reader, LATENCIES[tag], metrics)
        elif tag in RATES and unit_of(reader) in RATES[tag][1]:
            value = reader.number("avg")
            if value is not None:
                metrics.add(RATES[tag][0], value, source=(reader.field("avg"), value))
        elif tag not in COUNT_TAGS:
            unmapped.append(tag)
    return ["not mapped (no canonical name): " + ", ".join(unmapped)] if unmapped else []


def _add_latency(reader: Reader, metric: str, metrics: MetricSet) -> None:
    unit = unit_of(reader)
    if unit not in TO_MS:
        raise reader.fail("unit", f"expected a time unit ({', '.join(TO_MS)})", unit)
    for stat, canonical in STATS.items():
        value = reader.number(stat)
        if value is not None:
            name = f"{canonical}_{metric}_ms"
            metrics.add(name, value * TO_MS[unit], source=(reader.field(stat), value))


def avg(objects: MetricObjects, tag: str, *, whole: bool = False) -> float | None:
    """The `avg` of one metric object, or None when the file lacks it."""
    reader = objects.get(tag)
    if reader is None:
        return None
    return reader.count("avg") if whole else reader.number("avg")


def parse(
    name: str,
    doc: object,
    data: bytes,
    overrides: DeploymentOverrides,
    provenance: Provenance,
) -> list[RunFile]:
    """One profile_export_aiperf.json as one RunFile with one load level."""
    if not isinstance(doc, dict) or sniff(name, doc) is None:
        raise InputError(f"not an {DESCRIPTION}", file=name)
    records = _early_records(doc)
    objects = (
        metric_objects(name, records, "records.")
        if records is not None
        else metric_objects(name, doc)
    )
    top = Reader(name, doc)
    version = top.text("aiperf_version")
    config = section(top, "input_config")
    if config is None:
        raise top.fail("input_config", f"{NO_LOAD} ({named(CLIENT, version)})")
    level = _level(top, objects, config, overrides)
    model, notes = file_model(config)
    notes = version_notes(CLIENT, version) + notes
    stated = DeploymentOverrides(model=model)
    hint = " (AIPerf talks to any OpenAI-compatible server)"
    deployment, conflicts = resolve_deployment(name, stated, overrides, hint=hint)
    cancelled = doc.get("was_cancelled")
    return [
        RunFile(
            source=Source.AIPERF,
            provenance=provenance,
            deployment=deployment,
            workload=sequence_workload(objects),
            environment=Environment(
                gpu_name=_gpu_name(top),
                client=CLIENT,
                client_version=version,
            ),
            levels=(level,),
            started_at=_started_at(objects),
            complete=cancelled is not True,
            notes=join_notes(notes + conflicts, "\n"),
            origin_file=name,
        )
    ]


def _level(
    top: Reader, objects: MetricObjects, config: Reader, overrides: DeploymentOverrides
) -> Level:
    completed = avg(objects, "request_count", whole=True)
    failed = avg(objects, "error_request_count", whole=True)
    if failed is None:
        failed = _summary_errors(top)
    load = file_load(config, overrides, top.text("aiperf_version"))
    metrics = MetricSet()
    notes = [*load.notes, *add_metrics(objects, metrics)]
    notes += add_telemetry_power(top, metrics, overrides.gpu_count or overrides.tp)
    if failed:
        notes.append(f"request_latency statistics include the {failed} failed requests (AIPerf)")
    duration = objects.get("benchmark_duration")
    duration_s = None if duration is None else duration.number("avg", positive=True)
    if duration is not None and unit_of(duration) not in ("sec", "s"):
        raise duration.fail("unit", "expected sec", unit_of(duration))
    return build_level(
        top.file,
        load,
        metrics,
        notes,
        duration_s=duration_s,
        completed=completed,
        failed=failed,
        input_tokens_total=avg(objects, "total_isl", whole=True),
        output_tokens_total=avg(objects, "total_osl", whole=True),
    )


def build_level(
    file: str,
    load: Load,
    metrics: MetricSet,
    notes: list[str],
    **counts: float | int | None,
) -> Level:
    """A Level from the load, the metrics and the counts; a bad value raises InputError."""
    try:
        return Level(
            load_kind=load.kind,
            load_value=load.value,
            burst=load.burst,
            metrics=metrics.metrics(),
            notes=join_notes(notes + metrics.notes),
            **counts,
        )
    except ValidationError as exc:
        raise input_error_from_validation(exc, file) from exc


def _summary_errors(top: Reader) -> int | None:
    summary = top.obj.get("error_summary")
    if not isinstance(summary, list):
        return None
    total = 0
    for i, entry in enumerate(summary):
        count = entry.get("count") if isinstance(entry, dict) else None
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise top.fail(f"error_summary[{i}].count", "expected a whole number >= 0", count)
        total += count
    return total


def sequence_workload(objects: MetricObjects) -> Workload:
    """Mean input/output lengths (rounded) from input_/output_sequence_length."""
    isl = avg(objects, "input_sequence_length")
    osl = avg(objects, "output_sequence_length")
    return Workload(isl=round(isl) if isl else None, osl=round(osl) if osl else None)


def _started_at(objects: MetricObjects) -> datetime | None:
    # start_time is local time without a zone (the early example is UTC-7); the epoch ns is not.
    first_ns = avg(objects, "min_request_timestamp")
    return None if first_ns is None else datetime.fromtimestamp(first_ns / 1e9, UTC)


def _gpu_name(top: Reader) -> str | None:
    endpoints = top.obj.get("telemetry_data")
    endpoints = endpoints.get("endpoints") if isinstance(endpoints, dict) else None
    names: set[str] = set()
    for endpoint in endpoints.values() if isinstance(endpoints, dict) else ():
        gpus = endpoint.get("gpus") if isinstance(endpoint, dict) else None
        for gpu in gpus.values() if isinstance(gpus, dict) else ():
            if isinstance(gpu, dict) and isinstance(gpu.get("gpu_name"), str):
                names.add(gpu["gpu_name"])
    return names.pop() if len(names) == 1 else None
