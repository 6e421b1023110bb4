"""Backup and restore of the whole store on real databases: a demo store with request samples,
a saved scenario and a recorded plan round-trips row for row (ids kept), later inserts get new
ids, and bad targets or files are refused with a clear error. The Postgres cases (marker
`postgres`) run when CAPPLAN_TEST_PG_URL names an admin URL (tests/stores.py)."""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest
from sqlalchemy import Connection, Engine, Table, create_engine, select, text
from typer.testing import CliRunner

from cli import app
from db import backup as backup_module
from db import repository, scenarios
from db.backup import backup, restore
from db.engine import current_revision, head_revision, make_engine, upgrade
from db.models import Base
from db.seed import load_demo_data
from errors import InputError, StoreError
from planner.capacity import make_plan
from planner.scenario import scenario_from_yaml
from tests.db.conftest import full_run
from tests.stores import Stores, backend
from workflows import history, planning

ROOT = Path(__file__).resolve().parents[2]
AGENT_YAML = (ROOT / "docs" / "scenarios" / "agent-platform.yaml").read_text(encoding="utf-8")
TABLES = [
    "deployments",
    "runs",
    "load_levels",
    "level_metrics",
    "request_samples",
    "prices",
    "scenarios",
    "plan_records",
]
runner = CliRunner()


@pytest.fixture(scope="module")
def filled_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Demo runs and prices, a probe-like run with samples, a deleted run, a scenario, a plan."""
    path = tmp_path_factory.mktemp("filled") / "capplan.db"
    url = f"sqlite:///{path}"
    upgrade(url)
    engine = make_engine(url)
    load_demo_data(engine)
    doomed = repository.save_run(engine, full_run("deleted later", "cd" * 32)).run_id
    repository.save_run(engine, full_run())
    assert repository.delete_run(engine, doomed)
    scenarios.save_scenario(engine, "agent-platform", AGENT_YAML)
    scenario = scenario_from_yaml(AGENT_YAML, "agent-platform")
    plan = make_plan(scenario, planning.load_curves(engine), repository.list_prices(engine))
    history.record_plan(engine, "agent-platform", plan)
    engine.dispose()
    return path


@pytest.fixture
def source_url(filled_template: Path, tmp_path: Path) -> str:
    path = tmp_path / "source.db"
    shutil.copyfile(filled_template, path)
    return f"sqlite:///{path}"


def _rows(url: str) -> dict[str, list[tuple[object, ...]]]:
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


def test_sqlite_backup_restores_every_row_with_its_id(source_url: str, tmp_path: Path) -> None:
    before = _rows(source_url)
    assert sorted(before) == sorted(TABLES)
    assert all(before[table] for table in TABLES), {t: len(r) for t, r in before.items()}
    assert len(before["request_samples"]) == 3
    file = tmp_path / "store.jsonl.gz"
    written = backup(source_url, file)
    assert written.rows == {table: len(rows) for table, rows in before.items()}

    target = f"sqlite:///{tmp_path / 'restored.db'}"
    loaded = restore(target, file)
    assert loaded.rows == written.rows
    assert current_revision(target) == head_revision()
    after = _rows(target)
    for table in TABLES:
        assert after[table] == before[table], table


def test_restored_store_takes_new_runs_above_every_old_id(source_url: str, tmp_path: Path) -> None:
    source = make_engine(source_url)
    max_before = max(summary.run_id for summary in repository.list_runs(source))
    source.dispose()
    file = tmp_path / "store.jsonl.gz"
    backup(source_url, file)
    target = f"sqlite:///{tmp_path / 'restored.db'}"
    restore(target, file)
    engine = make_engine(target)
    new_id = repository.save_run(engine, full_run("after restore", "ef" * 32)).run_id
    # The deleted run was saved before the kept one, so the newest id is still in use.
    assert new_id == max_before + 1
    assert repository.get_run(engine, new_id).run.label == "after restore"
    engine.dispose()


def test_a_deleted_runs_id_is_not_handed_out_again_after_restore(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'source.db'}"
    upgrade(url)
    engine = make_engine(url)
    first = repository.save_run(engine, full_run("kept", "aa" * 32)).run_id
    gone = repository.save_run(engine, full_run("deleted", "bb" * 32)).run_id
    assert repository.delete_run(engine, gone)
    engine.dispose()
    file = tmp_path / "store.jsonl.gz"
    backup(url, file)
    target = f"sqlite:///{tmp_path / 'restored.db'}"
    restore(target, file)
    restored = make_engine(target)
    new_id = repository.save_run(restored, full_run("new", "cc" * 32)).run_id
    restored.dispose()
    assert (first, gone, new_id) == (1, 2, 3)


def test_restore_refuses_a_non_empty_database_unless_replace(
    source_url: str, tmp_path: Path
) -> None:
    file = tmp_path / "store.jsonl.gz"
    backup(source_url, file)
    target = f"sqlite:///{tmp_path / 'other.db'}"
    upgrade(target)
    engine = make_engine(target)
    repository.save_run(engine, full_run("in the way", "12" * 32))
    engine.dispose()
    with pytest.raises(StoreError, match=r"is not empty \(1 deployments, 1 runs.*--replace"):
        restore(target, file)
    assert len(_rows(target)["runs"]) == 1
    restore(target, file, replace=True)
    assert _rows(target) == _rows(source_url)


def test_restore_refuses_a_backup_from_a_newer_schema(source_url: str, tmp_path: Path) -> None:
    file = tmp_path / "store.jsonl.gz"
    backup(source_url, file)
    lines = gzip.decompress(file.read_bytes()).decode().splitlines()
    header = json.loads(lines[0])
    header["revision"] = "9999_from_the_future"
    newer = tmp_path / "newer.jsonl.gz"
    newer.write_bytes(gzip.compress("\n".join([json.dumps(header), *lines[1:]]).encode()))
    target = f"sqlite:///{tmp_path / 'restored.db'}"
    with pytest.raises(InputError, match=r"'9999_from_the_future'.*newer capplan"):
        restore(target, newer)
    not_gzip = tmp_path / "plain.json"
    not_gzip.write_text("{}", encoding="utf-8")
    with pytest.raises(InputError, match="not a capplan backup"):
        restore(target, not_gzip)


def test_a_backup_of_an_older_revision_is_migrated_up_after_restore(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade(url, "0001")
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO scenarios (id, name, yaml_text, created_at, updated_at) VALUES "
                "(7, 'old', 'name: old', '2025-01-02 03:04:05', '2025-01-02 03:04:05')"
            )
        )
    engine.dispose()
    file = tmp_path / "old.jsonl.gz"
    assert backup(url, file).revision == "0001"
    target = f"sqlite:///{tmp_path / 'restored.db'}"
    restore(target, file)
    assert current_revision(target) == head_revision()
    restored = make_engine(target)
    assert [(s.name, s.yaml_text) for s in scenarios.list_scenarios(restored)] == [
        ("old", "name: old")
    ]
    restored.dispose()


def test_cli_backup_and_restore(source_url: str, tmp_path: Path) -> None:
    file = tmp_path / "cli.jsonl.gz"
    made = runner.invoke(app, ["db", "backup", "--db", source_url, "--out", str(file), "--json"])
    assert made.exit_code == 0, made.output
    document = json.loads(made.stdout)
    assert document["rows"]["request_samples"] == 3
    target = f"sqlite:///{tmp_path / 'cli-restored.db'}"
    done = runner.invoke(app, ["db", "restore", str(file), "--db", target, "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["rows"] == document["rows"]
    again = runner.invoke(app, ["db", "restore", str(file), "--db", target])
    assert again.exit_code == 2
    assert "is not empty" in again.output and "--replace" in again.output
    assert _rows(target) == _rows(source_url)


# ---------------------------------------------------------------- Postgres


@pytest.mark.postgres
def test_sqlite_to_postgres_and_back(source_url: str, pg_stores: Stores, tmp_path: Path) -> None:
    before = _rows(source_url)
    file = tmp_path / "store.jsonl.gz"
    backup(source_url, file)
    pg_url = pg_stores.empty("backup_target")
    restore(pg_url, file)
    assert current_revision(pg_url) == head_revision()
    assert _rows(pg_url) == before
    pg: Engine = make_engine(pg_url)
    top = max(int(str(row[0])) for row in before["runs"])
    assert repository.save_run(pg, full_run("on postgres", "fe" * 32)).run_id == top + 1
    pg.dispose()
    back = tmp_path / "from-pg.jsonl.gz"
    backup(pg_url, back)
    target = f"sqlite:///{tmp_path / 'back.db'}"
    restore(target, back)
    assert _rows(target) == _rows(pg_url)
    assert len(_rows(target)["runs"]) == len(before["runs"]) + 1


@pytest.mark.postgres
def test_postgres_restore_with_replace_keeps_the_sequences_past_deleted_ids(
    pg_stores: Stores, tmp_path: Path
) -> None:
    source = pg_stores.migrated("backup_source")
    engine = make_engine(source)
    repository.save_run(engine, full_run("kept", "aa" * 32))
    gone = repository.save_run(engine, full_run("deleted", "bb" * 32)).run_id
    assert repository.delete_run(engine, gone)
    engine.dispose()
    file = tmp_path / "pg.jsonl.gz"
    backup(source, file)
    target = pg_stores.demo("backup_replace")
    with pytest.raises(StoreError, match="is not empty"):
        restore(target, file)
    restore(target, file, replace=True)
    assert _rows(target) == _rows(source)
    restored = make_engine(target)
    assert repository.save_run(restored, full_run("new", "cc" * 32)).run_id == gone + 1
    restored.dispose()


# ---------------------------------------------------------------- safety (both backends)


def _edit(file: Path, out: Path, change: Callable[[list[str]], list[str]]) -> Path:
    """A copy of a backup file with its lines changed."""
    lines = gzip.decompress(file.read_bytes()).decode().splitlines()
    out.write_bytes(gzip.compress("\n".join(change(lines)).encode()))
    return out


def _set_value(lines: list[str], table: str, column: str, value: object, nth: int = 0) -> list[str]:
    """The lines with `column` of the nth `table` row set to value."""
    at = next(i for i, line in enumerate(lines) if json.loads(line).get("table") == table)
    position = json.loads(lines[at])["columns"].index(column)
    row = json.loads(lines[at + 1 + nth])
    row["r"][position] = value
    return [*lines[: at + 1 + nth], json.dumps(row), *lines[at + 2 + nth :]]


def _old_backup(tmp_path: Path, *names: str) -> Path:
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


def _filled_target(stores: Stores) -> str:
    url = stores.migrated("backup_target")
    engine = make_engine(url)
    repository.save_run(engine, full_run("precious", "aa" * 32))
    engine.dispose()
    return url


def test_a_broken_backup_changes_nothing_in_the_target(stores: Stores, tmp_path: Path) -> None:
    head_file = tmp_path / "head.jsonl.gz"
    backup(_filled_target(stores), head_file)
    old_file = _old_backup(tmp_path, "old")
    broken = {
        "truncated head": _edit(head_file, tmp_path / "t1.jsonl.gz", lambda ls: ls[:-1]),
        "truncated old": _edit(old_file, tmp_path / "t2.jsonl.gz", lambda ls: ls[:-1]),
        "a row lost": _edit(head_file, tmp_path / "t3.jsonl.gz", lambda ls: [*ls[:-2], ls[-1]]),
    }
    target = _filled_target(stores)
    before = _rows(target)
    assert len(before["runs"]) == 1
    for why, file in broken.items():
        with pytest.raises(InputError, match="nothing was restored"):
            restore(target, file, replace=True)
        assert current_revision(target) == head_revision(), why
        assert _rows(target) == before, why
    new = stores.empty("backup_new")
    with pytest.raises(InputError, match="ends early"):
        restore(new, broken["truncated old"])
    assert current_revision(new) is None


def test_a_backup_the_database_refuses_changes_nothing(stores: Stores, tmp_path: Path) -> None:
    # Two scenarios named alike break the unique name only in the database, after the file
    # check: at an older revision (the staging load) and at head (the one load transaction).
    old_twins = _edit(
        _old_backup(tmp_path, "twin", "other"),
        tmp_path / "twins.jsonl.gz",
        lambda ls: _set_value(ls, "scenarios", "name", "twin", nth=1),
    )
    head_file = tmp_path / "head.jsonl.gz"
    backup(_filled_target(stores), head_file)
    target = _filled_target(stores)
    before = _rows(target)
    with pytest.raises(StoreError, match=r"revision 0001 cannot be migrated.*nothing was restored"):
        restore(target, old_twins, replace=True)
    assert _rows(target) == before
    assert current_revision(target) == head_revision()
    # A run line repeated under a new id collides on content_sha256 in the load transaction.
    dup = _edit(head_file, tmp_path / "dup.jsonl.gz", _duplicate_run)
    with pytest.raises(StoreError, match="nothing was restored"):
        restore(target, dup, replace=True)
    assert _rows(target) == before


def _duplicate_run(lines: list[str]) -> list[str]:
    at = next(i for i, line in enumerate(lines) if json.loads(line).get("table") == "runs")
    row = json.loads(lines[at + 1])
    row["r"][0] = 99
    end = json.loads(lines[-1])
    end["rows"]["runs"] += 1
    return [*lines[: at + 2], json.dumps(row), *lines[at + 2 : -1], json.dumps(end)]


def test_an_older_backup_replaces_a_filled_store(stores: Stores, tmp_path: Path) -> None:
    target = _filled_target(stores)
    restored = restore(target, _old_backup(tmp_path, "old"), replace=True)
    assert restored.revision == "0001"
    assert restored.rows["scenarios"] == 1 and restored.rows["runs"] == 0
    assert current_revision(target) == head_revision()
    after = _rows(target)
    assert [row[:2] for row in after["scenarios"]] == [(7, "old")]
    assert not after["runs"] and not after["deployments"]


def test_a_backup_is_one_snapshot_while_a_run_is_stored(
    stores: Stores, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A short busy timeout: a backup holding SQLite's write lock would fail the writer quickly.
    monkeypatch.setenv("CAPPLAN_SQLITE_BUSY_TIMEOUT_MS", "200")
    source = _filled_target(stores)
    before = _rows(source)
    writer = make_engine(source)
    stored: list[int] = []
    dump = backup_module._dump_table

    def dump_then_write(connection: Connection, table: Table, out: IO[str]) -> int:
        count = dump(connection, table, out)
        if table.name == "runs":  # another session stores a run between runs and its levels
            stored.append(repository.save_run(writer, full_run("mid-backup", "bb" * 32)).run_id)
        return count

    monkeypatch.setattr(backup_module, "_dump_table", dump_then_write)
    file = tmp_path / "live.jsonl.gz"
    written = backup(source, file)
    writer.dispose()
    assert len(stored) == 1
    assert written.rows == {table: len(rows) for table, rows in before.items()}
    assert len(_rows(source)["runs"]) == 2
    target = stores.empty("backup_snapshot")
    assert restore(target, file).rows == written.rows
    assert _rows(target) == before


@pytest.mark.parametrize(
    "case",
    [
        ("deployments", "engine", "e" * 65, "65 characters, longer than the column's 64"),
        ("runs", "notes", "said \x00 oops", "holds a NUL character"),
        ("runs", "imported_at", "yesterday", "is not a date and time"),
    ],
)
def test_a_value_the_store_refuses_is_named_and_nothing_is_restored(
    stores: Stores, tmp_path: Path, case: tuple[str, str, str, str]
) -> None:
    table, column, value, why = case
    file = tmp_path / "store.jsonl.gz"
    backup(_filled_target(stores), file)
    bad = _edit(file, tmp_path / "bad.jsonl.gz", lambda ls: _set_value(ls, table, column, value))
    target = stores.empty("backup_refused")
    with pytest.raises(InputError, match=rf"{table} row id 1, column {column}: the value .*{why}"):
        restore(target, bad)
    assert current_revision(target) is None


def test_a_number_postgres_refuses_names_its_table(stores: Stores, tmp_path: Path) -> None:
    file = tmp_path / "store.jsonl.gz"
    backup(_filled_target(stores), file)
    huge = _edit(
        file,
        tmp_path / "huge.jsonl.gz",
        lambda ls: _set_value(ls, "load_levels", "position", 2**40),
    )
    target = stores.migrated("backup_huge")
    if backend() == "postgres":  # INTEGER is 32 bits there; SQLite stores any 64-bit number
        with pytest.raises(StoreError, match=r"refused a load_levels row with id between 1 and"):
            restore(target, huge)
        assert all(not rows for rows in _rows(target).values())
    else:
        assert restore(target, huge).rows["load_levels"] > 0
        assert _rows(target)["load_levels"][0][2] == 2**40
