"""Saved scenarios on a real store (SQLite or Postgres): rename, clone, delete, and the plan
history that
records what a plan used (scenario YAML, run ids, prices) and regenerates it equal."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import Engine

from db import repository, run_lists, run_reads, scenarios
from db.engine import make_engine
from db.prices import list_prices, replace_prices
from errors import InputError, PlanningError
from planner.analysis.capacity import make_plan
from planner.inputs.prices import catalog_version
from planner.inputs.scenario import scenario_from_yaml
from team.roles import SYSTEM
from tests.stores import Stores
from workflows import history, planning

ROOT = Path(__file__).resolve().parents[2]
AGENT_YAML = (ROOT / "docs" / "scenarios" / "agent-platform.yaml").read_text(encoding="utf-8")
# The same scenario priced from the catalog (its own pricing line dropped).
CATALOG_YAML = "".join(
    line for line in AGENT_YAML.splitlines(keepends=True) if not line.startswith("pricing:")
)


@pytest.fixture
def demo(stores: Stores) -> Iterator[Engine]:
    """A store with the demo runs and prices, on the backend under test."""
    made = make_engine(stores.demo())
    yield made
    made.dispose()


def _yaml(name: str, text: str = AGENT_YAML) -> str:
    return text.replace("name: agent-platform", f"name: {name}")


def _names(engine: Engine) -> list[str]:
    return [record.name for record in scenarios.list_scenarios(engine)]


def _recorded(
    engine: Engine, name: str = "agent-platform", text: str = AGENT_YAML
) -> scenarios.PlanRecord:
    scenarios.save_scenario(engine, name, _yaml(name, text), actor=SYSTEM, replace=True)
    scenario = scenario_from_yaml(_yaml(name, text), name)
    plan = make_plan(scenario, planning.load_curves(engine), list_prices(engine))
    return history.record_plan(engine, name, plan, actor=SYSTEM)


def test_rename_refuses_a_taken_name_and_changes_nothing(engine: Engine) -> None:
    scenarios.save_scenario(engine, "a", _yaml("a"), actor=SYSTEM)
    scenarios.save_scenario(engine, "b", _yaml("b"), actor=SYSTEM)
    with pytest.raises(InputError, match="a scenario named 'b' already exists"):
        history.rename_scenario(engine, "a", "b", actor=SYSTEM)
    assert _names(engine) == ["a", "b"]
    assert scenarios.get_scenario(engine, "a").yaml_text == _yaml("a")


def test_rename_moves_the_name_into_the_yaml(engine: Engine) -> None:
    saved = scenarios.save_scenario(engine, "a", _yaml("a"), actor=SYSTEM)
    renamed = history.rename_scenario(engine, "a", "  finance-q3 ", actor=SYSTEM)
    assert (renamed.scenario_id, renamed.name) == (saved.scenario_id, "finance-q3")
    assert _names(engine) == ["finance-q3"]
    assert scenario_from_yaml(renamed.yaml_text, "x").name == "finance-q3"
    with pytest.raises(InputError, match="no saved scenario named 'a'"):
        history.rename_scenario(engine, "a", "c", actor=SYSTEM)


def test_clone_copies_the_inputs_under_a_new_name(engine: Engine) -> None:
    scenarios.save_scenario(engine, "a", _yaml("a"), actor=SYSTEM)
    clone = history.clone_scenario(engine, "a", "a-copy", actor=SYSTEM)
    assert _names(engine) == ["a", "a-copy"]
    original = scenario_from_yaml(scenarios.get_scenario(engine, "a").yaml_text, "a")
    copied = scenario_from_yaml(clone.yaml_text, "a-copy")
    assert copied == original.model_copy(update={"name": "a-copy"})
    with pytest.raises(InputError, match="already exists"):
        history.clone_scenario(engine, "a", "a-copy", actor=SYSTEM)
    with pytest.raises(InputError, match="1 to 200 characters"):
        history.clone_scenario(engine, "a", "   ", actor=SYSTEM)


def test_delete_removes_the_scenario_and_keeps_its_recorded_plans(demo: Engine) -> None:
    record = _recorded(demo)
    assert scenarios.delete_scenario(demo, "agent-platform", actor=SYSTEM) is True
    assert scenarios.delete_scenario(demo, "agent-platform", actor=SYSTEM) is False
    assert _names(demo) == []
    kept = scenarios.get_plan_record(demo, record.record_id)
    assert kept.scenario_name == "agent-platform"
    assert kept.summary == record.summary
    # Saved again under the same name, its history shows the records kept for audit.
    again = _recorded(demo)
    kept_ids = [r.record_id for r in scenarios.plan_history(demo, "agent-platform")]
    assert kept_ids == [again.record_id, record.record_id]


def test_record_plan_keeps_inputs_and_summary(demo: Engine) -> None:
    record = _recorded(demo, text=CATALOG_YAML)
    assert record.summary.choice_title == "tensorrt-llm on H200-SXM-141GB (TP 2, fp8)"
    assert record.summary.total_monthly_cost_usd == pytest.approx(2 * 8 * 3.50 * 730)
    assert record.summary.nodes == 2
    assert record.summary.recommendation.startswith("tensorrt-llm on H200-SXM-141GB (TP 2")
    assert record.run_ids == (2, 97, 98, 99, 106, 107, 108, 109, 118, 119, 120, 121)
    assert set(record.run_ids) <= set(record.basis_run_ids)
    assert record.catalog_version == catalog_version(list_prices(demo))
    assert sorted((e.gpu, e.provider, e.usd_per_gpu_hour) for e in record.prices_used) == [
        ("H100-SXM-80GB", "Nebius", 2.95),
        ("H200-SXM-141GB", "Nebius", 3.5),
    ]
    assert scenario_from_yaml(record.scenario_yaml, "x").name == "agent-platform"
    assert record.created_at.tzinfo is not None


def test_plan_history_is_newest_first_and_follows_a_rename(demo: Engine) -> None:
    first = _recorded(demo)
    second = _recorded(demo)
    scenarios.save_scenario(demo, "other", _yaml("other"), actor=SYSTEM)
    history.rename_scenario(demo, "agent-platform", "renamed", actor=SYSTEM)
    records = scenarios.plan_history(demo, "renamed")
    assert [r.record_id for r in records] == [second.record_id, first.record_id]
    assert scenarios.plan_history(demo, "other") == []
    with pytest.raises(InputError, match="no recorded plan with id 999"):
        scenarios.get_plan_record(demo, 999)


def test_regenerate_reproduces_the_summary_even_after_the_catalog_changed(demo: Engine) -> None:
    record = _recorded(demo, text=CATALOG_YAML)
    doubled = [
        replace(entry, usd_per_gpu_hour=entry.usd_per_gpu_hour * 2) for entry in list_prices(demo)
    ]
    replace_prices(demo, doubled, actor=SYSTEM)
    fresh = make_plan(
        scenario_from_yaml(record.scenario_yaml, "x"),
        planning.load_curves(demo),
        list_prices(demo),
    )
    assert fresh.recommendation.choice is not None
    assert fresh.recommendation.choice.total_monthly_cost_usd == pytest.approx(2 * 40880.0)
    result = history.regenerate(demo, record.record_id)
    assert result.matches
    assert result.summary == record.summary
    assert result.summary.total_monthly_cost_usd == pytest.approx(2 * 8 * 3.50 * 730)
    assert result.plan.catalog_version == record.catalog_version
    assert history.regenerate(demo, record.record_id).plan.recommendation.choice is not None


def test_regenerate_after_a_run_was_deleted_names_the_missing_runs(demo: Engine) -> None:
    record = _recorded(demo)
    assert repository.delete_run(demo, 97, actor=SYSTEM) and repository.delete_run(
        demo, 119, actor=SYSTEM
    )
    with pytest.raises(PlanningError, match=r"run\(s\) 97, 119 it used were deleted since"):
        history.regenerate(demo, record.record_id)


def test_record_plan_refuses_an_unsaved_scenario(demo: Engine) -> None:
    scenario = scenario_from_yaml(AGENT_YAML, "agent")
    plan = make_plan(scenario, planning.load_curves(demo), list_prices(demo))
    with pytest.raises(InputError, match="no saved scenario named 'agent-platform'"):
        history.record_plan(demo, "agent-platform", plan, actor=SYSTEM)


def test_basis_keeps_the_sibling_runs_that_shaped_the_fits(demo: Engine) -> None:
    # A second run of one silicon-sample deployment (output 10% lower) loses selection to the
    # original (same rank, higher id) but is a sibling whose ratios shape the other curves' fits.
    original = next(
        s
        for s in run_lists.list_runs(demo)
        if (s.model, s.engine, s.gpu, s.tp, s.isl, s.osl)
        == ("meta-llama/Llama-3.1-70B", "vllm", "H200-SXM-141GB", 2, 1024, 1024)
    )
    run = run_reads.get_run(demo, original.run_id, with_samples=False).run
    levels = tuple(
        level.model_copy(
            update={
                "metrics": tuple(
                    m.model_copy(update={"value": m.value * 0.9}) if m.name == "output_tok_s" else m
                    for m in level.metrics
                )
            }
        )
        for level in run.levels
    )
    copy = run.model_copy(update={"levels": levels, "source_sha256": "cd" * 32, "label": "copy"})
    copy_id = repository.save_run(demo, copy, actor=SYSTEM).run_id
    text = (
        "name: silicon\nmodel: meta-llama/Llama-3.1-70B\nprecision: fp8\n"
        "workload: {isl: 1024, osl: 1024}\ndemand: {peak_requests_per_s: 10}\n"
        "sla: {ttft_p99_ms: 2000}\n"
        "candidates: {engines: [vllm], gpus: [H200-SXM-141GB]}\n"
    )
    scenarios.save_scenario(demo, "silicon", text, actor=SYSTEM)
    curves = planning.load_curves(demo)
    plan = make_plan(scenario_from_yaml(text, "silicon"), curves, list_prices(demo))
    record = history.record_plan(demo, "silicon", plan, curves=curves, actor=SYSTEM)
    assert copy_id not in record.run_ids
    assert original.run_id in record.run_ids
    assert copy_id in record.basis_run_ids
    assert history.regenerate(demo, record.record_id).matches
