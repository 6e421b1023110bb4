"""Restore of a backup file (db/backup.py) into a store, keeping every id.

Restore first reads the whole file and checks it (db/backup_reader.py) before it changes
anything. It then empties the target (only with replace=True) and loads every row in one
transaction, keeping every id (reports cite runs and plan records by id), and moves the id
counters (SQLite's sqlite_sequence, Postgres sequences) past the restored rows and any deleted
ones. A backup at an older schema revision is first loaded into a scratch SQLite file at that
revision and migrated up there, so the target only ever sees that one transaction: a restore
that fails leaves the target as it was.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar, cast

from sqlalchemy import Connection, Table, delete, func, insert, select, text
from sqlalchemy.exc import DataError, DBAPIError

from db.backup import CHUNK_ROWS, BackupSummary, backup, read_snapshot, store_tables
from db.backup_reader import check_file, read_header, records
from db.engine import alembic_config, current_revision, head_revision, make_engine, redact, upgrade
from db.models import AuditEntry
from errors import InputError, StoreError
from team.roles import Action, Actor

T = TypeVar("T")
_AUDIT = cast(Table, AuditEntry.__table__)


def restore(url: str, path: Path, *, actor: Actor, replace: bool = False) -> BackupSummary:
    """Load a backup into the store at `url`: empty (or emptied with replace=True), filled in
    one transaction with the original ids. The whole file is checked first, and nothing in the
    target changes unless the whole restore succeeds (a new database gets the schema). An
    admin's; the audit trail keeps the backup's entries, the replaced store's, and this restore."""
    actor.require(Action.RESTORE_BACKUPS)
    header = read_header(path)
    revision = str(header["revision"])
    if not _known_revision(revision):
        raise InputError(
            f"the backup is at schema revision {revision!r}, which this capplan does not know: "
            "it was made by a newer capplan; upgrade capplan to restore it",
            file=str(path),
        )
    check_file(path)  # the whole file, before anything in the target changes
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
        rows = _restore_at_head(url, path, header, (replace, actor))
    else:
        with tempfile.TemporaryDirectory(prefix="capplan-restore-") as folder:
            staged = _migrate_to_head(path, header, revision, Path(folder))
            rows = _restore_at_head(url, staged, read_header(staged), (replace, actor))
    return BackupSummary(path, revision, rows)


def _restore_at_head(
    url: str, path: Path, header: dict[str, Any], how: tuple[bool, Actor]
) -> dict[str, int]:
    """Empty (with replace) and fill the store from a head-revision backup in one transaction,
    then put back the replaced store's audit entries the backup lacks and record the restore."""
    replace, actor = how
    upgrade(url)  # creates the schema in a new database; a no-op at head

    def fill(connection: Connection) -> dict[str, int]:
        old_trail = connection.execute(select(_AUDIT)).mappings().all()
        _refuse_or_empty(connection, url, replace)
        rows = _load(connection, path, header)
        kept = keep_trail(connection, [dict(row) for row in old_trail])
        said = f"backup {path.name} restored ({sum(rows.values())} rows)"
        if kept:
            said += f"; {kept} audit entries of the replaced store kept"
        entry = {
            "at": datetime.now(UTC),
            "actor": actor.name,
            "role": actor.role.value,
            "kind": "backup",
            "action": "restored",
            "target": f"backup {path.name}",
            "before": {"replaced": replace, "audit_entries_kept": kept},
            "after": {"file": path.name, "revision": header.get("revision"), "rows": rows},
            "summary": said,
        }
        connection.execute(insert(_AUDIT), [entry])
        return rows

    return _in_transaction(url, fill)


def keep_trail(connection: Connection, old: list[dict[str, Any]]) -> int:
    """Append the replaced store's audit entries that the restored trail lacks (new ids, same
    when/who/what), so restoring an older backup never erases the trail; returns how many."""
    table = _AUDIT
    fields = ("at", "actor", "kind", "action", "target")
    present = {
        tuple(row[name] for name in fields)
        for row in connection.execute(select(*(table.c[name] for name in fields))).mappings()
    }
    missing = [
        {k: v for k, v in row.items() if k != "id"}
        for row in old
        if tuple(row[name] for name in fields) not in present
    ]
    if missing:
        connection.execute(insert(table), missing)
    return len(missing)


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
    # Imported here, as in db.backup: only a restore needs Alembic's scripts.
    from alembic.script import ScriptDirectory  # noqa: PLC0415
    from alembic.util import CommandError as AlembicError  # noqa: PLC0415

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
                connection = read_snapshot(plain)
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


def _filled(connection: Connection) -> dict[str, int]:
    counts = {
        t.name: int(connection.execute(select(func.count()).select_from(t)).scalar() or 0)
        for t in store_tables(connection)
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
    for table in reversed(store_tables(connection)):
        connection.execute(delete(table))


def _load(connection: Connection, path: Path, header: dict[str, Any]) -> dict[str, int]:
    present = {t.name for t in store_tables(connection)}
    rows: dict[str, int] = {}
    table: Table | None = None
    batch: list[dict[str, object]] = []
    for record_table, row in records(path):
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


def _move_id_counters(connection: Connection, high_water: dict[str, Any]) -> None:
    """Let the next insert of every table take an id above every restored (or deleted) one."""
    dialect = connection.dialect.name
    for table in store_tables(connection):
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
