"""guidellm benchmarks.csv (3 header rows: group, "Successful <unit>", stat; one row per benchmark).

Each row is rebuilt into the shape of a benchmarks.json entry and handed to the JSON importer's
helpers, so metric names, strategies and notes match the `guidellm` importer exactly. Verified
on guidellm 0.8.1's real CSV (tests/fixtures/guidellm/real-0.8.1/): its Timings are date-time
text (`2026-11-29 18:47:24`, no zone: not read), its Benchmark / Strategy is `concurrent@4` or
`poisson@2.00` and the model is inside the Run Info / Backend JSON cell."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import islice

from errors import InputError
from measurements.importers import csv_stream, guidellm
from measurements.importers.common import DeploymentOverrides, Reader
from measurements.importers.limits import MAX_ROWS, over
from measurements.run_file import Provenance, RunFile

FORMAT_ID = "guidellm-csv"
DESCRIPTION = (
    'guidellm benchmarks.csv: three header rows (metric group, "Successful <unit>", statistic '
    "Mean / Median / Std Dev / Percentiles) and one row per benchmark"
)
_HEADER_ROWS = 3
_STATS = {"mean": "mean", "median": "median", "std_dev": "std_dev"}
# The Percentiles cell: "[min, p001, p01, p05, p10, p25, p75, p90, p95, p99, max]" (no p50).
_PERCENTILE_KEYS = ("min", "p001", "p01", "p05", "p10", "p25", "p75", "p90", "p95", "p99", "max")
_METRIC_KEYS = (
    *(key for key, _, _ in (*guidellm.LATENCIES, guidellm.E2E_PER_TOKEN)),
    *(key for key, _ in guidellm.RATES),
    "prompt_token_count",
    "output_token_count",
)
# (group, name) of the non-metric columns -> the path of that value in a benchmarks.json entry.
_PLAIN_COLUMNS: dict[tuple[str, str], tuple[str, ...]] = {
    ("benchmark", "model"): ("config", "backend", "model"),
    ("benchmark", "strategy"): ("config", "strategy", "type_"),
    ("benchmark", "rate"): ("config", "strategy", "rate"),
    ("benchmark", "streams"): ("config", "strategy", "streams"),
    ("benchmark", "max_concurrency"): ("config", "strategy", "max_concurrency"),
    ("run_info", "backend"): ("config", "backend"),
    ("timings", "start_time"): ("start_time",),
    ("timings", "duration"): ("duration",),
    **{
        ("request_counts", status): ("metrics", "request_totals", status)
        for status in ("successful", "incomplete", "errored", "total")
    },
}
_TEXT_PATHS = (("config", "backend", "model"), ("config", "strategy", "type_"))
_STRATEGY = ("config", "strategy", "type_")
# 0.8's display form of a strategy: type@value (streams for concurrent, req/s for a rate).
_STRATEGY_AT = re.compile(r"^(?P<kind>[a-z_]+)@(?P<value>[0-9.]+)$")
_VALUE_KEY = {"concurrent": "streams", "constant": "rate", "poisson": "rate"}
_VALUE_KEY |= {"throughput": "max_concurrency", "async": "rate"}


@dataclass(frozen=True, slots=True)
class _Column:
    index: int
    label: str  # "group / name / stat" as the file wrote it, for messages
    path: tuple[str, ...]  # where the value goes in the rebuilt benchmarks.json entry
    percentiles: bool


def _snake(cell: str) -> str:
    return "_".join("".join(c if c.isalnum() else " " for c in cell.lower()).split())


# 0.8 groups rates and token counts: (group, name after "Successful") -> benchmarks.json key.
_GROUPED = {
    ("server_throughput", "requests_sec"): "requests_per_second",
    ("token_throughput", "input_tokens_sec"): "prompt_tokens_per_second",
    ("token_throughput", "output_tokens_sec"): "output_tokens_per_second",
    ("token_throughput", "total_tokens_sec"): "tokens_per_second",
    ("token_metrics", "input_tokens"): "prompt_token_count",
    ("token_metrics", "output_tokens"): "output_token_count",
}


def _metric_key(group: str, name: str) -> str | None:
    grouped = _GROUPED.get((_snake(group), _snake(name).removeprefix("successful_")))
    if grouped is not None:
        return grouped
    wanted = _snake(group).removesuffix("_ms")
    return next((k for k in _METRIC_KEYS if k.removesuffix("_ms") == wanted), None)


def _filled(row: Sequence[str], width: int) -> list[str]:
    """A header row with blanks carried forward (a group may be written once for its columns)."""
    out: list[str] = []
    for i in range(width):
        cell = row[i].strip() if i < len(row) else ""
        out.append(cell or (out[-1] if out else ""))
    return out


def _columns(headers: Sequence[Sequence[str]]) -> list[_Column]:
    width = max(len(row) for row in headers)
    groups, names = _filled(headers[0], width), _filled(headers[1], width)
    stats = [headers[2][i].strip() if i < len(headers[2]) else "" for i in range(width)]
    columns: list[_Column] = []
    for i, (group, name, stat) in enumerate(zip(groups, names, stats, strict=True)):
        column = _column(i, group, name, stat)
        if column is not None:
            columns.append(column)
    return columns


def _column(index: int, group: str, name: str, stat: str) -> _Column | None:
    label = " / ".join(part for part in (group, name, stat) if part)
    plain = _PLAIN_COLUMNS.get((_snake(group), _snake(name)))
    if plain is not None:
        return _Column(index, label, plain, percentiles=False)
    key = _metric_key(group, name)
    # Only the successful requests' statistics are imported, as from benchmarks.json.
    if key is None or not name.lower().startswith("successful"):
        return None
    if stat.lower() == "percentiles":
        return _Column(index, label, ("metrics", key, "successful"), percentiles=True)
    ours = _STATS.get(_snake(stat))
    if ours is None:
        return None
    return _Column(index, label, ("metrics", key, "successful", ours), percentiles=False)


def _rows(doc: object, head: int = MAX_ROWS + _HEADER_ROWS + 1) -> list[list[str]] | None:
    """The first `head` non-blank rows, read lazily (None: not readable CSV, or too few)."""
    if not isinstance(doc, str):
        return None
    try:
        found = (row for _, row in csv_stream.rows(doc) if any(c.strip() for c in row))
        rows = list(islice(found, head))
    except csv.Error:
        return None
    return rows if len(rows) > _HEADER_ROWS else None


def _is_guidellm(rows: Sequence[Sequence[str]]) -> bool:
    second = [c.strip().lower() for c in rows[1]]
    third = {c.strip().lower() for c in rows[2]}
    if not any(c.startswith("successful ") for c in second):
        return False
    if not {"mean", "percentiles"} <= third:
        return False
    return any(len(c.path) > 2 and c.path[0] == "metrics" for c in _columns(rows[:_HEADER_ROWS]))


def sniff(name: str, doc: object) -> str | None:
    """Describe the guidellm CSV when `doc` is one, else None."""
    first = _rows(doc, head=_HEADER_ROWS + 1)  # another CSV is not read whole
    rows = _rows(doc) if first is not None and _is_guidellm(first) else None
    if rows is None or not _is_guidellm(rows):
        return None
    return f"guidellm CSV, {len(rows) - _HEADER_ROWS} benchmarks"


def parse(
    name: str,
    doc: object,
    data: bytes,
    overrides: DeploymentOverrides,
    provenance: Provenance,
) -> list[RunFile]:
    """One guidellm CSV as one RunFile with one level per benchmark row."""
    rows = _rows(doc)
    if rows is None or not _is_guidellm(rows):
        raise InputError(f"not a {DESCRIPTION}", file=name)
    over(len(rows) - _HEADER_ROWS, MAX_ROWS, "benchmark rows", file=name)
    columns = _columns(rows[:_HEADER_ROWS])
    if not any(c.path == ("config", "strategy", "type_") for c in columns):
        raise InputError(
            "no Benchmark / Strategy column: the load of each row is unknown", file=name
        )
    parsed = []
    for number, row in enumerate(rows[_HEADER_ROWS:], start=_HEADER_ROWS + 1):
        benchmark = _benchmark(name, number, row, columns)
        parsed.append(guidellm.parse_benchmark(Reader(name, benchmark, f"row {number}: ")))
    return [guidellm.build_run(name, data, {}, parsed, overrides=overrides, provenance=provenance)]


def _benchmark(
    name: str, number: int, row: Sequence[str], columns: Sequence[_Column]
) -> dict[str, object]:
    """One CSV row rebuilt as a benchmarks.json entry (blank cells are left out)."""
    entry: dict[str, object] = {"type_": "generative_benchmark", "metrics": {}}
    for column in columns:
        cell = row[column.index].strip() if column.index < len(row) else ""
        if not cell:
            continue
        if column.path in _TEXT_PATHS:
            value: object = cell
        elif column.path == ("config", "backend"):
            value = _backend(name, number, column, cell)
        elif column.path == ("start_time",) and not _is_number(cell):
            continue  # 0.8 writes local date-time text without a zone: the start stays unknown
        elif column.percentiles:
            value = _percentiles(name, number, column, cell)
        else:
            value = _number(name, number, column, cell)
        _put(entry, column.path, value)
    _split_strategy(entry)
    return entry


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _backend(name: str, number: int, column: _Column, cell: str) -> dict[str, object]:
    """The Run Info / Backend JSON cell (0.8) -> {model} when it names one."""
    try:
        backend = json.loads(cell)
    except ValueError as exc:
        raise _bad_cell(name, number, column, cell[:80], "expected a JSON object") from exc
    model = backend.get("model") if isinstance(backend, dict) else None
    return {"model": model} if isinstance(model, str) and model else {}


def _split_strategy(entry: dict[str, object]) -> None:
    """`concurrent@4` -> type_ concurrent, streams 4 (`poisson@2.00` -> rate 2.0)."""
    config = entry.get("config")
    strategy = config.get("strategy") if isinstance(config, dict) else None
    kind = strategy.get("type_") if isinstance(strategy, dict) else None
    match = _STRATEGY_AT.match(kind) if isinstance(kind, str) else None
    if match is None or not isinstance(strategy, dict):
        return
    strategy["type_"] = match["kind"]
    key = _VALUE_KEY.get(match["kind"])
    if key is not None:
        value = float(match["value"])
        strategy.setdefault(key, int(value) if key != "rate" else value)


def _put(entry: dict[str, object], path: tuple[str, ...], value: object) -> None:
    node = entry
    for key in path[:-1]:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):  # pragma: no cover - paths are fixed above
            return
        node = child
    if isinstance(value, Mapping):
        existing = node.setdefault(path[-1], {})
        if isinstance(existing, dict):
            existing.update(value)
            return
    node[path[-1]] = value


def _number(name: str, number: int, column: _Column, cell: str) -> float:
    try:
        return float(cell)
    except ValueError as exc:
        raise _bad_cell(name, number, column, cell, "expected a number") from exc


def _percentiles(name: str, number: int, column: _Column, cell: str) -> dict[str, object]:
    """The Percentiles cell -> min, max and a `percentiles` mapping as in benchmarks.json."""
    inner = cell.strip()
    if not (inner.startswith("[") and inner.endswith("]")):
        raise _bad_cell(name, number, column, cell, "expected [min, p001, ..., p99, max]")
    parts = [p.strip() for p in inner[1:-1].split(",")]
    if len(parts) != len(_PERCENTILE_KEYS):
        message = f"expected {len(_PERCENTILE_KEYS)} values [min, p001, ..., p99, max]"
        raise _bad_cell(name, number, column, cell, message)
    values = dict(
        zip(_PERCENTILE_KEYS, (_number(name, number, column, p) for p in parts), strict=True)
    )
    return {
        "min": values.pop("min"),
        "max": values.pop("max"),
        "percentiles": values,
    }


def _bad_cell(name: str, number: int, column: _Column, cell: str, message: str) -> InputError:
    return InputError(
        message, file=name, field=f"row {number}, column {column.label!r}", value=cell
    )
