"""Reading a backup file back, checked: the header (format, version, revision), then every table
and row in file order. Every line must parse, every table and column be known, every text fit
its column and hold no NUL character, every row pass the models the store writes it with
(db/backup_rows.py), and the end line be there with matching row counts.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import String, Table

from db.backup import FORMAT, FORMAT_VERSION, store_tables
from db.backup_rows import clean_names, why_row_refused
from db.models import UTCDateTime
from errors import InputError
from measurements.bounded import load_json

# The longest line read: a row is one line, and the largest the store holds (a request's chunk
# gaps, a run's environment) is a few MB. A longer line is refused once this much of it has been
# decompressed, never read whole (a 1 MB gzip can hold a 1 GiB line).
MAX_LINE_BYTES = 64 * 1024 * 1024
MAX_HEADER_BYTES = 1024 * 1024


def read_header(path: Path) -> dict[str, Any]:
    try:
        with gzip.open(path, "rb") as stream:
            first = _bounded_line(stream, path, 1, MAX_HEADER_BYTES)
    except FileNotFoundError as exc:
        raise InputError("no such backup file", file=str(path)) from exc
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise InputError(f"not a capplan backup (not gzip'd text): {exc}", file=str(path)) from exc
    header = _parse(path, first or "", 1)
    if header.get("format") != FORMAT:
        raise InputError("not a capplan backup (no capplan-backup header)", file=str(path))
    version = header.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise InputError(
            f"backup format version {version!r} is newer than this capplan reads "
            f"({FORMAT_VERSION}); upgrade capplan",
            file=str(path),
        )
    if not isinstance(header.get("revision"), str):
        raise InputError("the backup header names no schema revision", file=str(path))
    return header


def _parse(path: Path, line: str, number: int) -> dict[str, Any]:
    try:
        document = load_json(line, str(path))  # bounded: depth, sizes, duplicate keys
    except InputError as exc:
        raise InputError(
            f"line {number} is not JSON capplan reads: {exc.message}",
            file=str(path),
            field=exc.field,
            value=exc.value,
        ) from None
    if not isinstance(document, dict):
        raise InputError(f"line {number} is not a JSON object", file=str(path))
    return document


def check_file(path: Path) -> None:
    """Read the whole backup and refuse it (InputError) if anything in it would not restore."""
    for _table, _row in records(path):
        pass


def records(path: Path) -> Iterator[tuple[Table, dict[str, object] | None]]:
    """Every table and row of the backup, in file order: (table, None) where a table starts,
    (table, row) for each row. Raises InputError on a malformed line, an unknown table or
    column, a value that does not fit its column, and (after the last row) on a missing end
    line or row counts that do not match it."""
    tables = {t.name: t for t in store_tables()}
    counts: dict[str, int] = {}
    table: Table | None = None
    names: list[str] = []
    for number, line in _lines(path):
        document = _parse(path, line, number)
        if "r" in document:
            if table is None:
                raise InputError(f"line {number}: a row before any table", file=str(path))
            row = _decode_row(table, names, document["r"], path, number)
            counts[table.name] += 1
            yield table, row
        elif "table" in document:
            table, names = _table_of(tables, document, path, number)
            if table.name in counts:
                raise InputError(f"line {number}: table {table.name!r} again", file=str(path))
            counts[table.name] = 0
            yield table, None
        elif document.get("end"):
            _check_counts(path, document.get("rows"), counts)
            return
        else:
            raise InputError(
                f"line {number}: neither a table, a row nor the end line", file=str(path)
            )
    raise InputError(
        "the backup ends early (no end line): truncated? nothing was restored", file=str(path)
    )


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        with gzip.open(path, "rb") as stream:
            _bounded_line(stream, path, 1, MAX_HEADER_BYTES)  # the header, read already
            number = 2
            while (line := _bounded_line(stream, path, number, MAX_LINE_BYTES)) is not None:
                yield number, line
                number += 1
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise InputError(f"the backup cannot be read to its end: {exc}", file=str(path)) from exc


def _bounded_line(stream: gzip.GzipFile, path: Path, number: int, limit: int) -> str | None:
    """The next line as text (None at the end), at most `limit` bytes read of it."""
    raw = stream.readline(limit + 1)
    if not raw:
        return None
    if len(raw) > limit and not raw.endswith(b"\n"):
        raise InputError(
            f"line {number} is longer than the {limit // (1024 * 1024)} MiB a backup line may "
            "be: not a backup capplan wrote; nothing was restored",
            file=str(path),
        )
    return raw.decode("utf-8")


def _table_of(
    tables: dict[str, Table], document: dict[str, Any], path: Path, number: int
) -> tuple[Table, list[str]]:
    name = document["table"]
    if not isinstance(name, str) or name not in tables:
        raise InputError(f"line {number}: unknown table {name!r}", file=str(path))
    table = tables[name]
    names = document.get("columns")
    if not isinstance(names, list) or not all(isinstance(column, str) for column in names):
        raise InputError(f"line {number}: table {name!r} lists no columns", file=str(path))
    unknown = [column for column in names if column not in table.c]
    if unknown:
        raise InputError(
            f"line {number}: table {name!r} has no column(s) {', '.join(unknown)}",
            file=str(path),
        )
    return table, list(names)


def _decode_row(
    table: Table, names: list[str], values: object, path: Path, number: int
) -> dict[str, object]:
    if not isinstance(values, list) or len(values) != len(names):
        raise InputError(
            f"line {number}: a {table.name} row needs {len(names)} values", file=str(path)
        )
    row: dict[str, object] = dict(zip(names, values, strict=True))
    for name, value in row.items():
        why = _why_refused(table.c[name].type, value)
        if why is None and isinstance(table.c[name].type, UTCDateTime) and isinstance(value, str):
            try:
                row[name] = datetime.fromisoformat(value)
            except ValueError as exc:
                why = f"is not a date and time ({exc})"
        if why is not None:
            raise _refused(path, number, table, row, (name, why))
    refusal = why_row_refused(table, row) or clean_names(table, row)
    if refusal is not None:
        column, why = refusal
        raise _refused(path, number, table, row, (column, f"{_preview(row.get(column))} {why}"))
    return row


def _refused(
    path: Path, number: int, table: Table, row: dict[str, object], refusal: tuple[str, str]
) -> InputError:
    column, why = refusal
    return InputError(
        f"line {number}: {table.name} row id {_preview(row.get('id'))}, column {column}: the "
        f"value {why}; the store refuses it, so nothing was restored (fix that row in the "
        "source store and back up again)",
        file=str(path),
        field=f"{table.name}.{column}",
    )


def _preview(value: object, limit: int = 60) -> str:
    """A value quoted in a message, bounded (never the repr of a whole long value)."""
    if isinstance(value, str) and len(value) > limit:
        return repr(value[:limit]) + "..."
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**24:
        return f"(a {value.bit_length()}-bit integer)"
    if isinstance(value, dict | list):
        return f"({type(value).__name__} of {len(value)})"
    return repr(value)


def _why_refused(kind: object, value: object) -> str | None:
    """Why a text value cannot be stored (Postgres refuses NUL characters and text longer than
    a VARCHAR(n); capplan refuses both on every backend), or None."""
    if not isinstance(kind, String) or not isinstance(value, str):
        return None
    if "\x00" in value:
        return "holds a NUL character"
    if kind.length is not None and len(value) > kind.length:
        return f"is {len(value)} characters, longer than the column's {kind.length}"
    return None


def _check_counts(path: Path, stated: object, loaded: dict[str, int]) -> None:
    if not isinstance(stated, dict):
        raise InputError("the backup's end line has no row counts", file=str(path))
    names = sorted(set(stated) | set(loaded))
    wrong = {name: (stated.get(name, 0), loaded.get(name, 0)) for name in names}
    wrong = {name: pair for name, pair in wrong.items() if pair[0] != pair[1]}
    if wrong:
        detail = ", ".join(f"{n}: {want} stated, {got} read" for n, (want, got) in wrong.items())
        raise InputError(
            f"the backup's row counts do not match ({detail}): nothing was restored",
            file=str(path),
        )
