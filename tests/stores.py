"""Test stores on the backend under test: SQLite files (default) or databases on a real
PostgreSQL server (CAPPLAN_TEST_DB=postgres, admin URL in CAPPLAN_TEST_PG_URL).

Every test gets a database of its own, made from a template migrated (and, for demo stores,
seeded) once per session: a file copy on SQLite, CREATE DATABASE ... TEMPLATE on Postgres.
"""

from __future__ import annotations

import itertools
import os
import secrets
import shutil
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, inspect, make_url, text

from db.engine import make_engine, upgrade
from db.seed import load_demo_data
from team.roles import SYSTEM

BACKEND_ENV = "CAPPLAN_TEST_DB"
PG_URL_ENV = "CAPPLAN_TEST_PG_URL"
REQUIRE_PG_ENV = "CAPPLAN_REQUIRE_POSTGRES"
BACKENDS = ("sqlite", "postgres")
RUN_TABLES = ("deployments", "runs", "load_levels", "level_metrics", "request_samples")


def backend() -> str:
    """The backend this test session stores into."""
    chosen = os.environ.get(BACKEND_ENV, "sqlite").strip().lower() or "sqlite"
    if chosen not in BACKENDS:
        raise RuntimeError(f"{BACKEND_ENV}={chosen!r}: use one of {', '.join(BACKENDS)}")
    return chosen


def pg_admin_url() -> str | None:
    """The Postgres admin URL (a role that may CREATE DATABASE), or None when none is given."""
    return os.environ.get(PG_URL_ENV, "").strip() or None


def row_counts(url: str, tables: tuple[str, ...] = RUN_TABLES) -> dict[str, int]:
    """Rows per table, read on a plain engine (none of capplan's session code involved)."""
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return {
                table: connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
                for table in tables
            }
    finally:
        engine.dispose()


def table_names(url: str) -> set[str]:
    """The tables in the database, by the dialect's own catalog."""
    engine = create_engine(url)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def column_names(url: str, table: str) -> list[str]:
    """The columns of a table, or [] when it does not exist."""
    engine = create_engine(url)
    try:
        inspector = inspect(engine)
        if table not in inspector.get_table_names():
            return []
        return [column["name"] for column in inspector.get_columns(table)]
    finally:
        engine.dispose()


def query(url: str, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    """Run one SQL statement on a plain engine and commit; the rows it returned, if any."""
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            result = connection.execute(text(sql), params)
            return [tuple(row) for row in result] if result.returns_rows else []
    finally:
        engine.dispose()


class Stores:
    """Makes databases for tests on one backend and removes them at the end of the session."""

    def __init__(self, kind: str, folder: Path, admin_url: str | None) -> None:
        if kind == "postgres" and admin_url is None:
            raise RuntimeError(
                f"{BACKEND_ENV}=postgres needs {PG_URL_ENV} (start one: scripts/start-postgres.sh)"
            )
        self.kind = kind
        self._folder = folder
        self._admin_url = admin_url
        self._names = itertools.count(1)
        # Unique per maker: two makers in one process (stores, pg_stores) and a later process
        # that reuses this pid must never pick a name that exists.
        self._token = secrets.token_hex(3)
        self._made: list[str] = []
        self._templates: dict[str, str] = {}

    def empty(self, hint: str = "capplan") -> str:
        """URL of a new database with no tables."""
        return self._create(hint, template=None)

    def migrated(self, hint: str = "capplan") -> str:
        """URL of a new database at the newest schema revision."""
        return self._create(hint, template=self._template("migrated", seed=False))

    def demo(self, hint: str = "capplan") -> str:
        """URL of a new migrated database holding the demo runs and prices."""
        return self._create(hint, template=self._template("demo", seed=True))

    def close(self) -> None:
        """Drop every database this session made (Postgres; SQLite files go with tmp)."""
        if self.kind != "postgres":
            return
        admin = self._admin_engine()
        try:
            with admin.connect() as connection:
                for name in [*self._made, *self._templates.values()]:
                    connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        finally:
            admin.dispose()

    def _template(self, kind: str, *, seed: bool) -> str:
        if kind not in self._templates:
            name = self._new_name(f"tpl_{kind}")
            url = self._make(name, template=None)
            upgrade(url)
            if seed:
                engine = make_engine(url)
                load_demo_data(engine, actor=SYSTEM)
                engine.dispose()  # a template must have no open connections (and closes WAL)
            self._templates[kind] = name
        return self._templates[kind]

    def _create(self, hint: str, template: str | None) -> str:
        name = self._new_name(hint)
        self._made.append(name)
        return self._make(name, template)

    def _new_name(self, hint: str) -> str:
        safe = "".join(c if c.isalnum() else "_" for c in hint.lower())[:20]
        return f"capplan_t{os.getpid()}_{self._token}_{next(self._names)}_{safe}"

    def _make(self, name: str, template: str | None) -> str:
        if self.kind == "sqlite":
            path = self._folder / f"{name}.db"
            if template is not None:
                shutil.copyfile(self._folder / f"{template}.db", path)
            return f"sqlite:///{path}"
        admin = self._admin_engine()
        try:
            with admin.connect() as connection:
                clause = f' TEMPLATE "{template}"' if template else ""
                connection.execute(text(f'CREATE DATABASE "{name}"{clause}'))
        finally:
            admin.dispose()
        assert self._admin_url is not None
        return make_url(self._admin_url).set(database=name).render_as_string(hide_password=False)

    def _admin_engine(self) -> Engine:
        assert self._admin_url is not None
        return create_engine(self._admin_url, isolation_level="AUTOCOMMIT")
