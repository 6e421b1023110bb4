"""Migration 0002 (plan history) upgrades a 0001 store that holds data, and downgrades again."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from db import repository
from db.engine import current_revision, downgrade, make_engine, upgrade
from db.seed import load_demo_data
from planner.capacity import make_plan
from planner.scenario import scenario_from_yaml
from tests.db.conftest import full_run, row_counts

ROOT = Path(__file__).resolve().parents[2]
SEED_YAML = (ROOT / "docs" / "scenarios" / "seed-article-h100.yaml").read_text(encoding="utf-8")


def _columns(path: Path, table: str) -> list[str]:
    with sqlite3.connect(path) as connection:
        return [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]


def test_upgrade_from_0001_keeps_runs_and_scenarios_and_adds_plan_history(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    url = f"sqlite:///{path}"
    assert upgrade(url, "0001") == "0001"
    engine = make_engine(url)
    try:
        # Only 0001 tables are touched, as a 0001 capplan would have written them.
        stored = repository.save_run(engine, full_run())
        repository.save_scenario(engine, "seed-article-h100", SEED_YAML)
        before = row_counts(path)
        assert _columns(path, "plan_records") == []

        assert upgrade(url) == current_revision(url) == "0002"
        assert (
            row_counts(path)
            == before
            == {
                "deployments": 1,
                "runs": 1,
                "load_levels": 2,
                "level_metrics": 5,
                "request_samples": 3,
            }
        )
        assert repository.get_run(engine, stored.run_id).run == full_run()
        assert repository.get_scenario(engine, "seed-article-h100").yaml_text == SEED_YAML
        assert "basis_run_ids" in _columns(path, "plan_records")
        assert repository.plan_history(engine, "seed-article-h100") == []
    finally:
        engine.dispose()


def test_downgrade_to_0001_drops_plan_history_only_and_upgrade_works_again(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.db"
    url = f"sqlite:///{path}"
    upgrade(url)
    engine = make_engine(url)
    try:
        load_demo_data(engine)
        repository.save_scenario(engine, "seed-article-h100", SEED_YAML)
        scenario = scenario_from_yaml(SEED_YAML, "seed")
        curves = repository._store_curves(engine)
        plan = make_plan(scenario, curves, repository.list_prices(engine))
        repository.record_plan(engine, "seed-article-h100", plan, curves=curves)
        runs = repository.count_runs(engine)
    finally:
        engine.dispose()
    assert downgrade(url, "0001") == "0001"
    assert _columns(path, "plan_records") == []
    with sqlite3.connect(path) as connection:
        names = connection.execute("SELECT name FROM scenarios").fetchall()
        assert names == [("seed-article-h100",)]
        assert connection.execute("SELECT count(*) FROM runs").fetchone() == (runs,)
    assert upgrade(url) == "0002"
    engine = make_engine(url)
    try:
        assert repository.plan_history(engine, "seed-article-h100") == []
    finally:
        engine.dispose()
