"""Backup and restore of the whole store as one portable file (any dialect to any dialect).

The file is gzip'd JSON lines: a header (format, format version, Alembic revision, the id
high-water mark of every table), then for each table a line naming its columns and one line per
row (values in column order), then an end line with the row counts. Tables are read in chunks
(yield_per) and written in chunks: no table is ever held in memory whole.

A backup reads every table in one read transaction, so the file is one consistent snapshot even
while probes and app sessions keep writing: REPEATABLE READ (read only) on Postgres, a DEFERRED
transaction on SQLite (WAL keeps its snapshot and never blocks writers).

Restore first reads the whole file and checks it (every line parses, every table and column is
known, every text fits its column and holds no NUL character, the end line is there and its row
counts match) before it changes anything. It then empties the target (only with replace=True)
and loads every row in one transaction, keeping every id (reports cite runs and plan records by
id), and moves the id counters (SQLite's sqlite_sequence, Postgres sequences) past the restored
rows and any deleted ones. A backup at an older schema revision is first loaded into a scratch
SQLite file at that revision and migrated up there, so the target only ever sees that one
transaction: a restore that fails leaves the target as it was.
"""

from __future__ import annotations

import gzip
import json
import tempfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, TypeVar

from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError as AlembicError
from sqlalchemy import (
    Column,
    Connection,
    String,
    Table,
    delete,
    func,
    insert,
    inspect,
    select,
    text,
)
from sqlalchemy.exc import DataError, DBAPIError

from db.engine import (
    BEGIN_OPTION,
    alembic_config,
    current_revision,
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


def _read_snapshot(connection: Connection) -> Connection:
    """Make the connection's next transaction one read-only snapshot that never blocks writers."""
    if connection.dialect.name == "postgresql":
        return connection.execution_options(
            isolation_level="REPEATABLE READ", postgresql_readonly=True
        )
    return connection.execution_options(**{BEGIN_OPTION: "DEFERRED"})


# ---------------------------------------------------------------- backup


def backup(url: str, path: Path) -> BackupSummary:
    """Write the whole store at `url` to `path` (gzip'd JSON lines), every table read in one
    snapshot; StoreError on failure."""
    engine = make_engine(url)
    partial = path.with_name(path.name + ".partial")
    rows: dict[str, int] = {}
    try:
        with engine.connect() as plain:
            connection = _read_snapshot(plain)
            revision = MigrationContext.configure(connection).get_current_revision()
            if revision is None:
                raise StoreError(
                    f"database {redact(url)} has no capplan schema: nothing to back up"
                )
            with gzip.open(partial, "wt", encoding="utf-8", newline="\n") as out:
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
            connection.rollback()  # read only: nothing to commit
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
    """Load a backup into the store at `url`: empty (or emptied with replace=True), filled in
    one transaction with the original ids. The whole file is checked first, and nothing in the
    target changes unless the whole restore succeeds (a new database gets the schema)."""
    header = _read_header(path)
    revision = str(header["revision"])
    if not _known_revision(revision):
        raise InputError(
            f"the backup is at schema revision {revision!r}, which this capplan does not know: "
            "it was made by a newer capplan; upgrade capplan to restore it",
            file=str(path),
        )
    _check_file(path)  # the whole file, before anything in the target changes
    current = current_revision(url)
    if current is not None and not _known_revision(current):
        raise StoreError(
            f"database {redact(url)} is at revision {current!r}, which this capplan does not "
            "know (written by a newer capplan): restore with that capplan, or into another database"
        )
    if current is not None and not replace:
        # Refuse a filled store before migrating it; checked again inside the load.
        _in_transaction(url, lambda connection: _refuse_filled(connection, url), read=True)
    if revision == head_revision():
        rows = _restore_at_head(url, path, header, replace)
    else:
        with tempfile.TemporaryDirectory(prefix="capplan-restore-") as folder:
            staged = _migrate_to_head(path, header, revision, Path(folder))
            rows = _restore_at_head(url, staged, _read_header(staged), replace)
    return BackupSummary(path, revision, rows)


def _restore_at_head(url: str, path: Path, header: dict[str, Any], replace: bool) -> dict[str, int]:
    """Empty (with replace) and fill the store from a head-revision backup in one transaction."""
    upgrade(url)  # creates the schema in a new database; a no-op at head

    def fill(connection: Connection) -> dict[str, int]:
        _refuse_or_empty(connection, url, replace)
        return _load(connection, path, header)

    return _in_transaction(url, fill)


def _migrate_to_head(path: Path, header: dict[str, Any], revision: str, folder: Path) -> Path:
    """An older-revision backup migrated to head: loaded into a scratch SQLite file at its own
    revision, upgraded there, and backed up again; returns the head-revision file."""
    scratch = f"sqlite:///{folder / 'staging.db'}"
    try:
        upgrade(scratch, revision)
        _in_transaction(scratch, lambda connection: _load(connection, path, header))
        upgrade(scratch)
        return backup(scratch, folder / "at-head.jsonl.gz").path
    except StoreError as exc:
        raise StoreError(
            f"the backup at revision {revision} cannot be migrated to {head_revision()} "
            f"(nothing was restored): {exc}"
        ) from exc


def _known_revision(revision: str) -> bool:
    try:
        return ScriptDirectory.from_config(alembic_config()).get_revision(revision) is not None
    except AlembicError:
        return False


def _in_transaction(url: str, action: Callable[[Connection], T], *, read: bool = False) -> T:
    """Run `action` in one transaction on the store (rolled back whole on any error)."""
    engine = make_engine(url)
    try:
        if read:
            with engine.connect() as plain:
                connection = _read_snapshot(plain)
                try:
                    return action(connection)
                finally:
                    connection.rollback()
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


def _filled(connection: Connection) -> dict[str, int]:
    counts = {
        t.name: int(connection.execute(select(func.count()).select_from(t)).scalar() or 0)
        for t in _tables(connection)
    }
    return {name: count for name, count in counts.items() if count}


def _refuse_filled(connection: Connection, url: str) -> None:
    filled = _filled(connection)
    if filled:
        listed = ", ".join(f"{count} {name}" for name, count in filled.items())
        raise StoreError(
            f"database {redact(url)} is not empty ({listed}): restore into an empty "
            "database, or pass --replace to delete everything in it first"
        )


def _refuse_or_empty(connection: Connection, url: str, replace: bool) -> None:
    if not replace:
        _refuse_filled(connection, url)
    for table in reversed(_tables(connection)):
        connection.execute(delete(table))


def _check_file(path: Path) -> None:
    """Read the whole backup and refuse it (InputError) if anything in it would not restore."""
    for _table, _row in _records(path):
        pass


def _records(path: Path) -> Iterator[tuple[Table, dict[str, object] | None]]:
    """Every table and row of the backup, in file order: (table, None) where a table starts,
    (table, row) for each row. Raises InputError on a malformed line, an unknown table or
    column, a value that does not fit its column, and (after the last row) on a missing end
    line or row counts that do not match it."""
    tables = {t.name: t for t in _tables()}
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


def _load(connection: Connection, path: Path, header: dict[str, Any]) -> dict[str, int]:
    present = {t.name for t in _tables(connection)}
    rows: dict[str, int] = {}
    table: Table | None = None
    batch: list[dict[str, object]] = []
    for record_table, row in _records(path):
        if row is None:
            if table is not None:
                _flush(connection, table, batch, rows)
            if record_table.name not in present:
                raise InputError(
                    f"table {record_table.name!r} is not in the schema at revision "
                    f"{header['revision']}",
                    file=str(path),
                )
            table = record_table
            rows[table.name] = 0
            continue
        batch.append(row)
        if len(batch) >= CHUNK_ROWS:
            _flush(connection, record_table, batch, rows)
    if table is not None:
        _flush(connection, table, batch, rows)
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
            raise InputError(
                f"line {number}: {table.name} row id {row.get('id')!r}, column {name}: the value "
                f"{why}; the store refuses it, so nothing was restored (fix that row in the "
                "source store and back up again)",
                file=str(path),
            )
    return row


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


def _flush(
    connection: Connection, table: Table, batch: list[dict[str, object]], rows: dict[str, int]
) -> None:
    if not batch:
        return
    try:
        connection.execute(insert(table), batch)
    except DataError as exc:  # a value this database refuses that the file check let through
        ids = [row.get("id") for row in batch]
        detail = str(exc.orig).splitlines()[0] if exc.orig is not None else str(exc)
        raise StoreError(
            f"the database refused a {table.name} row with id between {ids[0]!r} and "
            f"{ids[-1]!r} (nothing was restored): {detail}"
        ) from exc
    rows[table.name] = rows.get(table.name, 0) + len(batch)
    batch.clear()


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
