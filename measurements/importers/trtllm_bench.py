"""TensorRT-LLM `trtllm-bench throughput|latency --report_json` statistics -> one RunFile.

One report is one load level. Percentiles are nearest-rank as trtllm-bench computed them and
are kept as reported. A report without a concurrency setting is an offline (max-throughput) run:
an OFFLINE level of num_requests requests, its average in flight in the notes."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError

from errors import InputError
from measurements.gpu_info import gpu_sku
from measurements.importers.common import (
    DeploymentOverrides,
    MetricSet,
    Reader,
    content_key,
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

FORMAT_ID = "trtllm-bench"
DESCRIPTION = (
    "trtllm-bench --report_json statistics: an object with engine, world_info, request_info "
    "and performance objects"
)
CLIENT = "trtllm-bench"
ENGINE = "tensorrt-llm"

_SECTIONS = ("engine", "world_info", "request_info", "performance")
_RATES = (
    ("system_output_throughput_tok_s", "output_tok_s"),
    ("system_total_throughput_tok_s", "total_tok_s"),
    ("request_throughput_req_s", "request_s"),
)
# PercentileStats keys as the report writes them -> canonical statistics.
_STATS = {
    "average": "mean",
    "p50": "p50",
    "p90": "p90",
    "p95": "p95",
    "p99": "p99",
    "minimum": "min",
    "maximum": "max",
}
_NOTED = (
    ("performance", "output_throughput_per_user_tok_s", "tok/s per user, TTFT included"),
    ("performance", "output_throughput_per_gpu_tok_s", "tok/s per GPU"),
    ("world_info", "issue_rate", "req/s, the rate requests were queued"),
    ("world_info", "max_batch_size", ""),
    ("world_info", "max_num_tokens", ""),
    ("world_info", "kv_cache_percentage", "fraction of free GPU memory"),
)
# Concurrency settings a report may carry (current trtllm-bench writes none of them).
_CONCURRENCY_KEYS = ("concurrency", "max_concurrency")
_NEAREST_RANK = "percentiles are trtllm-bench's nearest-rank (no interpolation), kept as reported"
_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}


def _is_report(doc: object) -> bool:
    return isinstance(doc, dict) and all(isinstance(doc.get(key), dict) for key in _SECTIONS)


def sniff(name: str, doc: object) -> str | None:
    """Describe the report (streaming or not) when `doc` is a --report_json file, else None."""
    if not isinstance(doc, dict) or not _is_report(doc):
        return None
    streaming = "with streaming metrics" if "streaming_metrics" in doc else "no streaming metrics"
    return f"trtllm-bench --report_json ({streaming})"


def parse(
    name: str,
    doc: object,
    data: bytes,
    overrides: DeploymentOverrides,
    provenance: Provenance,
) -> list[RunFile]:
    """The report as one RunFile with one load level."""
    if not isinstance(doc, dict) or not _is_report(doc):
        raise InputError(f"not a {DESCRIPTION}", file=name)
    engine = Reader(name, doc["engine"], "engine.")
    world = Reader(name, doc["world_info"], "world_info.")
    request = Reader(name, doc["request_info"], "request_info.")
    notes: list[str] = []
    deployment, conflicts = resolve_deployment(
        name, _stated(name, doc, engine, world, notes), overrides
    )
    level = _level(name, doc, world, request)
    return [
        RunFile(
            source=Source.TRTLLM_BENCH,
            provenance=provenance,
            deployment=deployment,
            workload=_workload(name, doc, request),
            environment=_environment(name, doc, engine),
            levels=(level,),
            notes=join_notes(conflicts + notes, "\n"),
            origin_file=name,
            source_sha256=content_key(data),
        )
    ]


def _stated(
    name: str, doc: Mapping[str, object], engine: Reader, world: Reader, notes: list[str]
) -> DeploymentOverrides:
    machine = _machine_name(name, doc)
    gpu = None
    if machine is not None:
        sku = gpu_sku(machine)
        gpu = sku if sku != machine else None  # only spellings of a GPU catalog GPU map
        if gpu is None:
            notes.append(f"machine.name {machine!r} is not a GPU capplan plans for: gpu left unset")
    try:
        return DeploymentOverrides(
            engine=ENGINE,
            engine_version=engine.text("version"),
            model=engine.text("model"),
            precision=_precision(engine),
            gpu=gpu,
            gpu_count=_positive(world, "world_size"),
            tp=_positive(world, "tp_size"),
            pp=_positive(world, "pp_size"),
        )
    except ValidationError as exc:
        raise input_error_from_validation(exc, name) from exc


def _positive(reader: Reader, key: str) -> int | None:
    value = reader.count(key)
    if value is not None and value < 1:
        raise reader.fail(key, "must be at least 1", value)
    return value


def _precision(engine: Reader) -> str | None:
    """The quantization algorithm (FP8, ...) when there is one, else the weights' dtype."""
    quantization = engine.text("quantization")
    if quantization and quantization.strip().lower() not in ("none", "no_quant"):
        return quantization.strip().lower()
    dtype = engine.text("dtype")
    return None if dtype is None else _DTYPES.get(dtype.lower(), dtype.lower())


def _machine_name(name: str, doc: Mapping[str, object]) -> str | None:
    machine = doc.get("machine")
    if machine is None:
        return None  # trtllm-bench writes null when torch sees no GPU
    if not isinstance(machine, dict):
        raise InputError("expected an object or null", file=name, field="machine", value=machine)
    return Reader(name, machine, "machine.").text("name")


def _environment(name: str, doc: Mapping[str, object], engine: Reader) -> Environment:
    return Environment(
        gpu_name=_machine_name(name, doc), client=CLIENT, client_version=engine.text("version")
    )


def _workload(name: str, doc: Mapping[str, object], request: Reader) -> Workload:
    isl = request.number("avg_input_length")
    osl = request.number("avg_output_length")
    dataset = doc.get("dataset")
    stats = Reader(name, dataset, "dataset.") if isinstance(dataset, dict) else None
    return Workload(
        isl=round(isl) if isl else None,
        osl=round(osl) if osl else None,
        isl_distribution=_fixed(stats, "isl_stats"),
        osl_distribution=_fixed(stats, "osl_stats"),
    )


def _fixed(stats: Reader | None, key: str) -> str | None:
    """'fixed' when the dataset's lengths have minimum == maximum; else unknown (None)."""
    lengths = None if stats is None else stats.obj.get(key)
    if not isinstance(lengths, dict) or stats is None:
        return None
    reader = Reader(stats.file, lengths, stats.field(key) + ".")
    low, high = reader.number("minimum"), reader.number("maximum")
    return "fixed" if low is not None and low == high else None


def _level(name: str, doc: Mapping[str, object], world: Reader, request: Reader) -> Level:
    performance = Reader(name, _section(name, doc, "performance"), "performance.")
    metrics = MetricSet()
    for key, canonical in _RATES:
        value = performance.number(key)
        if value is not None:
            metrics.add(canonical, value, source=(performance.field(key), value))
    _percentiles(performance, "request_latency_percentiles_ms", "e2e", metrics)
    notes = _streaming(name, doc, metrics)
    load_kind, load_value, stated, load_notes = _load(world, request)
    total_ms = performance.number("total_latency_ms", positive=True)
    sent = request.count("num_requests")
    notes = [*load_notes, _NEAREST_RANK, *notes, *_noted(name, doc), *metrics.notes]
    try:
        return Level(
            load_kind=load_kind,
            load_value=load_value,
            load_stated=stated,
            duration_s=None if total_ms is None else total_ms / 1000,
            requests_sent=sent,
            completed=sent,  # trtllm-bench reports every request it tracked; failures not counted
            metrics=metrics.metrics(),
            notes=join_notes(notes),
        )
    except ValidationError as exc:
        raise input_error_from_validation(exc, name) from exc


def _section(name: str, doc: Mapping[str, object], key: str) -> Mapping[str, object]:
    value = doc.get(key)
    if not isinstance(value, dict):
        raise InputError("expected an object", file=name, field=key, value=value)
    return value


def _percentiles(reader: Reader, key: str, metric: str, metrics: MetricSet) -> None:
    """Add `<stat>_<metric>_ms` for each statistic in the PercentileStats object at `key`."""
    value = reader.obj.get(key)
    if value is None:
        return
    if not isinstance(value, dict):
        raise reader.fail(key, "expected an object of percentiles", value)
    stats = Reader(reader.file, value, reader.field(key) + ".")
    for stat_key, stat in _STATS.items():
        number = stats.number(stat_key)
        if number is not None:
            source = f"{reader.field(key)}.{stat_key}"
            metrics.add(f"{stat}_{metric}_ms", number, source=(source, number))


def _streaming(name: str, doc: Mapping[str, object], metrics: MetricSet) -> list[str]:
    if doc.get("streaming_metrics") is None:
        return ["no streaming_metrics (run without --streaming): no TTFT or TPOT"]
    streaming = Reader(name, _section(name, doc, "streaming_metrics"), "streaming_metrics.")
    _percentiles(streaming, "ttft_percentiles", "ttft", metrics)
    _percentiles(streaming, "tpot_percentiles", "tpot", metrics)
    # Mean over requests of generated tokens / generation time: decode speed, TTFT excluded.
    speed = streaming.number("token_output_speed_tok_s")
    if speed is not None:
        source = streaming.field("token_output_speed_tok_s")
        metrics.add("stream_tok_s", speed, source=(source, speed))
    return []


def _load(world: Reader, request: Reader) -> tuple[LoadKind, float, bool, list[str]]:
    """A stated concurrency setting when the file has one; else an offline (max-throughput) run
    of num_requests requests, its average in flight in the notes (never a concurrency)."""
    for key in _CONCURRENCY_KEYS:
        setting = world.count(key)
        if setting is not None:
            if setting < 1:
                raise world.fail(key, "must be at least 1", setting)
            return LoadKind.CONCURRENCY, float(setting), True, []
    average = request.number("avg_num_concurrent_requests", required=True, positive=True)
    if average is None:  # unreachable: required=True raises; keeps the type narrow
        raise request.fail("avg_num_concurrent_requests", "is missing: expected a number")
    sent = request.count("num_requests")
    note = (
        "offline (max-throughput) run: trtllm-bench records no concurrency setting; "
        f"request_info.avg_num_concurrent_requests={average:g} is an average in flight, not a "
        "concurrency: the level is a throughput ceiling, kept out of curve fits"
    )
    if sent is None or sent < 1:
        return LoadKind.OFFLINE, average, False, [f"{note}; num_requests not stated"]
    return LoadKind.OFFLINE, float(sent), True, [note]


def _noted(name: str, doc: Mapping[str, object]) -> list[str]:
    """Reported values with no canonical name, kept in the notes as the file wrote them."""
    kept: list[str] = []
    for section, key, meaning in _NOTED:
        value = _section(name, doc, section).get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            kept.append(f"{section}.{key}={value:g}" + (f" ({meaning})" if meaning else ""))
        elif isinstance(value, str):
            kept.append(f"{section}.{key}={value}")
    policy = _section(name, doc, "world_info").get("scheduling_policy")
    if isinstance(policy, str):
        kept.append(f"world_info.scheduling_policy={policy}")
    decoding = doc.get("decoding_stats")
    if isinstance(decoding, dict) and isinstance(decoding.get("mode"), str):
        kept.append(f"speculative decoding ({decoding['mode']}): acceptance stats not imported")
    return ["not mapped (no canonical name): " + ", ".join(kept)] if kept else []
