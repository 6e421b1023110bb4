"""The hand-made curve CSV (columns as in measurements/demo/data/*.csv): one row per load level.

Rows sharing (source, engine, engine_version, model, precision, gpu, gpu_count, tp, isl, osl) and
the serving configuration their notes state (key=value pairs: quantisation modes, pipeline,
attention-data and expert parallel sizes, as NVIDIA's AIConfigurator sample writes them) form
one run; those pairs become the run's engine arguments. `#` lines are comments (the runs'
notes); a blank cell is unknown, never 0."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from errors import InputError
from measurements.importers import csv_stream
from measurements.importers.common import (
    DeploymentOverrides,
    MetricSet,
    content_key,
    join_notes,
    normalise_engine,
    resolve_deployment,
)
from measurements.importers.limits import MAX_LEVELS, MAX_LEVELS_PER_RUN, MAX_RUNS, over
from measurements.run_file import (
    Level,
    LoadKind,
    Origin,
    Provenance,
    RunFile,
    Source,
    Workload,
    input_error_from_validation,
)

FORMAT_ID = "curve-csv"
IDENTITY = ("source", "engine", "engine_version", "model", "precision", "gpu", "gpu_count", "tp")
GROUP_COLUMNS = (*IDENTITY, "isl", "osl")
REQUIRED = (*GROUP_COLUMNS, "load_type", "concurrency_or_rate")
OPTIONAL = (
    *("output_tok_s", "total_tok_s", "request_s", "ttft_ms", "ttft_stat", "ttft_ms_p50"),
    *("ttft_ms_p99", "tpot_ms", "tpot_stat", "tpot_ms_p99", "itl_ms", "e2e_latency_ms"),
    *("e2e_stat", "derived_output_tok_s", "notes"),
)
DESCRIPTION = (
    "capplan curve CSV: a header row with " + ", ".join(REQUIRED) + " and metric columns "
    "(output_tok_s, ttft_ms, tpot_ms, ...); lines starting with # are comments"
)
# (value column, canonical metric, stat column or the fixed statistic)
_LATENCY = (
    ("ttft_ms", "ttft", "ttft_stat"),
    ("ttft_ms_p50", "ttft", "p50"),
    ("ttft_ms_p99", "ttft", "p99"),
    ("tpot_ms", "tpot", "tpot_stat"),
    ("tpot_ms_p99", "tpot", "p99"),
    ("itl_ms", "itl", ""),
    ("e2e_latency_ms", "e2e", "e2e_stat"),
)
_STATS = {"mean": "mean", "avg": "mean", "average": "mean", "median": "p50"} | {
    s: s for s in ("p50", "p90", "p95", "p99", "std", "min", "max")
}
# A blank statistic, or one the source calls unspecified, is stored bare (`ttft_ms`): the
# planner then knows it cannot tell p50 from p99. Any other word is refused, never guessed.
_UNSTATED = ("", "unspecified", "unknown", "not stated")
# Parallel sizes among them: kept as engine arguments whenever they exceed 1 (the physics reads
# them: attention DP copies, expert parallelism in the option's name).
PARALLEL_KEYS = ("pp", "attention_dp", "moe_tp", "moe_ep", "ep", "dp", "expert_parallel_size",
                 "data_parallel_size")  # fmt: skip
# Notes keys that state the serving configuration: rows that differ in one are separate runs.
CONFIG_KEYS = (
    "gemm_quant", "moe_quant", "kv_cache_dtype", "pp", "attention_dp", "moe_tp", "moe_ep",
    "ep", "dp", "expert_parallel_size", "data_parallel_size", "enable_attention_dp",
    "max_num_seqs", "max_num_batched_tokens", "max_batch_size", "max_num_tokens",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Row:
    """One data row: its line number in the file and its cells by column."""

    file: str
    line: int
    cells: dict[str, str]

    @property
    def where(self) -> str:
        return f"row {self.line}"

    def get(self, column: str) -> str:
        return self.cells.get(column, "").strip()

    def fail(self, column: str, message: str, value: object = None) -> InputError:
        return InputError(f"row {self.line}: {message}", file=self.file, field=column, value=value)

    def number(self, column: str, *, positive: bool = False) -> float | None:
        text = self.get(column)
        if not text:
            return None
        try:
            value = float(text)
        except ValueError as exc:
            raise self.fail(column, "not a number", text) from exc
        if not math.isfinite(value):
            raise self.fail(column, "must be a finite number", text)
        if value < 0 or (positive and value == 0):
            raise self.fail(column, "must be greater than 0" if positive else "is negative", text)
        return value

    def whole(self, column: str) -> int | None:
        value = self.number(column, positive=True)
        if value is not None and not value.is_integer():
            raise self.fail(column, "expected a whole number", self.get(column))
        return None if value is None else int(value)


def sniff(name: str, doc: object) -> str | None:
    """Describe a curve CSV (a header with most of the required columns), else None."""
    if not isinstance(doc, str):
        return None
    try:  # the header alone: sniffing reads no further
        header = next(csv_stream.commented_rows(name, doc, []), (0, []))[1]
    except (csv.Error, InputError):
        return None
    columns = {cell.strip() for cell in header}
    # Half the required columns is enough to say "a curve CSV", so parse can name what is missing.
    if len(columns & set(REQUIRED)) < len(REQUIRED) // 2:
        return None
    return f"capplan curve CSV ({len(columns)} columns)"


def parse(
    name: str,
    doc: object,
    data: bytes,
    overrides: DeploymentOverrides,
    provenance: Provenance,
) -> list[RunFile]:
    """One run per group of rows sharing the deployment and workload columns."""
    text = doc if isinstance(doc, str) else ""
    comments: list[str] = []
    groups: dict[tuple[str, ...], dict[tuple[str, ...], list[_Row]]] = {}
    runs = 0
    for row in _rows(name, text, comments):
        key = tuple(row.get(c) for c in GROUP_COLUMNS)
        config = tuple(f"{k}={v}" for k, v in serving_config(row.get("notes")).items())
        base = (key[0], normalise_engine(key[1]), *key[2:])
        configs = groups.setdefault(base, {})
        if config not in configs:
            runs += 1
            over(runs, MAX_RUNS, "runs", file=name, field=f"row {row.line}")
        configs.setdefault(config, []).append(row)
    passes = [
        (_part_key(base, config, number, len(configs)), members, said, len(configs) > 1)
        for base, configs in groups.items()
        for config, rows_of_group in configs.items()
        for number, (members, said) in enumerate(_passes(rows_of_group), start=1)
    ]
    several = len(passes) > 1
    notes = join_notes(comments, "\n")
    return [
        _run(
            members,
            data,
            overrides=overrides,
            provenance=provenance,
            comments=join_notes([notes or "", *said], "\n"),
            part="|".join(key) if several else None,
            configured=split,
        )
        for key, members, said, split in passes
    ]


def _part_key(
    base: tuple[str, ...], config: tuple[str, ...], number: int, configs: int
) -> tuple[str, ...]:
    """What names one run within the file: the deployment and workload columns, then the serving
    configuration where the group holds several (a group of one keeps the key an earlier
    import gave it, so importing the file again finds its runs), then the repeat."""
    key = (*base, *config) if configs > 1 else base
    return key if number == 1 else (*key, f"repeat {number}")


def _passes(rows: Sequence[_Row]) -> list[tuple[list[_Row], list[str]]]:
    """One run's rows split into passes over its loads: a load measured again with other
    numbers starts (or joins) the next pass, a repeat (a run of its own, labelled so); a row
    whose numbers repeat an earlier row's at the same load is counted once, with a note."""
    passes: list[tuple[list[_Row], list[str]]] = []
    seen: dict[tuple[str, str], int] = {}  # rows kept at each load
    twins: dict[tuple[str, ...], _Row] = {}  # the first row of each load and numbers
    for row in rows:
        load = (row.get("load_type").lower(), _load_text(row))
        twin = twins.setdefault((*load, *_numbers(row)), row)
        if twin is not row:
            passes[0][1].append(f"row {row.line} repeats row {twin.line}'s numbers: counted once")
            continue
        earlier = seen.get(load, 0)
        if earlier == len(passes):
            over(earlier + 1, MAX_RUNS, "runs", file=row.file, field=row.where)
            passes.append(([], []))
        passes[earlier][0].append(row)
        seen[load] = earlier + 1
        levels = len(passes[earlier][0])
        over(levels, MAX_LEVELS_PER_RUN, "load levels in one run", file=row.file, field=row.where)
    return passes


_METRIC_COLUMNS = tuple(c for c in OPTIONAL if c != "notes")


def _load_text(row: _Row) -> str:
    """The load as a number's text ('4' and '4.0' are one load); as written when not a number
    (the level's own check names it)."""
    text = row.get("concurrency_or_rate")
    try:
        return repr(float(text))
    except ValueError:
        return text


def _numbers(row: _Row) -> tuple[str, ...]:
    return tuple(row.get(c) for c in _METRIC_COLUMNS)


def _rows(name: str, text: str, comments: list[str]) -> Iterator[_Row]:
    """The data rows, one at a time (a file is never held as a list of rows); refused at the
    first row past MAX_LEVELS (each row is one load level)."""
    reader = csv_stream.commented_rows(name, text, comments)
    try:
        header = [cell.strip() for cell in next(reader, (0, []))[1]]
        _check_header(name, header)
        count = 0
        for count, (line, cells) in enumerate(reader, start=1):
            over(count, MAX_LEVELS, "data rows (one load level each)", file=name)
            if len(cells) != len(header):
                message = f"row {line}: has {len(cells)} values, the header has {len(header)}"
                raise InputError(message, file=name)
            yield _Row(name, line, dict(zip(header, cells, strict=True)))
    except csv.Error as exc:
        raise InputError(f"not a readable CSV: {exc}", file=name) from exc
    if not count:
        raise InputError("the CSV has a header but no data rows", file=name)


def _check_header(name: str, header: Sequence[str]) -> None:
    for column in REQUIRED:
        if column not in header:
            raise InputError("the required column is missing", file=name, field=column)
    unknown = [column for column in header if column not in REQUIRED + OPTIONAL]
    if unknown:
        allowed = ", ".join(REQUIRED + OPTIONAL)
        raise InputError(f"unknown column (allowed: {allowed})", file=name, field=unknown[0])
    repeated = sorted({column for column in header if header.count(column) > 1})
    if repeated:
        raise InputError("the column appears more than once", file=name, field=repeated[0])


def _run(
    rows: Sequence[_Row],
    data: bytes,
    *,
    overrides: DeploymentOverrides,
    provenance: Provenance,
    comments: str | None,
    part: str | None,
    configured: bool = False,
) -> RunFile:
    """`configured`: its group of rows holds several serving configurations, so every pair of
    its notes names this run's; else only parallel sizes beyond 1 (what the physics reads) are
    kept, as runs stored before the split were."""
    first = rows[0]
    stated = DeploymentOverrides.model_validate(
        {column: first.get(column) or None for column in IDENTITY[1:6]}
        | {"gpu_count": first.whole("gpu_count"), "tp": first.whole("tp")}
    )
    hint = f" (row {first.line})"
    deployment, notes = resolve_deployment(first.file, stated, overrides, hint=hint)
    config = serving_config(first.get("notes"))
    if not configured:
        config = {k: v for k, v in config.items() if k in PARALLEL_KEYS and _beyond_one(v)}
    if config:
        pp = config.get("pp", "")
        deployment = deployment.model_copy(
            update={
                "engine_args": {**config, **deployment.engine_args},
                # pp=1 is no pipeline parallelism: left unstated, as the runs stored before say.
                "pp": deployment.pp or (int(pp) if pp.isdigit() and int(pp) > 1 else None),
            }
        )
    return RunFile(
        source=Source.CURVE_CSV,
        provenance=provenance,
        deployment=deployment,
        workload=Workload(isl=first.whole("isl"), osl=first.whole("osl")),
        levels=_levels(rows),
        label=_label(first.get("source"), part),
        notes=join_notes([comments or "", *notes], "\n"),
        origin_file=first.file,
        source_sha256=content_key(data, part),
    )


def _beyond_one(value: str) -> bool:
    return value.isdigit() and int(value) > 1


def _label(source: str, part: str | None) -> str | None:
    repeat = part.rsplit("|", 1)[-1] if part and "|repeat " in part else ""
    return f"{source} ({repeat})" if source and repeat else source or None


def serving_config(notes: str) -> dict[str, str]:
    """The serving-configuration pairs a row's notes state (CONFIG_KEYS, in that order)."""
    pairs = {}
    for part in notes.replace(",", ";").split(";"):
        key, sep, value = part.partition("=")
        if sep and key.strip().lower() in CONFIG_KEYS and value.strip():
            pairs[key.strip().lower()] = value.strip()
    return {key: pairs[key] for key in CONFIG_KEYS if key in pairs}


def _levels(rows: Sequence[_Row]) -> tuple[Level, ...]:
    seen: dict[tuple[LoadKind, float], int] = {}
    levels = []
    for row in rows:
        level = _level(row)
        earlier = seen.setdefault((level.load_kind, level.load_value), row.line)
        if earlier != row.line:
            message = f"the same load level as row {earlier} in the same run"
            raise row.fail("concurrency_or_rate", message, row.get("concurrency_or_rate"))
        levels.append(level)
    return tuple(levels)


def _level(row: _Row) -> Level:
    kind_text = row.get("load_type").lower()
    if kind_text not in {kind.value for kind in LoadKind}:
        raise row.fail("load_type", "expected concurrency or rate", row.get("load_type"))
    value = row.number("concurrency_or_rate", positive=True)
    if value is None:
        raise row.fail("concurrency_or_rate", "is blank: every row needs its load level")
    metrics = MetricSet()
    notes = [row.get("notes"), *_metrics(row, metrics), *metrics.notes]
    try:
        return Level(
            load_kind=LoadKind(kind_text),
            load_value=value,
            metrics=metrics.metrics(),
            notes=join_notes(notes),
        )
    except ValidationError as exc:
        raise input_error_from_validation(exc, row.file) from exc


def _metrics(row: _Row, metrics: MetricSet) -> list[str]:
    for column in ("output_tok_s", "total_tok_s", "request_s"):
        _add(row, metrics, column, column)
    for column, metric, stat in _LATENCY:
        stat_name = _stat(row, stat) if stat.endswith("_stat") else _STATS.get(stat)
        _add(row, metrics, column, f"{stat_name}_{metric}_ms" if stat_name else f"{metric}_ms")
    derived = row.number("derived_output_tok_s")
    if derived is None:
        return []
    if row.get("output_tok_s"):
        return [f"derived_output_tok_s {derived:g} not used: output_tok_s is given"]
    source = ("derived_output_tok_s", derived)
    metrics.add("output_tok_s", derived, origin=Origin.DERIVED, source=source)
    return []


def _stat(row: _Row, column: str) -> str | None:
    """The canonical statistic a *_stat column names; None when the source did not state it."""
    text = row.get(column).lower()
    if text in _STATS:
        return _STATS[text]
    if text.startswith(_UNSTATED[1:]) or not text:
        return None
    expected = ", ".join(sorted(_STATS)) + ", blank or 'unspecified'"
    raise row.fail(column, f"unknown statistic; expected one of {expected}", row.get(column))


def _add(row: _Row, metrics: MetricSet, column: str, name: str) -> None:
    value = row.number(column)
    if value is not None:
        metrics.add(name, value, source=(column, value))
