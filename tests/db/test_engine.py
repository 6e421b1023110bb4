"""Engine factory, URL handling and transactions on the backend under test (SQLite locking
behaviour on SQLite files only)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from db.engine import (
    DEFAULT_DB_URL,
    current_revision,
    ensure_schema,
    head_revision,
    make_engine,
    redact,
    resolve_db_url,
    session_scope,
)
from db.repository import save_runs
from db.run_lists import count_runs, list_runs
from errors import InputError, StoreError
from measurements.importers import import_path
from team.roles import SYSTEM
from tests.stores import Stores, backend, query, row_counts
from workflows.store import open_store

FIXTURES = Path(__file__).parents[1] / "fixtures"


def test_cli_value_beats_environment_beats_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CAPPLAN_DB", raising=False)
    assert resolve_db_url(None) == DEFAULT_DB_URL == "sqlite:///data/capplan.db"
    monkeypatch.setenv("CAPPLAN_DB", "postgresql://team@db/capplan")
    assert resolve_db_url(None) == "postgresql://team@db/capplan"
    assert resolve_db_url("sqlite:///cli.db") == "sqlite:///cli.db"


def test_a_plain_path_means_a_sqlite_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CAPPLAN_DB", raising=False)
    assert resolve_db_url("/tmp/runs.db") == "sqlite:////tmp/runs.db"
    assert resolve_db_url("team/runs.db") == "sqlite:///team/runs.db"
    monkeypatch.setenv("CAPPLAN_DB", "shared.db")
    assert resolve_db_url(None) == "sqlite:///shared.db"


def test_blank_values_count_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAPPLAN_DB", "  ")
    assert resolve_db_url("") == DEFAULT_DB_URL


def test_redact_hides_the_password_and_keeps_the_rest() -> None:
    shown = redact("postgresql+psycopg://alice:s3cr%40t@db.example:5432/capplan")
    assert "s3cr" not in shown
    assert shown == "postgresql+psycopg://alice:***@db.example:5432/capplan"
    assert redact("sqlite:///data/capplan.db") == "sqlite:///data/capplan.db"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql+psycopg://capplan:hunter2@secret@db.example/capplan",
            "postgresql+psycopg://capplan:***@db.example/capplan",
        ),
        (
            "postgresql+psycopg://capplan@db/capplan?password=hunter2&sslmode=require",
            "postgresql+psycopg://capplan@db/capplan?password=***&sslmode=require",
        ),
        (
            "postgresql+psycopg://db/capplan?sslpassword=hunter2&sslkey=/k/hunter2.pem",
            "postgresql+psycopg://db/capplan?sslpassword=***&sslkey=***",
        ),
        ("postgresql+psycopg://capplan@db/capplan", "postgresql+psycopg://capplan@db/capplan"),
    ],
)
def test_redact_hides_passwords_with_an_at_sign_or_in_the_query(url: str, shown: str) -> None:
    assert redact(url) == shown
    assert "hunter2" not in redact(url)


def test_redact_hides_the_password_of_an_unparseable_url() -> None:
    shown = redact("not a url://bob:hunter2@host")
    assert "hunter2" not in shown
    assert "bob" in shown


@pytest.mark.sqlite_only
def test_make_engine_creates_the_parent_folder(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "capplan.db"
    engine = make_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as connection:
            connection.execute(text("select 1"))
    finally:
        engine.dispose()
    assert path.is_file()


@pytest.mark.sqlite_only
def test_sqlite_pragmas_are_set_on_every_connection(engine: Engine) -> None:
    with engine.connect() as connection:
        pragmas = {
            name: connection.exec_driver_sql(f"PRAGMA {name}").scalar()
            for name in ("journal_mode", "foreign_keys", "busy_timeout", "synchronous")
        }
    # synchronous: 1 is NORMAL in SQLite's numbering.
    assert pragmas == {
        "journal_mode": "wal",
        "foreign_keys": 1,
        "busy_timeout": 5000,
        "synchronous": 1,
    }


@pytest.mark.sqlite_only
def test_write_transaction_takes_the_write_lock_at_begin(engine: Engine, db_path: Path) -> None:
    other = sqlite3.connect(db_path, timeout=0, isolation_level=None)
    try:
        with session_scope(engine) as session:
            session.execute(text("select count(*) from runs"))  # a read only, yet the lock is held
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("BEGIN IMMEDIATE")
        other.execute("BEGIN IMMEDIATE")  # released at commit
        other.execute("ROLLBACK")
    finally:
        other.close()


@pytest.mark.sqlite_only
def test_read_transaction_does_not_block_a_writer(engine: Engine, db_path: Path) -> None:
    other = sqlite3.connect(db_path, timeout=0, isolation_level=None)
    try:
        with session_scope(engine, write=False) as session:
            session.execute(text("select count(*) from runs"))
            other.execute("BEGIN IMMEDIATE")
            other.execute("ROLLBACK")
    finally:
        other.close()


@pytest.mark.sqlite_only
def test_the_schema_check_reads_past_a_writer_holding_the_lock(
    db_url: str, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every command checks the schema first; it took the write lock (BEGIN IMMEDIATE, and an
    Alembic upgrade at head) and gave up after the busy timeout while another process's long
    import held it (2 of 10, then 1 of 10 queued imports failed so in CI)."""
    monkeypatch.setenv("CAPPLAN_SQLITE_BUSY_TIMEOUT_MS", "50")
    other = sqlite3.connect(db_path, timeout=0, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        assert current_revision(db_url) == head_revision()
        ensure_schema(db_url)
        open_store(db_url).dispose()  # what every command and the app do first
        other.execute("ROLLBACK")
    finally:
        other.close()


def test_session_scope_rolls_back_on_error(engine: Engine, db_url: str) -> None:
    class InjectedError(RuntimeError):
        pass

    with pytest.raises(InjectedError), session_scope(engine) as session:
        session.execute(
            text(
                "insert into scenarios (name, yaml_text, created_at, updated_at) "
                "values ('x', 'y', '2025-01-01', '2025-01-01')"
            )
        )
        raise InjectedError
    assert query(db_url, "select count(*) from scenarios") == [(0,)]


def test_missing_schema_is_a_store_error_that_says_what_to_run(stores: Stores) -> None:
    url = stores.empty()
    engine = make_engine(url)
    try:
        with pytest.raises(StoreError, match="capplan db upgrade"):
            list_runs(engine)
    finally:
        engine.dispose()


def test_concurrent_writers_from_separate_engines_all_succeed(db_url: str) -> None:
    # With deferred BEGIN, a reader-turned-writer fails at once with "database is locked";
    # BEGIN IMMEDIATE makes the others wait on busy_timeout instead.
    from concurrent.futures import ThreadPoolExecutor

    from db.repository import save_run
    from tests.db.conftest import full_run

    def writer(worker: int) -> list[bool]:
        own = make_engine(db_url)
        try:
            return [
                save_run(own, full_run(f"{worker}-{i}", None), actor=SYSTEM).created
                for i in range(5)
            ]
        finally:
            own.dispose()

    with ThreadPoolExecutor(max_workers=4) as pool:
        created = [flag for flags in pool.map(writer, range(4)) for flag in flags]
    assert created == [True] * 20
    assert row_counts(db_url)["runs"] == 20


def test_a_number_too_large_for_the_store_is_an_input_error_and_nothing_is_kept(
    stores: Stores,
) -> None:
    engine = make_engine(stores.migrated())
    (run,) = import_path(FIXTURES / "vllm-cpu-real" / "c8.json").runs
    level = run.levels[0].model_copy(update={"requests_sent": 2**63})
    huge = run.model_copy(update={"levels": (level,), "source_sha256": "f" * 64})
    with pytest.raises(InputError, match="too large for the store"):
        save_runs(engine, [run, huge], actor=SYSTEM)
    assert count_runs(engine) == 0


def test_the_store_under_test_is_on_the_backend_asked_for(engine: Engine) -> None:
    # CI's second pass must really store into PostgreSQL, never fall back to SQLite unseen.
    expected = {"sqlite": "sqlite", "postgres": "postgresql"}[backend()]
    with engine.connect() as connection:
        assert connection.dialect.name == expected
        if expected == "postgresql":
            assert connection.exec_driver_sql("select 1").scalar() == 1
