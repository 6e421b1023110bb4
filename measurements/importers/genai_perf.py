"""NVIDIA GenAI-Perf profile_export_genai_perf.json -> RunFile (one load level per file).

Same metric objects as AIPerf (`{unit, avg, pNN...}` per tag); the load is in
input_config.perf_analyzer.stimulus. No duration or token totals are written."""

from __future__ import annotations

from collections.abc import Mapping

from errors import InputError
from measurements.importers.aiperf import (
    add_metrics,
    avg,
    build_level,
    metric_objects,
    sequence_workload,
)
from measurements.importers.aiperf_load import NO_LOAD, load_level, model_name, section
from measurements.importers.common import (
    DeploymentOverrides,
    MetricSet,
    Reader,
    join_notes,
    normalise_engine,
    resolve_deployment,
)
from measurements.run_file import Environment, Provenance, RunFile, Source

FORMAT_ID = "genai-perf"
DESCRIPTION = (
    "GenAI-Perf profile_export_genai_perf.json: top-level metric objects {unit, avg, p99, ...} "
    "and input_config with perf_analyzer"
)
CLIENT = "genai-perf"
_AIPERF_MARKERS = ("aiperf_version", "error_summary", "was_cancelled", "benchmark_id")


def sniff(name: str, doc: object) -> str | None:
    """Describe the file when `doc` is a profile_export_genai_perf.json, else None."""
    if not isinstance(doc, dict) or any(key in doc for key in _AIPERF_MARKERS):
        return None
    config = doc.get("input_config")
    metric = doc.get("request_throughput")
    if not isinstance(config, dict) or "perf_analyzer" not in config:
        return None
    if not isinstance(metric, dict) or "unit" not in metric:
        return None
    return "GenAI-Perf profile_export_genai_perf.json"


def parse(
    name: str,
    doc: object,
    data: bytes,
    overrides: DeploymentOverrides,
    provenance: Provenance,
) -> list[RunFile]:
    """One profile_export_genai_perf.json as one RunFile with one load level."""
    if not isinstance(doc, dict) or sniff(name, doc) is None:
        raise InputError(f"not a {DESCRIPTION}", file=name)
    objects = metric_objects(name, doc)
    top = Reader(name, doc)
    config = section(top, "input_config")
    stimulus = None if config is None else section(config, "perf_analyzer.stimulus")
    if config is None or stimulus is None:
        raise top.fail("input_config.perf_analyzer.stimulus", NO_LOAD)
    load = load_level(stimulus, None)
    metrics = MetricSet()
    notes = [*load.notes, *add_metrics(objects, metrics)]
    level = build_level(
        name,
        load,
        metrics,
        notes,
        completed=avg(objects, "request_count", whole=True),
    )
    model, run_notes = model_name(config, "model_names")
    engine, engine_notes = _engine(config)
    stated = DeploymentOverrides(model=model, engine=engine)
    hint = " (with service_kind openai GenAI-Perf talks to any OpenAI-compatible server)"
    deployment, conflicts = resolve_deployment(name, stated, overrides, hint=hint)
    return [
        RunFile(
            source=Source.GENAI_PERF,
            provenance=provenance,
            deployment=deployment,
            workload=sequence_workload(objects),
            environment=Environment(client=CLIENT),
            levels=(level,),
            notes=join_notes(run_notes + engine_notes + conflicts, "\n"),
            origin_file=name,
        )
    ]


def _engine(config: Reader) -> tuple[str | None, list[str]]:
    """The engine only when Triton served it: the backend setting is ignored for openai."""
    endpoint = section(config, "endpoint")
    obj: Mapping[str, object] = {} if endpoint is None else endpoint.obj
    kind, backend = obj.get("service_kind"), obj.get("backend")
    if kind == "triton" and isinstance(backend, str) and backend.strip():
        return normalise_engine(backend), [f"engine from Triton backend {backend!r}"]
    if isinstance(backend, str) and backend.strip():
        return None, [f"endpoint.backend {backend!r} ignored: service_kind is {kind!r}"]
    return None, []
