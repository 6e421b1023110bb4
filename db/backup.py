"""Backup and restore of the whole store as one portable file (any dialect to any dialect).

The file is gzip'd JSON lines: a header (format, format version, Alembic revision, the id
high-water mark of every table), then for each table a line naming its columns and one line per
row (values in column order), then an end line with the row counts, so a truncated file is
refused instead of half restored. Tables are read in chunks (yield_per) and written in chunks:
no table is ever held in memory whole.

Restore goes into an empty database (or one emptied with replace=True) in one transaction,
keeping every id (reports cite runs and plan records by id), and then moves the id counters
(SQLite's sqlite_sequence, Postgres sequences) past the restored rows and any deleted ones.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, TypeVar

from alembic.script import ScriptDirectory
from alembic.util import CommandError as AlembicError
from sqlalchemy import Column, Connection, Table, delete, func, insert, inspect, select, text
from sqlalchemy.exc import DBAPIError

from db.engine import (
    alembic_config,
    current_revision,
    downgrade,
    head_revision,
    make_engine,
    redact,
    upgrade,
)
from db.models import Base, UTCDateTime
from errors import InputError, StoreError

__all__ = ["FORMAT", "FORMAT_VERSION", "BackupSummary", "backup", "restore"]

FORMAT = "capplan-backup"
FORMAT_VERSION = 1
CHUNK_ROWS = 1000
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class BackupSummary:
    """What a backup wrote or a restore loaded."""

    path: Path
    revision: str
    rows: dict[str, int]

    def message(self, verb: str) -> str:
        """One line for people."""
        counts = ", ".join(f"{count} {table}" for table, count in self.rows.items())
        return f"{verb} {sum(self.rows.values())} rows at revision {self.revision}: {counts}"


def _tables(connection: Connection | None = None) -> list[Table]:
    """The store's tables, parents before children (foreign keys); with a connection, only
    those the database has (an older schema revision lacks the newer tables)."""
    tables = list(Base.metadata.sorted_tables)
    if connection is None:
        return tables
    present = set(inspect(connection).get_table_names())
    return [table for table in tables if table.name in present]


def _columns(connection: Connection, table: Table) -> list[Column[Any]]:
    """The model's columns that this database's table has, in table order."""
    present = {column["name"] for column in inspect(connection).get_columns(table.name)}
    return [column for column in table.columns if column.name in present]


# ---------------------------------------------------------------- backup


def backup(url: str, path: Path) -> BackupSummary:
    """Write the whole store at `url` to `path` (gzip'd JSON lines); StoreError on failure."""
    revision = current_revision(url)
    if revision is None:
        raise StoreError(f"database {redact(url)} has no capplan schema: nothing to back up")
    engine = make_engine(url)
    partial = path.with_name(path.name + ".partial")
    rows: dict[str, int] = {}
    try:
        with (
            engine.connect() as connection,
            gzip.open(partial, "wt", encoding="utf-8", newline="\n") as out,
        ):
            tables = _tables(connection)
            high = {t.name: _high_water(connection, t) for t in tables}
            _line(
                out,
                {
                    "format": FORMAT,
                    "format_version": FORMAT_VERSION,
                    "revision": revision,
                    "dialect": connection.dialect.name,
                    "created_at": datetime.now(UTC).isoformat(),
                    "id_high_water": high,
                },
            )
            for table in tables:
                rows[table.name] = _dump_table(connection, table, out)
            _line(out, {"end": True, "rows": rows})
        partial.replace(path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise InputError(f"cannot write the backup: {exc.strerror}", file=str(path)) from exc
    except DBAPIError as exc:
        partial.unlink(missing_ok=True)
        raise StoreError(f"database {redact(url)} refused the backup: {exc.orig}") from exc
    finally:
        engine.dispose()
    return BackupSummary(path, revision, rows)


def _line(out: IO[str], document: object) -> None:
    out.write(json.dumps(document, separators=(",", ":"), ensure_ascii=False) + "\n")


def _dump_table(connection: Connection, table: Table, out: IO[str]) -> int:
    columns = _columns(connection, table)
    _line(out, {"table": table.name, "columns": [column.name for column in columns]})
    query = select(*columns).order_by(*table.primary_key.columns)
    result = connection.execution_options(yield_per=CHUNK_ROWS).execute(query)
    count = 0
    for chunk in result.partitions():
        for row in chunk:
            out.write(json.dumps({"r": [_encode(value) for value in row]}, ensure_ascii=False))
            out.write("\n")
        count += len(chunk)
    return count


def _encode(value: object) -> object:
    return value.isoformat() if isinstance(value, datetime) else value


def _high_water(connection: Connection, table: Table) -> int:
    """The largest id this table ever handed out: max(id), or more where ids were deleted."""
    top = connection.execute(select(func.max(table.c.id))).scalar() or 0
    dialect = connection.dialect.name
    if dialect == "sqlite" and table.kwargs.get("sqlite_autoincrement"):
        seq = connection.execute(
            text("SELECT seq FROM sqlite_sequence WHERE name = :name"), {"name": table.name}
        ).scalar()
        return max(top, int(seq or 0))
    if dialect == "postgresql":
        seq = connection.execute(
            text(
                "SELECT pg_sequence_last_value(CAST(pg_get_serial_sequence(:t, 'id') AS regclass))"
            ),
            {"t": table.name},
        ).scalar()
        return max(top, int(seq or 0))
    return int(top)


# ---------------------------------------------------------------- restore


def restore(url: str, path: Path, *, replace: bool = False) -> BackupSummary:
    """Load a backup into the store at `url`: empty (or emptied with replace=True), migrated to
    the backup's revision, filled in one transaction with the original ids, then upgraded."""
    header = _read_header(path)
    revision = str(header["revision"])
    if not _known_revision(revision):
        raise InputError(
            f"the backup is at schema revision {revision!r}, which this capplan does not know: "
            "it was made by a newer capplan; upgrade capplan to restore it",
            file=str(path),
        )
    current = current_revision(url)
    if current is not None and not _known_revision(current):
        raise StoreError(
            f"database {redact(url)} is at revision {current!r}, which this capplan does not "
            "know (written by a newer capplan): restore with that capplan, or into another database"
        )
    upgrade(url)  # creates the schema in a new database; a no-op at head
    older = revision != head_revision()
    if older:
        # An older backup: empty the tables, take them back to the backup's shape, load, and
        # migrate up again. Alembic runs in its own transactions here, so only the load is atomic.
        _in_transaction(url, lambda connection: _refuse_or_empty(connection, url, replace))
        downgrade(url, revision)

    def fill(connection: Connection) -> dict[str, int]:
        if not older:
            _refuse_or_empty(connection, url, replace)
        return _load(connection, path, header)

    rows = _in_transaction(url, fill)
    if older:
        upgrade(url)
    return BackupSummary(path, revision, rows)


def _known_revision(revision: str) -> bool:
    try:
        return ScriptDirectory.from_config(alembic_config()).get_revision(revision) is not None
    except AlembicError:
        return False


def _in_transaction(url: str, action: Callable[[Connection], T]) -> T:
    """Run `action` in one transaction on the store (rolled back whole on any error)."""
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            return action(connection)
    except DBAPIError as exc:
        raise StoreError(
            f"database {redact(url)} refused the restore (nothing was restored): {exc.orig}"
        ) from exc
    finally:
        engine.dispose()


def _read_header(path: Path) -> dict[str, Any]:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as stream:
            first = stream.readline()
    except FileNotFoundError as exc:
        raise InputError("no such backup file", file=str(path)) from exc
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise InputError(f"not a capplan backup (not gzip'd text): {exc}", file=str(path)) from exc
    header = _parse(path, first, 1)
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
        document = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"line {number} is not JSON: {exc}", file=str(path)) from exc
    if not isinstance(document, dict):
        raise InputError(f"line {number} is not a JSON object", file=str(path))
    return document


def _refuse_or_empty(connection: Connection, url: str, replace: bool) -> None:
    counts = {
        t.name: int(connection.execute(select(func.count()).select_from(t)).scalar() or 0)
        for t in _tables(connection)
    }
    filled = {name: count for name, count in counts.items() if count}
    if filled and not replace:
        listed = ", ".join(f"{count} {name}" for name, count in filled.items())
        raise StoreError(
            f"database {redact(url)} is not empty ({listed}): restore into an empty "
            "database, or pass --replace to delete everything in it first"
        )
    for table in reversed(_tables(connection)):
        connection.execute(delete(table))


def _load(connection: Connection, path: Path, header: dict[str, Any]) -> dict[str, int]:
    tables = {t.name: t for t in _tables(connection)}
    rows: dict[str, int] = {}
    table: Table | None = None
    names: list[str] = []
    batch: list[dict[str, object]] = []
    ended = False
    for number, line in _lines(path):
        document = _parse(path, line, number)
        if "r" in document:
            if table is None:
                raise InputError(f"line {number}: a row before any table", file=str(path))
            batch.append(_decode_row(table, names, document["r"], path, number))
            if len(batch) >= CHUNK_ROWS:
                _flush(connection, table, batch, rows)
        elif "table" in document:
            if table is not None:
                _flush(connection, table, batch, rows)
            table, names = _table_of(tables, document, path, number)
            rows[table.name] = 0
        elif document.get("end"):
            if table is not None:
                _flush(connection, table, batch, rows)
            _check_counts(path, document.get("rows"), rows)
            ended = True
            break
    if not ended:
        raise InputError(
            "the backup ends early (no end line): truncated? nothing was restored", file=str(path)
        )
    _move_id_counters(connection, header.get("id_high_water") or {})
    return rows


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as stream:
            next(stream)  # the header, read already
            yield from enumerate(stream, start=2)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise InputError(f"the backup cannot be read to its end: {exc}", file=str(path)) from exc


def _table_of(
    tables: dict[str, Table], document: dict[str, Any], path: Path, number: int
) -> tuple[Table, list[str]]:
    name = document["table"]
    if name not in tables:
        raise InputError(f"line {number}: unknown table {name!r}", file=str(path))
    table = tables[name]
    names = list(document.get("columns") or [])
    unknown = [column for column in names if column not in table.c]
    if unknown:
        raise InputError(
            f"line {number}: table {name!r} has no column(s) {', '.join(unknown)}",
            file=str(path),
        )
    return table, names


def _decode_row(
    table: Table, names: list[str], values: object, path: Path, number: int
) -> dict[str, object]:
    if not isinstance(values, list) or len(values) != len(names):
        raise InputError(
            f"line {number}: a {table.name} row needs {len(names)} values", file=str(path)
        )
    row: dict[str, object] = {}
    for name, value in zip(names, values, strict=True):
        if isinstance(table.c[name].type, UTCDateTime) and isinstance(value, str):
            row[name] = datetime.fromisoformat(value)
        else:
            row[name] = value
    return row


def _flush(
    connection: Connection, table: Table, batch: list[dict[str, object]], rows: dict[str, int]
) -> None:
    if batch:
        connection.execute(insert(table), batch)
        rows[table.name] = rows.get(table.name, 0) + len(batch)
        batch.clear()


def _check_counts(path: Path, stated: object, loaded: dict[str, int]) -> None:
    if not isinstance(stated, dict):
        return
    wrong = {name: (count, loaded.get(name, 0)) for name, count in stated.items()}
    wrong = {name: pair for name, pair in wrong.items() if pair[0] != pair[1]}
    if wrong:
        detail = ", ".join(f"{n}: {want} stated, {got} read" for n, (want, got) in wrong.items())
        raise InputError(f"the backup's row counts do not match ({detail})", file=str(path))


def _move_id_counters(connection: Connection, high_water: dict[str, Any]) -> None:
    """Let the next insert of every table take an id above every restored (or deleted) one."""
    dialect = connection.dialect.name
    for table in _tables(connection):
        top = connection.execute(select(func.max(table.c.id))).scalar() or 0
        high = max(int(top), int(high_water.get(table.name) or 0))
        if dialect == "postgresql":
            connection.execute(
                text("SELECT setval(pg_get_serial_sequence(:t, 'id'), :v, :called)"),
                {"t": table.name, "v": max(high, 1), "called": high > 0},
            )
        elif dialect == "sqlite" and table.kwargs.get("sqlite_autoincrement") and high:
            connection.execute(
                text("DELETE FROM sqlite_sequence WHERE name = :name"), {"name": table.name}
            )
            connection.execute(
                text("INSERT INTO sqlite_sequence (name, seq) VALUES (:name, :seq)"),
                {"name": table.name, "seq": high},
            )
