"""kubernetes-sigs/inference-perf: a `*_lifecycle_metrics.json` (one stage, or the summary over all
stages) as one level, or `per_request_lifecycle_metrics.json` alone as samples; seconds -> ms.
Verified on real files of inference-perf 0.7.0 (tests/fixtures/inference-perf/real-0.7.0/; a
concurrent stage states `load_summary.concurrency`) and on the 0.5.0 test corpus."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError

from errors import InputError
from measurements.bounded import load_yaml
from measurements.importers.common import (
    DeploymentOverrides,
    MetricSet,
    Reader,
    content_key,
    join_notes,
    resolve_deployment,
)
from measurements.importers.inference_perf_requests import is_per_request, per_request_level
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

FORMAT_ID = "inference-perf"
DESCRIPTION = (
    "inference-perf *_lifecycle_metrics.json (load_summary, successes.latency, failures; "
    "seconds) or per_request_lifecycle_metrics.json (a list of start_time, end_time, info)"
)
CLIENT = "inference-perf"

# inference-perf's time_per_output_token is (last - first token)/(N - 1): our TPOT; its NTPOT is
# e2e / N; its inter_token_latency is per token (tokens of one chunk get gap 0): our itl.
_METRICS = {
    "time_to_first_token": "ttft",
    "time_per_output_token": "tpot",
    "normalized_time_per_output_token": "e2e_per_token",
    "inter_token_latency": "itl",
    "request_latency": "e2e",
}
_STATS = {"mean": "mean", "min": "min", "max": "max", "median": "p50"} | {
    f"p{p}": f"p{p}" for p in (90, 95, 99)
}
_RATES = {
    "input_tokens_per_sec": "input_tok_s",
    "output_tokens_per_sec": "output_tok_s",
    "total_tokens_per_sec": "total_tok_s",
    "requests_per_sec": "request_s",
}


def _is_lifecycle(doc: object) -> bool:
    # The *_prometheus_metrics.json files share the three top keys but have no successes.latency.
    if not isinstance(doc, dict) or not {"load_summary", "successes", "failures"} <= doc.keys():
        return False
    successes = doc["successes"]
    return isinstance(successes, dict) and isinstance(successes.get("latency"), dict)


def sniff(name: str, doc: object) -> str | None:
    """Describe the inference-perf file kind when `doc` is a lifecycle report, else None."""
    if _is_lifecycle(doc) and isinstance(doc, dict):
        summary = doc["load_summary"]
        staged = isinstance(summary, dict) and "requested_rate" in summary
        return f"inference-perf lifecycle metrics ({'one stage' if staged else 'summary'})"
    if is_per_request(doc) and isinstance(doc, list):
        return f"inference-perf per-request lifecycle metrics ({len(doc)} requests)"
    return None


_SERVER_SIDE = ("kv_cache_usage_percentage", "num_preemptions_total", "queue_len")


def not_a_result(doc: object) -> str | None:
    """Why `doc` is not importable when it is inference-perf's Prometheus scrape, else None."""
    if not isinstance(doc, dict) or not isinstance(doc.get("successes"), dict):
        return None
    if not any(key in doc["successes"] for key in _SERVER_SIDE):
        return None
    return (
        "this is inference-perf's *_prometheus_metrics.json: the model server's own /metrics "
        "over the stage (histogram estimates, no load stated), not client measurements; import "
        "the *_lifecycle_metrics.json written beside it"
    )


def parse(
    name: str,
    doc: object,
    data: bytes,
    overrides: DeploymentOverrides,
    provenance: Provenance,
) -> list[RunFile]:
    """One lifecycle (or per-request) file as one RunFile with one level."""
    if isinstance(doc, dict) and _is_lifecycle(doc):
        level, workload = _lifecycle_level(name, doc)
    elif isinstance(doc, list) and is_per_request(doc):
        level, workload = per_request_level(name, doc)
    else:
        raise InputError(f"not {DESCRIPTION}", file=name)
    hint = " (inference-perf reports do not name the model server)"
    deployment, notes = resolve_deployment(name, DeploymentOverrides(), overrides, hint=hint)
    return [
        RunFile(
            source=Source.INFERENCE_PERF,
            provenance=provenance,
            deployment=deployment,
            workload=workload,
            environment=Environment(client=CLIENT),
            levels=(level,),
            notes=join_notes(notes, "\n"),
            origin_file=name,
            source_sha256=content_key(data),
        )
    ]


def _section(reader: Reader, key: str) -> Reader:
    value = reader.obj.get(key)
    if value is None:
        return Reader(reader.file, {}, f"{reader.where}{key}.")
    if not isinstance(value, dict):
        raise reader.fail(key, "expected an object", value)
    return Reader(reader.file, value, f"{reader.where}{key}.")


def _lifecycle_level(name: str, doc: Mapping[str, object]) -> tuple[Level, Workload]:
    top = Reader(name, doc)
    load, successes = _section(top, "load_summary"), _section(top, "successes")
    failures = _section(top, "failures")
    completed = successes.count("count", required=True)
    failed = failures.count("count")
    sent = load.count("count")
    if sent is not None and completed is not None and completed + (failed or 0) > sent:
        message = f"successes.count ({completed}) + failures.count is more than load_summary.count"
        raise load.fail("count", message, sent)
    metrics = MetricSet()
    notes = _latencies(_section(successes, "latency"), metrics)
    throughput = _section(successes, "throughput")
    for key, canonical in _RATES.items():
        value = throughput.number(key)
        if value is not None:
            metrics.add(canonical, value, source=(throughput.field(key), value))
    kind, value, stated, load_notes = _load(load, throughput)
    try:
        level = Level(
            load_kind=kind,
            load_value=value,
            load_stated=stated,
            requests_sent=sent,
            completed=completed,
            failed=failed,
            metrics=metrics.metrics(),
            notes=join_notes(load_notes + notes + metrics.notes),
        )
    except ValidationError as exc:
        raise input_error_from_validation(exc, name) from exc
    return level, _workload(successes)


def _load(load: Reader, throughput: Reader) -> tuple[LoadKind, float, bool, list[str]]:
    """A concurrent stage's concurrency (0.7: load_summary.concurrency, its requested_rate is
    then the request count), else a stage's requested rate; the summary states neither."""
    concurrency = load.count("concurrency")
    if concurrency is not None:
        if concurrency < 1:
            raise load.fail("concurrency", "must be 1 or more", concurrency)
        return LoadKind.CONCURRENCY, float(concurrency), True, []
    rate = load.number("requested_rate")
    if rate is not None:
        if rate == 0:
            raise load.fail("requested_rate", "must be greater than 0", rate)
        notes = [f"open loop at {rate:g} req/s (load_summary.requested_rate)"]
        achieved = load.number("achieved_rate")
        if achieved is not None:
            notes.append(f"achieved_rate {achieved:g} req/s")
        return LoadKind.RATE, rate, True, notes
    achieved_s = throughput.number("requests_per_sec")
    if not achieved_s:
        raise load.fail("requested_rate", "is missing and so is successes.throughput: load unknown")
    note = (
        "summary over all stages (no load_summary.requested_rate): recorded at the achieved "
        "requests_per_sec, marked load not stated and kept out of curve fits; import the "
        "stage_<N>_lifecycle_metrics.json files for the load levels"
    )
    return LoadKind.RATE, achieved_s, False, [note]


def _latencies(latency: Reader, metrics: MetricSet) -> list[str]:
    unmapped: set[str] = set()
    for key, canonical in _METRICS.items():
        stats = _section(latency, key)
        for stat_key in stats.obj:
            value = stats.number(stat_key)
            stat = _STATS.get(stat_key)
            if value is None:
                continue
            if stat is None:
                unmapped.add(stat_key)
                continue
            metrics.add(
                f"{stat}_{canonical}_ms", value * 1000, source=(stats.field(stat_key), value)
            )
    extra = sorted(set(latency.obj) - set(_METRICS))
    notes = []
    if unmapped:
        notes.append(
            "statistics with no canonical name not imported: " + ", ".join(sorted(unmapped))
        )
    if extra:
        notes.append("latency metrics not mapped: " + ", ".join(extra))
    return notes


def _workload(successes: Reader) -> Workload:
    isl = _section(successes, "prompt_len").number("mean")
    osl = _section(successes, "output_len").number("mean")
    return Workload(
        isl=round(isl) or None if isl is not None else None,
        osl=round(osl) or None if osl is not None else None,
    )


def requested_workload(name: str, data: bytes) -> Workload | None:
    """The workload an inference-perf run was asked for, from the config.yaml / config.json it
    writes beside its results (data.input_distribution / output_distribution): None when
    `data` is not such a config."""
    if not name.endswith(("config.yaml", "config.yml", "config.json")):
        return None
    try:
        doc = load_yaml(data.decode("utf-8"), name)
    except (InputError, UnicodeDecodeError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("load"), dict):
        return None
    section = doc.get("data")
    if not isinstance(section, dict):
        return None
    isl, isl_shape = _requested(section.get("input_distribution"))
    osl, osl_shape = _requested(section.get("output_distribution"))
    if isl is None and osl is None:
        return None
    kind = section.get("type")
    return Workload(
        isl=isl,
        osl=osl,
        isl_distribution=isl_shape,
        osl_distribution=osl_shape,
        dataset=kind if isinstance(kind, str) else None,
    )


def _requested(spread: object) -> tuple[int | None, str | None]:
    """(mean tokens, 'fixed' or 'normal(mean, sd)') of one configured length distribution."""
    if not isinstance(spread, dict):
        return None, None
    mean, low, high = (spread.get(key) for key in ("mean", "min", "max"))
    if not isinstance(mean, int | float) or isinstance(mean, bool) or mean < 1:
        return None, None
    if low == high and isinstance(low, int | float):
        return round(mean), "fixed"
    deviation = spread.get("std_dev")
    shape = f"normal({mean:g}, {deviation:g})" if isinstance(deviation, int | float) else None
    return round(mean), shape
