"""Backup of the whole store as one portable file (any dialect to any dialect); checking and
reading such a file is in db/backup_reader.py, restoring it in db/restore.py.

The file is gzip'd JSON lines: a header (format, format version, Alembic revision, the id
high-water mark of every table), then for each table a line naming its columns and one line per
row (values in column order), then an end line with the row counts. Tables are read in chunks
(yield_per) and written in chunks: no table is ever held in memory whole.

A backup reads every table in one read transaction, so the file is one consistent snapshot even
while probes and app sessions keep writing: REPEATABLE READ (read only) on Postgres, a DEFERRED
transaction on SQLite (WAL keeps its snapshot and never blocks writers).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from sqlalchemy import Column, Connection, Table, func, inspect, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError

from db.engine import BEGIN_OPTION, make_engine, redact
from db.models import Base
from errors import InputError, StoreError
from measurements.atomic_write import atomic_stream

__all__ = [
    "CHUNK_ROWS",
    "FORMAT",
    "FORMAT_VERSION",
    "BackupSummary",
    "backup",
    "read_snapshot",
    "store_files",
    "store_tables",
]

FORMAT = "capplan-backup"
FORMAT_VERSION = 1
CHUNK_ROWS = 1000


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


def store_files(url: str) -> tuple[Path, ...]:
    """The files a SQLite store at `url` lives in (the database, its journal, WAL and shared
    memory), which no output may replace; () for Postgres or an in-memory database."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        return ()
    database = parsed.database
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:":
        return ()
    main = Path(database).expanduser()
    return (main, *(main.with_name(main.name + tail) for tail in ("-journal", "-wal", "-shm")))


def store_tables(connection: Connection | None = None) -> list[Table]:
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


def read_snapshot(connection: Connection) -> Connection:
    """Make the connection's next transaction one read-only snapshot that never blocks writers."""
    if connection.dialect.name == "postgresql":
        return connection.execution_options(
            isolation_level="REPEATABLE READ", postgresql_readonly=True
        )
    return connection.execution_options(**{BEGIN_OPTION: "DEFERRED"})


def backup(url: str, path: Path) -> BackupSummary:
    """Write the whole store at `url` to `path` (gzip'd JSON lines), every table read in one
    snapshot; StoreError on failure."""
    if any(_same_path(path, store) for store in store_files(url)):
        raise InputError(
            "the backup would replace the live store it backs up", file=str(path), field="out"
        )
    # Imported here: every command opens the store through this module's package, and only a
    # backup needs Alembic (0.2-0.3 s to import).
    from alembic.runtime.migration import MigrationContext  # noqa: PLC0415

    engine = make_engine(url)
    rows: dict[str, int] = {}
    try:
        with engine.connect() as plain:
            connection = read_snapshot(plain)
            revision = MigrationContext.configure(connection).get_current_revision()
            if revision is None:
                raise StoreError(
                    f"database {redact(url)} has no capplan schema: nothing to back up"
                )
            with _gzip_text(path) as out:
                tables = store_tables(connection)
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
            connection.rollback()  # read only: nothing to commit
    except OSError as exc:
        raise InputError(f"cannot write the backup: {exc.strerror}", file=str(path)) from exc
    except DBAPIError as exc:
        raise StoreError(f"database {redact(url)} refused the backup: {exc.orig}") from exc
    finally:
        engine.dispose()
    return BackupSummary(path, revision, rows)


@contextlib.contextmanager
def _gzip_text(path: Path) -> Iterator[IO[str]]:
    """Gzip'd text to an exclusive temp file renamed over `path` once whole (atomic_stream)."""
    with (
        atomic_stream(path) as raw,
        gzip.GzipFile(fileobj=raw, mode="wb") as packed,
        io.TextIOWrapper(packed, encoding="utf-8", newline="\n") as out,
    ):
        yield out


def _same_path(path: Path, other: Path) -> bool:
    if path.exists() and other.exists():
        return path.samefile(other)
    return path.resolve() == other.resolve()


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
