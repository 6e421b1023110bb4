"""guidellm benchmarks.json / .yaml (report v2 of 0.7+, v1 of 0.5-0.6, v0.4, <= v0.3) -> RunFile.

One file is one run; each benchmark (one strategy) is one load level. Numbers come from the
`successful` distributions: `inter_token_latency_ms` is canonical tpot, latency is in seconds.
Verified on real guidellm 0.8.1 reports (tests/fixtures/guidellm/real-0.8.1/) and 0.8.0.dev18."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import NamedTuple

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
from measurements.importers.versions import version_notes
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

FORMAT_ID = "guidellm"
DESCRIPTION = (
    "guidellm benchmarks.json or .yaml: an object with a `benchmarks` list whose entries have "
    'type_ "generative_benchmark"'
)
CLIENT = "guidellm"
_YAML_SUFFIXES = (".yaml", ".yml")

# (guidellm metric, canonical metric, factor to ms). time_per_output_token_ms is added only for
# 0.4+ layouts, where it is (last token - start) / N; in <= 0.3 it was (last - first) / N.
LATENCIES = (
    ("time_to_first_token_ms", "ttft", 1.0),
    ("inter_token_latency_ms", "tpot", 1.0),
    ("request_latency", "e2e", 1000.0),
)
E2E_PER_TOKEN = ("time_per_output_token_ms", "e2e_per_token", 1.0)
_STATS = (("mean", "mean"), ("median", "p50"), ("std_dev", "std"), ("min", "min"), ("max", "max"))
_PERCENTILES = ("p90", "p95", "p99")
RATES = (
    ("requests_per_second", "request_s"),
    ("output_tokens_per_second", "output_tok_s"),
    ("tokens_per_second", "total_tok_s"),
    ("prompt_tokens_per_second", "input_tok_s"),
)


@dataclass(frozen=True, slots=True)
class _Benchmark:
    level: Level
    model: str | None
    started_at: datetime | None
    isl_mean: float | None
    osl_mean: float | None


class _Load(NamedTuple):
    kind: LoadKind
    value: float
    burst: bool
    notes: list[str]


def _mapping(doc: object) -> Mapping[str, object] | None:
    return doc if isinstance(doc, Mapping) else None


def _load_yaml(name: str, doc: object) -> object:
    """decode() hands YAML over as text; only files named *.yaml / *.yml are tried."""
    if not isinstance(doc, str) or not name.lower().endswith(_YAML_SUFFIXES):
        return doc
    try:
        return load_yaml(doc, name)
    except InputError as exc:
        if exc.message.startswith("not valid YAML"):
            return None  # not YAML at all: another importer may know it
        raise  # YAML that is refused as bounded parsing says (an alias bomb, ...)


def _benchmarks(doc: object) -> list[Mapping[str, object]] | None:
    top = _mapping(doc)
    items = top.get("benchmarks") if top is not None else None
    if not isinstance(items, list) or not items:
        return None
    if not all(isinstance(b, Mapping) and b.get("type_") == "generative_benchmark" for b in items):
        return None
    return list(items)


def _version(top: Mapping[str, object]) -> str:
    meta = _mapping(top.get("metadata"))
    if meta is not None and meta.get("version") == 2:
        return "report v2 (0.7+)"
    if meta is not None:
        return f"report v{meta.get('version')} (0.5-0.6)"
    return "v0.4 (args, no metadata)" if "args" in top else "<= v0.3 (benchmarks only)"


def sniff(name: str, doc: object) -> str | None:
    """Describe the guidellm layout when `doc` is a benchmarks report, else None."""
    doc = _load_yaml(name, doc)
    benchmarks = _benchmarks(doc)
    top = _mapping(doc)
    if benchmarks is None or top is None:
        return None
    kind = "YAML" if name.lower().endswith(_YAML_SUFFIXES) else "JSON"
    return f"guidellm {_version(top)}, {kind}, {len(benchmarks)} benchmarks"


def parse(
    name: str,
    doc: object,
    data: bytes,
    overrides: DeploymentOverrides,
    provenance: Provenance,
) -> list[RunFile]:
    """One guidellm report as one RunFile with one level per benchmark."""
    if isinstance(doc, str) and name.lower().endswith(_YAML_SUFFIXES):
        doc = load_yaml(doc, name)
    benchmarks = _benchmarks(doc)
    top = _mapping(doc)
    if benchmarks is None or top is None:
        raise InputError(f"not a {DESCRIPTION}", file=name)
    parsed = [
        parse_benchmark(Reader(name, b, f"benchmarks[{i}].")) for i, b in enumerate(benchmarks)
    ]
    return [build_run(name, data, top, parsed, overrides=overrides, provenance=provenance)]


def build_run(
    name: str,
    data: bytes,
    top: Mapping[str, object],
    parsed: Sequence[_Benchmark],
    *,
    overrides: DeploymentOverrides,
    provenance: Provenance,
) -> RunFile:
    """The run of a guidellm report from its parsed benchmarks (shared with the CSV importer)."""
    models = {b.model for b in parsed if b.model}
    notes = [f"benchmarks name several models: {sorted(models)}"] if len(models) > 1 else []
    model = next((b.model for b in parsed if b.model), None)
    stated = DeploymentOverrides(model=model)
    hint = " (guidellm talks to any OpenAI-compatible server)"
    deployment, conflicts = resolve_deployment(name, stated, overrides, hint=hint)
    meta = _mapping(top.get("metadata"))
    version = meta.get("guidellm_version") if meta is not None else None
    version = version if isinstance(version, str) else None
    notes = version_notes(CLIENT, version) + notes
    return RunFile(
        source=Source.GUIDELLM,
        provenance=provenance,
        deployment=deployment,
        workload=Workload(
            isl=_mean_of([b.isl_mean for b in parsed]), osl=_mean_of([b.osl_mean for b in parsed])
        ),
        environment=Environment(client=CLIENT, client_version=version),
        levels=tuple(b.level for b in parsed),
        started_at=min((b.started_at for b in parsed if b.started_at), default=None),
        notes=join_notes(notes + conflicts, "\n"),
        origin_file=name,
        source_sha256=content_key(data),
    )


def _mean_of(values: Sequence[float | None]) -> int | None:
    known = [v for v in values if v is not None]
    if not known:
        return None
    return round(sum(known) / len(known)) or None


def parse_benchmark(reader: Reader) -> _Benchmark:
    """One benchmark entry as a level (shared with the guidellm CSV importer)."""
    # 0.4+ benchmarks carry `config`; <= 0.3 ones carry `args` (and an older tpot definition).
    modern = _mapping(reader.obj.get("config")) is not None
    load = _load(reader)
    metrics_obj = _sub(reader, "metrics", required=True)
    _check_whole(metrics_obj)
    metrics = MetricSet()
    notes = list(load.notes)
    notes += _latencies(metrics_obj, metrics, modern)
    _rates(metrics_obj, metrics)
    totals = _totals(reader, metrics_obj)
    prompt = _successful(metrics_obj, "prompt_token_count")
    output = _successful(metrics_obj, "output_token_count")
    notes += metrics.notes
    try:
        level = Level(
            load_kind=load.kind,
            load_value=load.value,
            burst=load.burst,
            duration_s=reader.number("duration", positive=True),
            requests_sent=totals.count("total"),
            completed=totals.count("successful"),
            failed=totals.count("errored"),
            incomplete=totals.count("incomplete"),
            input_tokens_total=_total(prompt),
            output_tokens_total=_total(output),
            metrics=metrics.metrics(),
            notes=join_notes(notes),
        )
    except ValidationError as exc:
        raise input_error_from_validation(exc, reader.file) from exc
    return _Benchmark(
        level=level,
        model=_model(reader),
        started_at=_started(reader),
        isl_mean=prompt.number("mean") if prompt else None,
        osl_mean=output.number("mean") if output else None,
    )


# Every guidellm release writes these per benchmark: without one, the report was cut short (a
# YAML truncated at a line end still parses) or edited.
WRITTEN_ALWAYS = (
    *(name for name, _, _ in LATENCIES),
    "requests_per_second",
    "output_tokens_per_second",
)


def _check_whole(metrics_obj: Reader) -> None:
    if missing := [key for key in WRITTEN_ALWAYS if key not in metrics_obj.obj]:
        message = f"is missing ({', '.join(missing)} all are): a truncated or edited report?"
        raise metrics_obj.fail(missing[0], message, None)


def _sub(reader: Reader, key: str, *, required: bool = False) -> Reader:
    value = reader.obj.get(key)
    if value is None and not required:
        return Reader(reader.file, {}, reader.field(key) + ".")
    if not isinstance(value, Mapping):
        message = "is missing: expected an object" if value is None else "expected an object"
        raise reader.fail(key, message, value)
    return Reader(reader.file, value, reader.field(key) + ".")


def _successful(metrics_obj: Reader, key: str) -> Reader | None:
    if metrics_obj.obj.get(key) is None:
        return None
    dist = _sub(metrics_obj, key)
    if dist.obj.get("successful") is None:
        return None
    return _sub(dist, "successful")


def _total(dist: Reader | None) -> int | None:
    value = dist.number("total_sum") if dist else None
    return round(value) if value is not None else None


def _totals(reader: Reader, metrics_obj: Reader) -> Reader:
    """Request counts: metrics.request_totals (0.4+) or the benchmark's request_totals (<= 0.3)."""
    if metrics_obj.obj.get("request_totals") is not None:
        return _sub(metrics_obj, "request_totals")
    return _sub(reader, "request_totals")


def _latencies(metrics_obj: Reader, metrics: MetricSet, modern: bool) -> list[str]:
    table = LATENCIES + ((E2E_PER_TOKEN,) if modern else ())
    notes: list[str] = []
    for key, canonical, factor in table:
        dist = _successful(metrics_obj, key)
        if dist is None:
            continue
        if dist.count("count") == 0:
            # guidellm writes 0 for every statistic of an empty distribution: unknown, not 0 ms.
            notes.append(f"{key}: no successful request, statistics (0) not imported")
            continue
        for stat, ours in _STATS:
            name = f"{ours}_{canonical}_ms"
            _add(metrics, dist, stat, name=name, factor=factor, where=f"{key}.successful")
        pcts = _sub(dist, "percentiles")
        for pct in _PERCENTILES:
            where = f"{key}.successful.percentiles"
            _add(metrics, pcts, pct, name=f"{pct}_{canonical}_ms", factor=factor, where=where)
    if not modern and _successful(metrics_obj, "time_per_output_token_ms") is not None:
        notes.append(
            "time_per_output_token_ms not mapped: in guidellm <= 0.3 it is (last - first token) / N"
        )
    return notes


def _add(
    metrics: MetricSet, dist: Reader, stat: str, *, name: str, factor: float, where: str
) -> None:
    raw = dist.number(stat)
    if raw is None:
        return
    metrics.add(name, raw * factor, source=(f"metrics.{where}.{stat}", raw))


def _rates(metrics_obj: Reader, metrics: MetricSet) -> None:
    # Benchmark-level rates are time-series distributions; guidellm reports their mean.
    for key, canonical in RATES:
        dist = _successful(metrics_obj, key)
        value = dist.number("mean") if dist else None
        if value is not None:
            metrics.add(canonical, value, source=(f"metrics.{key}.successful.mean", value))


def _strategy(reader: Reader) -> Reader:
    config = _sub(reader, "config")
    if config.obj.get("strategy") is not None:
        return _sub(config, "strategy")
    return _sub(_sub(reader, "args", required=True), "strategy", required=True)


def _load(reader: Reader) -> _Load:
    """guidellm strategy -> capplan load: synchronous, concurrent, constant, poisson, throughput."""
    strategy = _strategy(reader)
    kind = strategy.text("type_")
    if kind == "synchronous":
        return _Load(LoadKind.CONCURRENCY, 1.0, False, [])
    if kind == "concurrent":
        streams = _at_least_one(strategy, "streams")
        return _Load(LoadKind.CONCURRENCY, float(streams), False, [])
    if kind in ("constant", "poisson"):
        rate = strategy.number("rate", required=True, positive=True) or 0.0
        cap = strategy.count("max_concurrency")
        shape = "poisson arrivals" if kind == "poisson" else "constant arrivals"
        limit = "" if cap is None else f", at most {cap} in flight (max_concurrency)"
        return _Load(LoadKind.RATE, rate, False, [f"open loop at {rate:g} req/s, {shape}{limit}"])
    if kind == "throughput":
        return _throughput(reader, strategy)
    raise strategy.fail(
        "type_",
        "unknown strategy: expected synchronous, concurrent, constant, poisson or throughput",
        kind,
    )


def _at_least_one(reader: Reader, key: str) -> int:
    value = reader.count(key, required=True) or 0
    if value < 1:
        raise reader.fail(key, "must be at least 1", value)
    return value


def _throughput(reader: Reader, strategy: Reader) -> _Load:
    """All requests at once, up to max_concurrency in flight."""
    cap = strategy.count("max_concurrency")
    sent = _totals(reader, _sub(reader, "metrics")).count("total")
    if cap is not None and cap >= 1:
        # A cap at or above the requests sent never bound: the level was a burst that drained.
        burst = sent is not None and cap >= sent
        note = (
            f"throughput strategy: every request sent at once, at most {cap} in flight; "
            f"recorded as concurrency = max_concurrency ({cap})"
            + (
                f"; the cap is >= the {sent} requests sent: a burst, kept out of fits"
                if burst
                else ""
            )
        )
        return _Load(LoadKind.CONCURRENCY, float(cap), burst, [note])
    if not sent:
        raise strategy.fail("max_concurrency", "is missing and so is request_totals.total")
    note = (
        f"throughput strategy without max_concurrency: all {sent} requests sent at once "
        "(a burst, recorded as concurrency = requests sent and kept out of curve fits)"
    )
    return _Load(LoadKind.CONCURRENCY, float(sent), True, [note])


def _model(reader: Reader) -> str | None:
    backend = _sub(_sub(reader, "config"), "backend")
    model = backend.text("model")
    if model is None:
        model = _sub(reader, "worker").text("backend_model")
    return model


def _started(reader: Reader) -> datetime | None:
    epoch_s = reader.number("start_time")
    if epoch_s is None:
        return None
    try:
        return datetime.fromtimestamp(epoch_s, tz=UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise reader.fail("start_time", "not a Unix time in seconds", epoch_s) from exc
