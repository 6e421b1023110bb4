"""What-if demand: 1x is the plan itself, more demand never buys fewer nodes of the same pick,
a year is twelve months, the multiples are validated, and demand reads as people write it."""

from __future__ import annotations

import pytest

from planner.analysis.capacity import make_plan, replan
from planner.analysis.what_if import scaled_demand, what_if_demand
from planner.inputs.prices import load_catalog_csv
from planner.inputs.scenario import load_scenario
from planner.inputs.what_if_spec import WhatIfSpec, parse_multipliers
from reports.what_if_view import amount_text, what_if_sentence, what_if_table
from tests.planner.builders import ROOT, silicon_curves

CATALOG = load_catalog_csv()
AGENT = load_scenario(ROOT / "docs" / "scenarios" / "agent-platform.yaml")


def test_the_rows_follow_the_demand_and_1x_is_the_plan() -> None:
    plan = make_plan(AGENT, silicon_curves(), CATALOG)
    rows = what_if_demand(plan, (1.0, 1.5, 2.0, 4.0))
    choice = plan.recommendation.choice
    assert choice is not None
    assert rows[0].option == choice.key and rows[0].nodes == choice.nodes
    assert rows[0].monthly_usd == choice.total_monthly_cost_usd
    assert [r.demand for r in rows] == [AGENT.demand.amount * m for m in (1, 1.5, 2, 4)]
    for row in rows:
        assert row.yearly_usd == pytest.approx(12 * (row.monthly_usd or 0))
        assert row.pick_changes == (row.option != choice.key)
    same = [r.nodes or 0 for r in rows if r.option == choice.key]
    assert same == sorted(same)
    # Re-sizing the plan's own fits gives the plan at 1x exactly.
    again = replan(plan, scaled_demand(plan.scenario, 1.0)).recommendation.choice
    assert again is not None and again.key == choice.key and again.nodes == choice.nodes
    table = what_if_table(rows)
    assert [r["Demand"] for r in table] == ["1x", "1.5x", "2x", "4x"]
    assert (what_if_sentence(rows) or "").startswith("If demand grows: at 1.5x")


def test_multiples_are_checked_and_1x_is_always_planned() -> None:
    assert parse_multipliers("2x, 1.5") == (1.0, 1.5, 2.0)
    for bad, said in (("0", "above 0"), ("1, x", "'x'"), ("", "no demand multiplier")):
        with pytest.raises(ValueError, match=said):
            parse_multipliers(bad)
    with pytest.raises(ValueError, match="at most 8 multipliers"):
        WhatIfSpec(demand_multipliers=(2, 3, 4, 5, 6, 7, 8, 9))  # 1x makes nine


def test_demand_reads_as_written() -> None:
    assert amount_text(40.0) == "40"
    assert amount_text(1.5) == "1.5"
    assert amount_text(12_345.0) == "12,345"
    assert amount_text(7.5e9) == "7,500,000,000"
