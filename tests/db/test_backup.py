"""Backup and restore of the whole store on real databases: a demo store with request samples,
a saved scenario and a recorded plan round-trips row for row (ids kept), later inserts get new
ids, and bad targets are refused with a clear error (bad files: tests/db/test_restore.py).
The Postgres cases (marker `postgres`) run when CAPPLAN_TEST_PG_URL names an admin URL
(tests/stores.py)."""

from __future__ import annotations

import getpass
import gzip
import json
import shutil
from pathlib import Path
from typing import IO

import pytest
from sqlalchemy import Connection, Engine, Table, create_engine, text
from typer.testing import CliRunner

from cli import app
from db import backup as backup_module
from db import repository, run_lists, run_reads, scenarios, team_roles
from db.backup import backup
from db.engine import current_revision, head_revision, make_engine, upgrade
from db.prices import list_prices
from db.restore import restore
from db.seed import load_demo_data
from errors import InputError, StoreError
from planner.analysis.capacity import make_plan
from planner.inputs.scenario import scenario_from_yaml
from planner.physics import catalog
from planner.physics.catalog import CONFIG_DIR
from team.roles import SYSTEM, Role
from tests.db.backup_files import filled_target, restored_as, table_rows
from tests.db.conftest import full_run
from tests.stores import Stores
from workflows import history, models, planning

ROOT = Path(__file__).resolve().parents[2]
AGENT_YAML = (ROOT / "docs" / "scenarios" / "agent-platform.yaml").read_text(encoding="utf-8")
TABLES = [
    "deployments",
    "runs",
    "load_levels",
    "level_metrics",
    "request_samples",
    "prices",
    "model_configs",
    "scenarios",
    "plan_records",
    "audit_log",
    "team_roles",
]
runner = CliRunner()


@pytest.fixture(scope="module")
def filled_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Demo runs and prices, a probe-like run with samples, a deleted run, a scenario, a plan."""
    path = tmp_path_factory.mktemp("filled") / "capplan.db"
    url = f"sqlite:///{path}"
    upgrade(url)
    engine = make_engine(url)
    load_demo_data(engine, actor=SYSTEM)
    doomed = repository.save_run(engine, full_run("deleted later", "cd" * 32), actor=SYSTEM).run_id
    repository.save_run(engine, full_run(), actor=SYSTEM)
    assert repository.delete_run(engine, doomed, actor=SYSTEM)
    scenarios.save_scenario(engine, "agent-platform", AGENT_YAML, actor=SYSTEM)
    config = (CONFIG_DIR / "Qwen--Qwen3-8B_config.json").read_text(encoding="utf-8")
    models.add_config(
        engine, json.loads(config), "acme/config.json", name="acme/Support-8B", actor=SYSTEM
    )
    scenario = scenario_from_yaml(AGENT_YAML, "agent-platform")
    plan = make_plan(scenario, planning.load_curves(engine), list_prices(engine))
    history.record_plan(engine, "agent-platform", plan, actor=SYSTEM)
    team_roles.set_role(engine, "ada@example.com", Role.PLANNER, actor=SYSTEM)
    engine.dispose()
    catalog.forget_added()  # the store keeps it; the per-process catalog must not
    return path


@pytest.fixture
def source_url(filled_template: Path, tmp_path: Path) -> str:
    path = tmp_path / "source.db"
    shutil.copyfile(filled_template, path)
    return f"sqlite:///{path}"


def test_sqlite_backup_restores_every_row_with_its_id(source_url: str, tmp_path: Path) -> None:
    before = table_rows(source_url)
    assert sorted(before) == sorted(TABLES)
    assert all(before[table] for table in TABLES), {t: len(r) for t, r in before.items()}
    assert len(before["request_samples"]) == 6  # 3 of the run in the trash
    file = tmp_path / "store.jsonl.gz"
    written = backup(source_url, file)
    assert written.rows == {table: len(rows) for table, rows in before.items()}

    target = f"sqlite:///{tmp_path / 'restored.db'}"
    loaded = restore(target, file, actor=SYSTEM)
    assert loaded.rows == written.rows
    assert current_revision(target) == head_revision()
    after = table_rows(target)
    for table in TABLES:
        if table == "audit_log":  # the trail goes on: the restore itself is its last entry
            assert after[table][:-1] == before[table]
            assert after[table][-1][5] == "restored", after[table][-1]
            continue
        assert after[table] == before[table], table


def test_restored_store_takes_new_runs_above_every_old_id(source_url: str, tmp_path: Path) -> None:
    source = make_engine(source_url)
    max_before = max(summary.run_id for summary in run_lists.list_runs(source))
    source.dispose()
    file = tmp_path / "store.jsonl.gz"
    backup(source_url, file)
    target = f"sqlite:///{tmp_path / 'restored.db'}"
    restore(target, file, actor=SYSTEM)
    engine = make_engine(target)
    new_id = repository.save_run(engine, full_run("after restore", "ef" * 32), actor=SYSTEM).run_id
    # The deleted run was saved before the kept one, so the newest id is still in use.
    assert new_id == max_before + 1
    assert run_reads.get_run(engine, new_id).run.label == "after restore"
    engine.dispose()


def test_a_deleted_runs_id_is_not_handed_out_again_after_restore(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'source.db'}"
    upgrade(url)
    engine = make_engine(url)
    first = repository.save_run(engine, full_run("kept", "aa" * 32), actor=SYSTEM).run_id
    gone = repository.save_run(engine, full_run("deleted", "bb" * 32), actor=SYSTEM).run_id
    assert repository.delete_run(engine, gone, actor=SYSTEM)
    engine.dispose()
    file = tmp_path / "store.jsonl.gz"
    backup(url, file)
    target = f"sqlite:///{tmp_path / 'restored.db'}"
    restore(target, file, actor=SYSTEM)
    restored = make_engine(target)
    new_id = repository.save_run(restored, full_run("new", "cc" * 32), actor=SYSTEM).run_id
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
    repository.save_run(engine, full_run("in the way", "12" * 32), actor=SYSTEM)
    engine.dispose()
    with pytest.raises(
        StoreError, match=r"is not empty \(1 audit_log, 1 deployments, 1 runs.*--replace"
    ):
        restore(target, file, actor=SYSTEM)
    assert len(table_rows(target)["runs"]) == 1
    restore(target, file, replace=True, actor=SYSTEM)
    assert restored_as(table_rows(target), table_rows(source_url))


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
        restore(target, newer, actor=SYSTEM)
    not_gzip = tmp_path / "plain.json"
    not_gzip.write_text("{}", encoding="utf-8")
    with pytest.raises(InputError, match="not a capplan backup"):
        restore(target, not_gzip, actor=SYSTEM)


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
    restore(target, file, actor=SYSTEM)
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
    assert document["rows"]["request_samples"] == 6  # 3 of the run in the trash
    target = f"sqlite:///{tmp_path / 'cli-restored.db'}"
    done = runner.invoke(app, ["db", "restore", str(file), "--db", target, "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["rows"] == document["rows"]
    # The restored store has roles now (ada is a planner): this login has none there, so it is a
    # viewer, refused; as an operator (CAPPLAN_OPERATORS) it is told the store is not empty.
    refused = runner.invoke(app, ["db", "restore", str(file), "--db", target, "--replace"])
    assert refused.exit_code == 2
    assert "is a viewer" in refused.output and "only an admin may restore backups" in refused.output
    operator = {"CAPPLAN_OPERATORS": getpass.getuser()}
    again = runner.invoke(app, ["db", "restore", str(file), "--db", target], env=operator)
    assert again.exit_code == 2
    assert "is not empty" in again.output and "--replace" in again.output
    assert restored_as(table_rows(target), table_rows(source_url))


# ---------------------------------------------------------------- Postgres


@pytest.mark.postgres
def test_sqlite_to_postgres_and_back(source_url: str, pg_stores: Stores, tmp_path: Path) -> None:
    before = table_rows(source_url)
    file = tmp_path / "store.jsonl.gz"
    backup(source_url, file)
    pg_url = pg_stores.empty("backup_target")
    restore(pg_url, file, actor=SYSTEM)
    assert current_revision(pg_url) == head_revision()
    assert restored_as(table_rows(pg_url), before)
    pg: Engine = make_engine(pg_url)
    top = max(int(str(row[0])) for row in before["runs"])
    assert (
        repository.save_run(pg, full_run("on postgres", "fe" * 32), actor=SYSTEM).run_id == top + 1
    )
    pg.dispose()
    back = tmp_path / "from-pg.jsonl.gz"
    backup(pg_url, back)
    target = f"sqlite:///{tmp_path / 'back.db'}"
    restore(target, back, actor=SYSTEM)
    assert restored_as(table_rows(target), table_rows(pg_url))
    assert len(table_rows(target)["runs"]) == len(before["runs"]) + 1


@pytest.mark.postgres
def test_postgres_restore_with_replace_keeps_the_sequences_past_deleted_ids(
    pg_stores: Stores, tmp_path: Path
) -> None:
    source = pg_stores.migrated("backup_source")
    engine = make_engine(source)
    repository.save_run(engine, full_run("kept", "aa" * 32), actor=SYSTEM)
    gone = repository.save_run(engine, full_run("deleted", "bb" * 32), actor=SYSTEM).run_id
    assert repository.delete_run(engine, gone, actor=SYSTEM)
    engine.dispose()
    file = tmp_path / "pg.jsonl.gz"
    backup(source, file)
    target = pg_stores.demo("backup_replace")
    with pytest.raises(StoreError, match="is not empty"):
        restore(target, file, actor=SYSTEM)
    restore(target, file, replace=True, actor=SYSTEM)
    assert restored_as(table_rows(target), table_rows(source))
    restored = make_engine(target)
    assert (
        repository.save_run(restored, full_run("new", "cc" * 32), actor=SYSTEM).run_id == gone + 1
    )
    restored.dispose()


def test_a_backup_is_one_snapshot_while_a_run_is_stored(
    stores: Stores, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A short busy timeout: a backup holding SQLite's write lock would fail the writer quickly.
    monkeypatch.setenv("CAPPLAN_SQLITE_BUSY_TIMEOUT_MS", "200")
    source = filled_target(stores)
    before = table_rows(source)
    writer = make_engine(source)
    stored: list[int] = []
    dump = backup_module._dump_table

    def dump_then_write(connection: Connection, table: Table, out: IO[str]) -> int:
        count = dump(connection, table, out)
        if table.name == "runs":  # another session stores a run between runs and its levels
            stored.append(
                repository.save_run(writer, full_run("mid-backup", "bb" * 32), actor=SYSTEM).run_id
            )
        return count

    monkeypatch.setattr(backup_module, "_dump_table", dump_then_write)
    file = tmp_path / "live.jsonl.gz"
    written = backup(source, file)
    writer.dispose()
    assert len(stored) == 1
    assert written.rows == {table: len(rows) for table, rows in before.items()}
    assert len(table_rows(source)["runs"]) == 2
    target = stores.empty("backup_snapshot")
    assert restore(target, file, actor=SYSTEM).rows == written.rows
    assert restored_as(table_rows(target), before)


def test_backup_refuses_to_write_over_the_store_it_backs_up(tmp_path: Path) -> None:
    file = tmp_path / "live.db"
    url = f"sqlite:///{file}"
    upgrade(url)
    before = file.read_bytes()
    for target in (file, tmp_path / "live.db-wal", tmp_path / "." / "live.db"):
        with pytest.raises(InputError, match="would replace the live store"):
            backup(url, target)
    assert file.read_bytes() == before
    assert backup_module.store_files("postgresql+psycopg://u@h/db") == ()
    assert backup_module.store_files("sqlite://") == ()
