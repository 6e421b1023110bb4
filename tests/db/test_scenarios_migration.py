"""Migration 0002 (plan history) upgrades a 0001 store that holds data, and downgrades again."""

from __future__ import annotations

from pathlib import Path

from db import repository, run_lists, run_reads, scenarios
from db.engine import current_revision, downgrade, head_revision, make_engine, upgrade
from db.prices import list_prices
from db.seed import load_demo_data
from measurements.run_file import RunFile
from planner.analysis.capacity import make_plan
from planner.inputs.scenario import scenario_from_yaml
from team.roles import SYSTEM
from tests.db.conftest import full_run
from tests.stores import Stores, column_names, query, row_counts
from workflows import history, planning

ROOT = Path(__file__).resolve().parents[2]
SEED_YAML = (ROOT / "docs" / "scenarios" / "seed-article-h100.yaml").read_text(encoding="utf-8")


def _as_0001(run: RunFile) -> RunFile:
    """The run without what later migrations added (0005: the engine's KV-cache report)."""
    kv = ("kv_cache_tokens", "max_concurrency", "max_concurrency_at_tokens")
    return run.model_copy(update={"startup": run.startup.model_copy(update=dict.fromkeys(kv))})


def test_upgrade_from_0001_keeps_runs_and_scenarios_and_adds_plan_history(stores: Stores) -> None:
    url = stores.empty()
    upgrade(url)
    engine = make_engine(url)
    try:
        # Written by this capplan, then taken down to 0001 (the ORM writes every column of the
        # head schema, so it cannot write a 0001 store itself): what a 0001 store holds.
        stored = repository.save_run(engine, full_run(), actor=SYSTEM)
        scenarios.save_scenario(engine, "seed-article-h100", SEED_YAML, actor=SYSTEM)
        assert downgrade(url, "0001") == "0001"
        before = row_counts(url)
        assert column_names(url, "plan_records") == []

        assert upgrade(url) == current_revision(url) == head_revision()
        assert (
            row_counts(url)
            == before
            == {
                "deployments": 1,
                "runs": 1,
                "load_levels": 2,
                "level_metrics": 5,
                "request_samples": 3,
            }
        )
        assert run_reads.get_run(engine, stored.run_id).run == _as_0001(full_run())
        assert scenarios.get_scenario(engine, "seed-article-h100").yaml_text == SEED_YAML
        assert "basis_run_ids" in column_names(url, "plan_records")
        assert scenarios.plan_history(engine, "seed-article-h100") == []
    finally:
        engine.dispose()


def test_downgrade_to_0001_drops_plan_history_only_and_upgrade_works_again(
    stores: Stores,
) -> None:
    url = stores.empty()
    upgrade(url)
    engine = make_engine(url)
    try:
        load_demo_data(engine, actor=SYSTEM)
        scenarios.save_scenario(engine, "seed-article-h100", SEED_YAML, actor=SYSTEM)
        scenario = scenario_from_yaml(SEED_YAML, "seed")
        curves = planning.load_curves(engine)
        plan = make_plan(scenario, curves, list_prices(engine))
        history.record_plan(engine, "seed-article-h100", plan, curves=curves, actor=SYSTEM)
        runs = run_lists.count_runs(engine)
    finally:
        engine.dispose()
    assert downgrade(url, "0001") == "0001"
    assert column_names(url, "plan_records") == []
    assert query(url, "SELECT name FROM scenarios") == [("seed-article-h100",)]
    assert query(url, "SELECT count(*) FROM runs") == [(runs,)]
    assert upgrade(url) == head_revision()
    engine = make_engine(url)
    try:
        assert scenarios.plan_history(engine, "seed-article-h100") == []
    finally:
        engine.dispose()
