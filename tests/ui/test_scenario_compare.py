"""The Scenarios page's comparison rows: an over-budget scenario is said to be over budget, with
the cost of the cheapest option that meets its SLA (never 'nothing meets the SLA' and no cost)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from db import run_reads
from db.engine import make_engine
from db.prices import list_prices
from db.scenarios import PlanRecord
from planner.analysis.capacity import Plan, make_plan
from planner.curves.load import curve_from_run
from planner.inputs.prices import load_catalog_csv
from planner.inputs.scenario import BudgetSpec, SlaSpec, load_scenario
from planner.sizing.options import SizedOption
from tests.stores import Stores
from ui.scenario_compare import cost_rows, history_rows, results_rows
from workflows.history import plan_summary

SCENARIO = Path(__file__).resolve().parents[2] / "docs" / "scenarios" / "agent-platform.yaml"


@pytest.fixture(scope="module")
def plans(stores: Stores) -> dict[str, Plan]:
    engine = make_engine(stores.demo("compare"))
    stored = run_reads.load_runs(engine)
    prices = list_prices(engine) or load_catalog_csv()
    engine.dispose()
    curves = [c for c in (curve_from_run(s.run, s.run_id) for s in stored) if c is not None]
    base = load_scenario(SCENARIO)
    variants = {
        "fits": base,
        "tight-budget": base.model_copy(
            update={"name": "tight-budget", "budget": BudgetSpec(monthly_usd=1_000)}
        ),
        "impossible": base.model_copy(
            update={"name": "impossible", "sla": SlaSpec(ttft_p99_ms=1.0)}
        ),
    }
    return {name: make_plan(s, curves, prices) for name, s in variants.items()}


def test_over_budget_says_so_with_the_cheapest_cost(plans: dict[str, Plan]) -> None:
    over = plans["tight-budget"]
    assert over.recommendation.choice is None
    cheapest = min(
        (o for o in over.options if isinstance(o, SizedOption)),
        key=lambda o: o.total_monthly_cost_usd,
    )
    (row,) = results_rows([over])
    assert row["recommended"] == (
        "over the $1,000/month budget: cheapest meeting the SLA is "
        "TensorRT-LLM TP2 on H200 SXM 141GB (FP8)"
    )
    assert row["usd_per_month"] == pytest.approx(cheapest.total_monthly_cost_usd)
    assert row["nodes"] == cheapest.nodes
    assert row["binding_constraint"] == "budget"


def test_a_fitting_plan_names_its_choice_and_nothing_is_said_only_without_sla_options(
    plans: dict[str, Plan],
) -> None:
    fits, impossible = results_rows([plans["fits"], plans["impossible"]])
    choice = plans["fits"].recommendation.choice
    assert choice is not None
    assert fits["recommended"] == "TensorRT-LLM TP2 on H200 SXM 141GB (FP8)"
    assert fits["usd_per_month"] == pytest.approx(choice.total_monthly_cost_usd)
    assert impossible["recommended"] == "nothing meets the SLA"
    assert impossible["usd_per_month"] is None


def _record(plan: Plan) -> PlanRecord:
    when = datetime(2026, 12, 1, tzinfo=UTC)
    return PlanRecord(1, plan.scenario.name, "", when, (), (), "v1", (), plan_summary(plan))


def test_history_records_an_over_budget_plan_as_over_budget_with_its_cost(
    plans: dict[str, Plan],
) -> None:
    over = plans["tight-budget"].recommendation.over_budget
    assert over is not None
    (row,) = history_rows([_record(plans["tight-budget"])])
    assert str(row["choice"]).startswith("over the $1,000/month budget: ")
    assert over.title() in str(row["choice"])
    assert row["usd_per_month"] == pytest.approx(over.total_monthly_cost_usd)
    assert row["nodes"] == over.nodes
    (impossible,) = history_rows([_record(plans["impossible"])])
    assert impossible["choice"] == "nothing meets the SLA"
    assert impossible["usd_per_month"] is None


def test_cost_chart_labels_use_proper_names(plans: dict[str, Plan]) -> None:
    labels = {row["option"] for row in cost_rows([plans["fits"]])}
    assert "TensorRT-LLM · H200 SXM 141GB" in labels and "vLLM · H100 SXM 80GB" in labels
