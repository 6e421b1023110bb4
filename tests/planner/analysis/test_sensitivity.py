"""sensitivity: each input moved -/+10% (counts -/+1), on the demo data; tornado order."""

from __future__ import annotations

import math

import pytest

from errors import PlanningError
from measurements.demo.runs import demo_runs
from planner.analysis.capacity import make_plan
from planner.analysis.sensitivity import SensitivityRow, sensitivity
from planner.curves.load import LoadCurve, curve_from_run
from planner.inputs.prices import load_catalog_csv
from planner.inputs.scenario import Scenario, load_scenario, scenario_from_dict
from tests.planner.builders import ROOT

CATALOG = load_catalog_csv()
CURVES: list[LoadCurve] = [
    c for c in (curve_from_run(run, i) for i, run in enumerate(demo_runs())) if c is not None
]
AGENT = load_scenario(ROOT / "docs" / "scenarios" / "agent-platform.yaml")
SEED = load_scenario(ROOT / "docs" / "scenarios" / "seed-article-h100.yaml")


@pytest.fixture(scope="module")
def agent_rows() -> dict[str, SensitivityRow]:
    return {row.input: row for row in sensitivity(AGENT, CURVES, CATALOG)}


@pytest.fixture(scope="module")
def seed_rows() -> list[SensitivityRow]:
    return sensitivity(SEED, CURVES, CATALOG)


def _with(scenario: Scenario, section: str, **values: object) -> Scenario:
    raw = scenario.model_dump()
    raw[section] = {**raw[section], **values}
    return scenario_from_dict(raw)


def test_more_demand_never_costs_less_for_any_option(
    agent_rows: dict[str, SensitivityRow],
) -> None:
    row = agent_rows["demand.peak_requests_per_s"]
    assert (row.low_value, row.base_value, row.high_value) == pytest.approx((18, 20, 22))
    assert row.high_change_pct is not None and row.high_change_pct >= 0
    assert row.low_change_pct is not None and row.low_change_pct <= 0
    for swing in row.options:
        low, base, high = (
            swing.low_total_monthly_cost_usd,
            swing.base_total_monthly_cost_usd,
            swing.high_total_monthly_cost_usd,
        )
        if low is not None and base is not None and high is not None:
            assert low <= base <= high


def test_ten_percent_on_the_recommended_gpus_price_raises_its_cost_ten_percent(
    agent_rows: dict[str, SensitivityRow],
) -> None:
    choice = make_plan(AGENT, CURVES, CATALOG).recommendation.choice
    assert choice is not None
    row = agent_rows[f"pricing.{choice.gpu}"]
    assert row.reference == choice.key
    assert row.base_value == pytest.approx(choice.usd_per_gpu_hour)
    assert row.high_change_pct == pytest.approx(10.0, abs=0.01)
    assert row.low_change_pct == pytest.approx(-10.0, abs=0.01)


def test_rows_are_sorted_by_effect_size(agent_rows: dict[str, SensitivityRow]) -> None:
    rows = sensitivity(AGENT, CURVES, CATALOG)
    effects = [row.effect_pct for row in rows]
    assert effects == sorted(effects, reverse=True)
    assert all(row.effect_pct >= 0 for row in rows)
    assert [row.input for row in rows] != sorted(row.input for row in rows)


def test_unset_inputs_are_skipped_and_set_ones_are_present(
    agent_rows: dict[str, SensitivityRow], seed_rows: list[SensitivityRow]
) -> None:
    assert {"sla.ttft_p99_ms", "sla.tpot_p99_ms", "budget.monthly_usd"} <= set(agent_rows)
    assert {"workload.isl", "workload.osl", "options.target_utilization"} <= set(agent_rows)
    assert "sla.e2e_p99_ms" not in agent_rows and "sla.min_stream_tok_s" not in agent_rows
    assert "options.max_streams_per_replica" not in agent_rows
    assert "demand.peak_to_average" not in agent_rows
    seed_inputs = {row.input for row in seed_rows}
    assert {"sla.min_stream_tok_s", "options.max_streams_per_replica"} <= seed_inputs
    assert "budget.monthly_usd" not in seed_inputs


def test_counts_move_by_one_and_stay_at_zero_with_a_note(seed_rows: list[SensitivityRow]) -> None:
    row = next(r for r in seed_rows if r.input == "options.redundancy_replicas")
    assert (row.low_value, row.base_value, row.high_value) == (0, 0, 1)
    assert any("below 0" in note for note in row.notes)
    # One spare replica fits the last node's free GPUs here, so the cost may not move.
    assert row.high_change_pct is not None and row.high_change_pct >= 0


def test_utilisation_above_one_is_clipped_and_said() -> None:
    scenario = _with(SEED, "options", target_utilization=0.95)
    rows = {r.input: r for r in sensitivity(scenario, CURVES, CATALOG)}
    row = rows["options.target_utilization"]
    assert row.high_value == 1.0 and row.low_value == pytest.approx(0.855)
    assert any("clipped" in note for note in row.notes)


def test_a_stricter_sla_that_no_option_meets_counts_as_the_largest_effect() -> None:
    # 40 tok/s per stream holds at the measured c=64 only just (62.4 ms p99 TPOT x ...);
    # doubling the step makes the high side (48 tok/s) cut deep into every curve.
    rows = sensitivity(SEED, CURVES, CATALOG, step=0.5)
    row = next(r for r in rows if r.input == "sla.min_stream_tok_s")
    assert row.high_value == pytest.approx(60.0)
    if row.high_change_pct is None:
        assert math.isinf(row.effect_pct) and rows[0].effect_pct == math.inf


@pytest.mark.parametrize("step", [0.0, 1.0, -0.1, math.nan])
def test_a_step_outside_zero_to_one_is_refused(step: float) -> None:
    with pytest.raises(PlanningError, match="step"):
        sensitivity(SEED, CURVES, CATALOG, step=step)
