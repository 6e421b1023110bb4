"""Session-wide store fixtures on the backend under test (tests/stores.py): SQLite files by
default, databases on a real PostgreSQL server with CAPPLAN_TEST_DB=postgres."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.stores import PG_URL_ENV, REQUIRE_PG_ENV, Stores, backend, pg_admin_url
from workflows.result_cache import CACHE_ENV

TESTS = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    """Calibrations and fits kept across processes (workflows.result_cache) go to a
    folder of this run's (each xdist worker its own), never the user's cache."""
    if CACHE_ENV not in os.environ:
        os.environ[CACHE_ENV] = tempfile.mkdtemp(prefix="capplan-test-cache-")


def pytest_report_header() -> str:
    """Say which database backend the suite stores into."""
    admin = pg_admin_url()
    return f"capplan store backend: {backend()}" + (f" (Postgres admin: {admin})" if admin else "")


STORE_FIXTURES = frozenset({"stores", "pg_stores"})
# The fast lane (`pytest -m "not slow"`, docs/testing.md) leaves out what takes seconds a test:
# the app through AppTest or a browser, real engines and servers, processes racing one store,
# fresh interpreters, the CLI end to end, fuzzing, PDF and XLSX rendering. CI runs everything.
SLOW_FOLDERS = ("ui", "browser", "integration")
SLOW_FILES = frozenset(
    {
        "test_cli.py",
        "test_fuzz_formats.py",
        "test_concurrency.py",
        "test_migrations.py",
        "test_cli_startup.py",
        "test_safety.py",
        "test_sim_server.py",
        "test_engines.py",
        "test_server_facts.py",
        "test_scenario_curves.py",
        "test_scenarios_migration.py",
        "test_scale_queries.py",
    }
)
SLOW_NAME_WORDS = ("pdf", "xlsx")
# What owns the machine while it runs and so runs on its own, after the rest ran on every core
# (scripts/test.sh: `-m "not alone" -n N`, then `-m alone`): a real vLLM engine spin-waits on
# every core; chromium drives the app against a server; processes race one store; a hostile
# server is timed out by the wall clock.
ALONE_FOLDERS = ("browser", "integration")
ALONE_FILES = frozenset({"test_concurrency.py", "test_probe_hostile.py", "test_cli_startup.py"})
# The app's pages sit on workflows.store like the CLI: on the Postgres pass these files drive them
# over a Postgres store (every page, uploads, scenarios and their history, a browser session);
# the other page tests store through the same calls and run on the SQLite pass only.
POSTGRES_APP_FILES = frozenset(
    {
        "ui/test_app.py",
        "ui/test_upload.py",
        "ui/test_scenarios_page.py",
        "ui/test_plan_session.py",
        "browser/test_scenarios_page.py",
        "browser/test_app_browser.py",
    }
)


def _is_slow(item: pytest.Item) -> bool:
    path = Path(str(item.fspath))
    parts = path.relative_to(TESTS).parts
    return (
        parts[0] in SLOW_FOLDERS
        or path.name in SLOW_FILES
        or any(word in item.name.lower() for word in SLOW_NAME_WORDS)
    )


def _is_alone(item: pytest.Item) -> bool:
    parts = Path(str(item.fspath)).relative_to(TESTS).parts
    return parts[0] in ALONE_FOLDERS or parts[-1] in ALONE_FILES


def _page_test_left_to_sqlite(item: pytest.Item) -> bool:
    parts = Path(str(item.fspath)).relative_to(TESTS).parts
    return parts[0] in ("ui", "browser") and "/".join(parts) not in POSTGRES_APP_FILES


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On the Postgres pass, run only the tests that store something (the rest never touch a
    database, so the SQLite pass already covers them) and skip SQLite's own behaviour; skip
    Postgres tests where no server is given."""
    on_postgres = backend() == "postgres"
    no_server = pg_admin_url() is None
    required = os.environ.get(REQUIRE_PG_ENV) == "1"
    for item in items:
        if _is_slow(item) and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)
        if _is_alone(item) and not item.get_closest_marker("alone"):
            item.add_marker(pytest.mark.alone)
        if on_postgres and _page_test_left_to_sqlite(item):
            item.add_marker(
                pytest.mark.skip(
                    reason="a page over the store: Postgres under the pages is covered by "
                    + ", ".join(sorted(POSTGRES_APP_FILES))
                )
            )
        if on_postgres and item.get_closest_marker("sqlite_only"):
            item.add_marker(pytest.mark.skip(reason="SQLite behaviour; covered by the SQLite pass"))
        uses_store = STORE_FIXTURES & set(getattr(item, "fixturenames", ()))
        if on_postgres and not uses_store:
            item.add_marker(pytest.mark.skip(reason="uses no store; covered by the SQLite pass"))
        if no_server and item.get_closest_marker("postgres") and not required:
            item.add_marker(pytest.mark.skip(reason=f"no PostgreSQL server: set {PG_URL_ENV}"))


@pytest.fixture(scope="session")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stores]:
    """The session's database maker on the backend under test."""
    made = Stores(backend(), tmp_path_factory.mktemp("stores"), pg_admin_url())
    yield made
    made.close()


@pytest.fixture(scope="session")
def pg_stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stores]:
    """A database maker on the PostgreSQL server whatever the backend under test."""
    if pg_admin_url() is None:
        if os.environ.get(REQUIRE_PG_ENV) == "1":
            pytest.fail(f"{REQUIRE_PG_ENV}=1 but {PG_URL_ENV} is not set")
        pytest.skip(f"no PostgreSQL server: set {PG_URL_ENV}")
    made = Stores("postgres", tmp_path_factory.mktemp("pg-stores"), pg_admin_url())
    yield made
    made.close()
