"""AIPerf profile_export_aiperf.csv and GenAI-Perf profile_export_genai_perf.csv -> RunFile.

Both write two tables: per-request statistics (`Metric,avg,min,max,p..`, one row per metric,
the unit in brackets after its name) and, after a blank line, run totals (`Metric,Value`).
Each row is rebuilt into the `{unit, avg, pNN}` object the JSON export holds and handed to the
AIPerf importer's helpers, so metric names and units are defined once. The CSV states neither
the load nor the deployment: the user's --concurrency / --request-rate, --engine and --model fill
them in; without a load the level is kept at the achieved request rate, marked not stated."""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice

from pydantic import ValidationError

from errors import InputError
from measurements.importers import csv_stream
from measurements.importers.aiperf import RATES, add_metrics, avg, sequence_workload, unit_of
from measurements.importers.common import (
    DeploymentOverrides,
    MetricSet,
    Reader,
    join_notes,
    resolve_deployment,
    user_load,
)
from measurements.importers.limits import MAX_ROWS, over
from measurements.run_file import (
    Environment,
    Level,
    LoadKind,
    Provenance,
    RunFile,
    Source,
    input_error_from_validation,
)

FORMAT_ID = "perf-csv"
DESCRIPTION = (
    "AIPerf profile_export_aiperf.csv or GenAI-Perf profile_export_genai_perf.csv: a table "
    "Metric,avg,min,max,p99,... with rows like 'Time to First Token (ms)', a blank line, then "
    "Metric,Value"
)
_STAT = re.compile(r"avg|min|max|sum|std|p\d{1,2}")
_LABEL = re.compile(r"(?P<name>.*?)\s*\((?P<unit>[^()]*)\)")
# Row names whose snake_case differs from the JSON tag.
_TAG_ALIASES = {
    "minimum_request_timestamp": "min_request_timestamp",
    "maximum_response_timestamp": "max_response_timestamp",
    "total_input_sequence_length": "total_isl",
    "total_output_sequence_length": "total_osl",
}
_RATE_SPELLINGS = ("per sec",)  # GenAI-Perf's unit for its throughputs
_AIPERF = "AIPerf profile_export_aiperf.csv"
_GENAI_PERF = "GenAI-Perf profile_export_genai_perf.csv"
_EITHER = "AIPerf or GenAI-Perf CSV export"


class SourcedReader(Reader):
    """A Reader over a rebuilt metric object whose field names point back into the file."""

    def __init__(
        self, file: str, obj: Mapping[str, object], where: str, paths: Mapping[str, str]
    ) -> None:
        super().__init__(file, obj, where)
        self.paths = paths

    def field(self, key: str) -> str:
        """The cell (or key path) in the file that holds `key`."""
        return f"{self.where}{self.paths.get(key, key)}"


@dataclass(slots=True)
class _Table:
    header: list[str]
    rows: list[tuple[int, list[str]]] = field(default_factory=list)

    @property
    def kind(self) -> str:
        """stats (Metric + statistics), values (Metric,Value) or other (GPU telemetry)."""
        first, rest = self.header[0], self.header[1:]
        if first != "Metric" or not rest:
            return "other"
        if rest == ["Value"]:
            return "values"
        return "stats" if all(_STAT.fullmatch(c) for c in rest) else "other"


def _tables(doc: object, head: int = MAX_ROWS + 1) -> list[_Table] | None:
    """The blank-line-separated tables of a CSV text's first `head` rows, read lazily, or None
    when it is not readable CSV."""
    if not isinstance(doc, str):
        return None
    tables: list[_Table] = []
    current: _Table | None = None
    try:
        for line, row in islice(csv_stream.rows(doc), head):
            cells = [c.strip() for c in row]
            if not any(cells):
                current = None
            elif current is None:
                current = _Table(cells)
                tables.append(current)
            else:
                current.rows.append((line, cells))
    except csv.Error:
        return None
    return tables or None


def _is_export(tables: Sequence[_Table]) -> bool:
    first = tables[0]
    return first.kind in ("stats", "values") and bool(first.rows)


def _tool(tables: Sequence[_Table]) -> str:
    """Which tool wrote the CSV, from the columns and rows only one of them writes."""
    stats = next((t for t in tables if t.kind == "stats"), None)
    names = {row[0].lower() for t in tables for _, row in t.rows}
    if any(name.startswith("inter chunk latency") for name in names):
        return _AIPERF
    if stats is None:
        return _EITHER
    if "std" in stats.header or "p1" in stats.header:
        return _AIPERF
    return _GENAI_PERF


def sniff(name: str, doc: object) -> str | None:
    """Describe the export when `doc` is an AIPerf / GenAI-Perf CSV, else None."""
    first = _tables(doc, head=2)  # another CSV (a curve of a million rows) is not read whole
    tables = _tables(doc) if first is not None and _is_export(first) else None
    if tables is None or not _is_export(tables):
        return None
    stats, values = (sum(len(t.rows) for t in tables if t.kind == k) for k in ("stats", "values"))
    extra = ", a GPU telemetry table" if any(t.kind == "other" for t in tables) else ""
    return f"{_tool(tables)} ({stats} per-request metrics, {values} run totals{extra})"


def parse(
    name: str,
    doc: object,
    data: bytes,
    overrides: DeploymentOverrides,
    provenance: Provenance,
) -> list[RunFile]:
    """One CSV export as one RunFile with one load level."""
    tables = _tables(doc)
    if tables is None or not _is_export(tables):
        raise InputError(f"not an {DESCRIPTION}", file=name)
    over(sum(len(t.rows) + 1 for t in tables), MAX_ROWS, "rows", file=name)
    tool = _tool(tables)
    objects = _objects(name, tables)
    level = _level(name, objects, overrides, tool)
    hint = " (the CSV export names neither; AIPerf talks to any OpenAI-compatible server)"
    deployment, conflicts = resolve_deployment(name, DeploymentOverrides(), overrides, hint=hint)
    notes = [] if tool != _EITHER else ["AIPerf or GenAI-Perf (cannot tell): recorded as AIPerf"]
    return [
        RunFile(
            source=Source.GENAI_PERF if tool == _GENAI_PERF else Source.AIPERF,
            provenance=provenance,
            deployment=deployment,
            workload=sequence_workload(objects),
            environment=Environment(
                gpu_name=_gpu_name(tables),
                client="genai-perf" if tool == _GENAI_PERF else "aiperf",
            ),
            levels=(level,),
            started_at=_started_at(objects),
            notes=join_notes(notes + conflicts, "\n"),
            origin_file=name,
        )
    ]


def _objects(name: str, tables: Sequence[_Table]) -> dict[str, Reader]:
    """Every metric row as the JSON export's `{unit, avg, pNN}` object, by tag."""
    objects: dict[str, Reader] = {}
    for table in tables:
        if table.kind == "other":
            continue
        columns = ["avg"] if table.kind == "values" else table.header[1:]
        for line, row in table.rows:
            tag, reader = _row_object(name, line, row, columns, table.header)
            if tag in objects:
                raise InputError(
                    "the metric appears twice", file=name, field=f"row {line}", value=row[0]
                )
            objects[tag] = reader
    return objects


def _row_object(
    name: str, line: int, row: Sequence[str], columns: Sequence[str], header: Sequence[str]
) -> tuple[str, Reader]:
    label = row[0]
    if len(row) > len(header):
        message = f"has {len(row)} values, the table header has {len(header)}"
        raise InputError(message, file=name, field=f"row {line} ({label})")
    tag, unit = _tag_and_unit(label)
    obj: dict[str, object] = {"unit": _json_unit(tag, unit)}
    paths = {"unit": "unit"}
    for index, column in enumerate(columns, start=1):
        cell = row[index] if index < len(row) else ""
        paths[column] = header[index]
        if cell:
            obj[column] = _number(name, line, label, header[index], cell)
    return tag, SourcedReader(name, obj, f"{label} / ", paths)


def _tag_and_unit(label: str) -> tuple[str, str]:
    match = _LABEL.fullmatch(label)
    text, unit = (match["name"], match["unit"].strip()) if match else (label, "")
    tag = "_".join("".join(c if c.isalnum() else " " for c in text.lower()).split())
    return _TAG_ALIASES.get(tag, tag), unit


def _json_unit(tag: str, unit: str) -> str:
    """The unit as the JSON export writes it (GenAI-Perf's CSV says "per sec" for rates)."""
    if tag in RATES and unit in _RATE_SPELLINGS:
        return RATES[tag][1][0]
    return unit


def _number(name: str, line: int, label: str, column: str, cell: str) -> float:
    try:
        return float(cell.replace(",", ""))  # GenAI-Perf writes thousands separators
    except ValueError as exc:
        raise InputError(
            "expected a number",
            file=name,
            field=f"row {line} ({label}), column {column}",
            value=cell,
        ) from exc


def _level(
    name: str, objects: Mapping[str, Reader], overrides: DeploymentOverrides, tool: str
) -> Level:
    metrics = MetricSet()
    notes = add_metrics(objects, metrics)
    failed = avg(objects, "error_request_count", whole=True)
    if failed and tool == _AIPERF:
        notes.append(f"request_latency statistics include the {failed} failed requests (AIPerf)")
    kind, value, stated, load_note = _load(name, objects, overrides)
    try:
        return Level(
            load_kind=kind,
            load_value=value,
            load_stated=stated,
            duration_s=_duration_s(objects),
            completed=avg(objects, "request_count", whole=True),
            failed=failed,
            input_tokens_total=avg(objects, "total_isl", whole=True),
            output_tokens_total=avg(objects, "total_osl", whole=True),
            metrics=metrics.metrics(),
            notes=join_notes([load_note, *notes, *metrics.notes]),
        )
    except ValidationError as exc:
        raise input_error_from_validation(exc, name) from exc


def _load(
    name: str, objects: Mapping[str, Reader], overrides: DeploymentOverrides
) -> tuple[LoadKind, float, bool, str]:
    """The user's load, else the achieved request rate marked as not stated."""
    given = user_load(overrides)
    if given is not None:
        return given.kind, given.value, True, given.note
    rate = avg(objects, "request_throughput")
    if not rate:
        raise InputError(
            "the CSV states no load and no request throughput to stand in for it; pass "
            "--concurrency or --request-rate (or fill in the upload form's load field)",
            file=name,
            field="Request Throughput",
        )
    note = (
        f"the CSV does not state its load: recorded at the achieved {rate:g} req/s, marked load "
        "not stated and kept out of curve fits; --concurrency / --request-rate (or the upload "
        "form's load field) sets it"
    )
    return LoadKind.RATE, rate, False, note


def _duration_s(objects: Mapping[str, Reader]) -> float | None:
    reader = objects.get("benchmark_duration")
    if reader is None:
        return None
    if unit_of(reader) not in ("sec", "s"):
        raise reader.fail("unit", "expected sec", unit_of(reader))
    return reader.number("avg", positive=True)


def _started_at(objects: Mapping[str, Reader]) -> datetime | None:
    first_ns = avg(objects, "min_request_timestamp")
    if first_ns is None:
        return None
    try:
        return datetime.fromtimestamp(first_ns / 1e9, UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise objects["min_request_timestamp"].fail(
            "avg", "is not a time in nanoseconds since 1970", first_ns
        ) from exc


def _gpu_name(tables: Sequence[_Table]) -> str | None:
    """The GPU of AIPerf's telemetry table when all its rows name the same one."""
    names: set[str] = set()
    for table in tables:
        if table.kind == "other" and "GPU_Name" in table.header:
            column = table.header.index("GPU_Name")
            names.update(row[column] for _, row in table.rows if column < len(row) and row[column])
    return names.pop() if len(names) == 1 else None
