"""The store as the shells use it: which store (its URL, shown redacted), opening one (schema
brought up to date, demo data in an empty app store), the runs, prices and saved scenarios it
holds, and its maintenance (backup, restore, demo data). The CLI and the app call these and
never db/ (tests/test_layering.py): this list is all of the store a shell may touch.

This module loads SQLAlchemy: the CLI imports it inside the commands that open a store, so its
light commands (`--help`) stay light.
"""

from __future__ import annotations

from db.backup import BackupSummary, backup, store_files
from db.engine import Engine, ensure_schema, make_engine, redact, resolve_db_url, upgrade
from db.prices import replace_prices
from db.repository import delete_run
from db.restore import restore
from db.run_lists import (
    RunChoices,
    RunFilter,
    RunPage,
    RunSummary,
    curve_workloads,
    list_runs,
    model_names,
    run_filter_choices,
    run_page,
)
from db.run_reads import StoredRun, get_run, load_runs
from db.scenarios import (
    PlanRecord,
    ScenarioExistsError,
    ScenarioRecord,
    delete_scenario,
    get_scenario,
    list_scenarios,
    plan_history,
    save_scenario,
)
from db.seed import DemoLoadResult, ensure_demo_data, load_demo_data
from workflows.team import purge_due

__all__ = [
    "BackupSummary",
    "DemoLoadResult",
    "Engine",
    "PlanRecord",
    "RunChoices",
    "RunFilter",
    "RunPage",
    "RunSummary",
    "ScenarioExistsError",
    "ScenarioRecord",
    "StoredRun",
    "backup",
    "curve_workloads",
    "delete_run",
    "delete_scenario",
    "ensure_demo_data",
    "get_run",
    "get_scenario",
    "list_runs",
    "list_scenarios",
    "load_demo_data",
    "load_runs",
    "model_names",
    "open_app_store",
    "open_store",
    "plan_history",
    "redact",
    "replace_prices",
    "resolve_db_url",
    "restore",
    "run_filter_choices",
    "run_page",
    "save_scenario",
    "store_files",
    "upgrade",
]


def open_store(url: str) -> Engine:
    """The store at url, its schema brought up to date first (StoreError says why not).

    A store already at this capplan's revision is only read (ensure_schema): an unconditional
    Alembic upgrade takes SQLite's write lock, so a command opening the store queued behind
    another process's import and gave up after the busy timeout (1 of 10 racing imports in CI).
    """
    ensure_schema(url)
    return make_engine(url)


def open_app_store(url: str) -> Engine:
    """The app's store: opened as open_store, the demo data loaded when it holds no run yet,
    and what has been in the trash past its time purged (recorded)."""
    engine = open_store(url)
    ensure_demo_data(engine)
    purge_due(engine)
    return engine
