"""Backup-file helpers for the backup and restore tests: every table's rows, a filled target
store, an older-revision backup, and copies of a backup with lines changed."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import create_engine, select, text

from db import repository
from db.backup import backup
from db.engine import make_engine, upgrade
from db.models import Base
from team.roles import SYSTEM
from tests.db.conftest import full_run
from tests.stores import Stores


def table_rows(url: str) -> dict[str, list[tuple[object, ...]]]:
    """Every table's rows, ordered by id, read with Core selects."""
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return {
                table.name: [
                    tuple(row) for row in connection.execute(select(table).order_by(table.c.id))
                ]
                for table in Base.metadata.sorted_tables
            }
    finally:
        engine.dispose()


def restored_as(
    after: dict[str, list[tuple[object, ...]]], before: dict[str, list[tuple[object, ...]]]
) -> bool:
    """Whether a restored store holds exactly `before`, its audit trail going on past the
    backup's: the backup's entries first, then any the replaced store had that the backup
    lacks, then the restore's own entry (db/restore.py)."""
    trail, kept = after["audit_log"], before["audit_log"]
    same = {name: rows for name, rows in after.items() if name != "audit_log"} == {
        name: rows for name, rows in before.items() if name != "audit_log"
    }
    action = 5  # audit_log columns: id, at, actor, role, kind, action, ...
    return same and trail[: len(kept)] == kept and bool(trail) and trail[-1][action] == "restored"


def edit(file: Path, out: Path, change: Callable[[list[str]], list[str]]) -> Path:
    """A copy of a backup file with its lines changed."""
    lines = gzip.decompress(file.read_bytes()).decode().splitlines()
    out.write_bytes(gzip.compress("\n".join(change(lines)).encode()))
    return out


def set_value(lines: list[str], table: str, column: str, value: object, nth: int = 0) -> list[str]:
    """The lines with `column` of the nth `table` row set to value."""
    at = next(i for i, line in enumerate(lines) if json.loads(line).get("table") == table)
    position = json.loads(lines[at])["columns"].index(column)
    row = json.loads(lines[at + 1 + nth])
    row["r"][position] = value
    return [*lines[: at + 1 + nth], json.dumps(row), *lines[at + 2 + nth :]]


def old_backup(tmp_path: Path, *names: str) -> Path:
    """A backup at revision 0001 holding scenarios with these names (ids 7, 8, ...)."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade(url, "0001")
    engine = create_engine(url)
    with engine.begin() as connection:
        for number, name in enumerate(names, start=7):
            connection.execute(
                text(
                    "INSERT INTO scenarios (id, name, yaml_text, created_at, updated_at) VALUES "
                    "(:id, :name, 'name: old', '2025-01-02 03:04:05', '2025-01-02 03:04:05')"
                ),
                {"id": number, "name": name},
            )
    engine.dispose()
    file = tmp_path / "old.jsonl.gz"
    assert backup(url, file).revision == "0001"
    return file


def filled_target(stores: Stores) -> str:
    url = stores.migrated("backup_target")
    engine = make_engine(url)
    repository.save_run(engine, full_run("precious", "aa" * 32), actor=SYSTEM)
    engine.dispose()
    return url
