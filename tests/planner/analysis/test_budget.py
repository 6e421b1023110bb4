"""A budget over time: a flat forecast is today's plan month after month; the months' fleets are
what a re-plan at each demand gives; the commitment schedule, the owned nodes and their money
follow their definitions; crossovers, forecast misses and power say what they claim."""

from __future__ import annotations

import math
from functools import cache

import pytest

from errors import ScenarioError
from planner.analysis.budget import BudgetPlan, plan_budget
from planner.analysis.capacity import Plan, make_plan, replan
from planner.analysis.commitments import Term, cheapest_schedule
from planner.analysis.horizon import horizon_fleets
from planner.analysis.owning import node_economics
from planner.analysis.paths import API, COMMITTED, ON_DEMAND, OWNED, orders, owned_nodes
from planner.analysis.what_if import scaled_demand
from planner.inputs.horizon_spec import HorizonSpec, OwningSpec
from planner.inputs.prices import load_catalog_csv
from planner.inputs.scenario import Scenario, load_scenario, scenario_from_dict
from planner.sizing.options import SizedOption
from reports.budget_view import budget_headline, budget_to_dict
from tests.planner.builders import ROOT, silicon_curves

CATALOG = load_catalog_csv()
BRIEF = load_scenario(ROOT / "docs" / "scenarios" / "budget-24-months.yaml")


@cache
def _plan(horizon: HorizonSpec | None) -> Plan:
    scenario = BRIEF.model_copy(update={"horizon": horizon})
    return make_plan(scenario, silicon_curves(), CATALOG)


@cache
def _budget() -> BudgetPlan:
    return plan_budget(_plan(BRIEF.horizon), CATALOG)


def test_a_flat_forecast_is_todays_plan_every_month() -> None:
    assert BRIEF.horizon is not None
    flat = BRIEF.horizon.model_copy(update={"months": 6, "monthly_growth_pct": 0})
    plan = _plan(flat)
    pick = plan.recommendation.choice
    assert isinstance(pick, SizedOption) and pick.pricing_mode == "on_demand"
    budget = plan_budget(plan, CATALOG)
    assert [m.option for m in budget.months] == [pick] * 6
    on_demand = budget.path(ON_DEMAND)
    assert on_demand is not None
    assert [m.usd for m in on_demand.months] == [pick.total_monthly_cost_usd] * 6
    assert [m.nodes for m in budget.months] == [pick.nodes] * 6
    assert on_demand.total_usd == pytest.approx(6 * pick.total_monthly_cost_usd, rel=1e-12)


@pytest.mark.parametrize("factor", [0.7, 1.3, 2.0, 3.1])
def test_a_month_is_what_a_replan_at_its_demand_gives(factor: float) -> None:
    plan = _plan(BRIEF.horizon)
    pick = plan.recommendation.choice
    assert pick is not None
    spec = HorizonSpec(monthly_demand=(BRIEF.demand.amount * factor,))
    (month,) = horizon_fleets(plan, spec)
    moved = replan(plan, scaled_demand(plan.scenario, factor))
    (same,) = [o for o in moved.options if o.key == pick.key]
    assert isinstance(same, SizedOption)
    assert month.option.hourly_replicas == same.hourly_replicas
    assert month.option.total_monthly_cost_usd == same.total_monthly_cost_usd
    assert month.option.spread.sample_fleet == same.spread.sample_fleet
    assert month.demand == pytest.approx(BRIEF.demand.amount * factor)


def test_the_done_when_brief_prices_every_way_and_names_the_cheapest() -> None:
    budget = _budget()
    names = [p.name for p in budget.paths]
    assert names == [ON_DEMAND, COMMITTED, OWNED, API]
    assert len(budget.months) == 24
    nodes = [m.nodes for m in budget.months]
    assert nodes == sorted(nodes) and nodes[-1] > nodes[0]  # 5%/month: 3.07x in 24 months
    assert budget.months[-1].factor == pytest.approx(1.05**23)
    for path in budget.paths:
        assert path.low_total_usd <= path.total_usd + 1e-6 <= path.high_total_usd + 2e-6
        assert len(path.months) == 24
    cheapest = budget.cheapest
    assert cheapest.total_usd == min(p.total_usd for p in budget.paths)
    committed = budget.path(COMMITTED)
    on_demand = budget.path(ON_DEMAND)
    assert committed is not None and on_demand is not None
    assert committed.total_usd < on_demand.total_usd  # cheaper terms are never worse
    document = budget_to_dict(budget)
    assert document["cheapest"]["path"] == cheapest.name  # type: ignore[index]
    assert len(document["months"]) == 24  # type: ignore[arg-type]
    assert budget_headline(budget).startswith(f"Over 24 months, {cheapest.name} is the cheapest")


def test_the_api_path_is_the_tokens_at_their_prices() -> None:
    budget = _budget()
    api = budget.path(API)
    assert api is not None and BRIEF.horizon is not None and BRIEF.horizon.hosted_api
    first = budget.months[0]
    assert first.input_tokens == pytest.approx(first.output_tokens * 2048 / 512)
    want = first.input_tokens / 1e6 * 0.60 + first.output_tokens / 1e6 * 0.80
    assert api.months[0].usd == pytest.approx(want)
    assert api.months[0].usd_per_m_blended == pytest.approx((0.6 * 4 + 0.8) / 5)


def test_a_self_hosted_month_splits_its_cost_four_to_one_per_token() -> None:
    month = _budget().paths[0].months[0]
    fleet = _budget().months[0]
    tokens_in, tokens_out = fleet.input_tokens / 1e6, fleet.output_tokens / 1e6
    assert month.usd_per_m_output == pytest.approx(4 * month.usd_per_m_input)
    assert tokens_in * month.usd_per_m_input + tokens_out * month.usd_per_m_output == (
        pytest.approx(month.usd)
    )


def test_the_commitment_schedule_is_the_cheapest_cover() -> None:
    one_year = Term("1-year", 12, 2.0, "test")
    node_hours = 8 * 730.0
    on_demand_node_month = node_hours * 3.0
    steady = cheapest_schedule([4] * 12, [one_year], on_demand_node_month, node_hours)
    assert [(c.start, c.nodes) for c in steady.commitments] == [(1, 4)]
    assert steady.owed_after(8, 730.0) == 0.0
    # Three months of need: a 12-month term costs 12 x 2.0 > 3 x 3.0 per node: stay on-demand.
    short = cheapest_schedule([4, 4, 4], [one_year], on_demand_node_month, node_hours)
    assert short.commitments == ()
    # Growth: every month covered, and never more paid than all on-demand.
    needs = [2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10]
    three_years = Term("3-year", 36, 1.5, "test")
    grown = cheapest_schedule(needs, [one_year, three_years], on_demand_node_month, node_hours)
    paid = sum(c.nodes * c.term.months * node_hours * c.term.usd_per_gpu_hour
               for c in grown.commitments)  # fmt: skip
    uncovered = sum(max(n - grown.covered(i + 1), 0) for i, n in enumerate(needs))
    assert paid + uncovered * on_demand_node_month <= sum(needs) * on_demand_node_month
    assert all(grown.covered(i + 1) >= 0 for i in range(len(needs)))


def test_owned_nodes_arrive_after_their_lead_time_and_are_kept() -> None:
    assert owned_nodes([1, 2, 3, 3, 5, 4], 2) == (0, 0, 3, 3, 5, 5)
    assert orders((0, 0, 3, 3, 5, 5), 2) == {1: 3, 3: 2}
    assert owned_nodes([2, 2], 0) == (2, 2)
    assert orders((2, 2), 0) == {1: 2}


def test_an_owned_nodes_money_is_the_annuity_and_its_running_costs() -> None:
    assert BRIEF.horizon is not None
    plain = OwningSpec(
        node_price_usd=120_000, residual_pct=0, cost_of_capital_pct=0, support_pct_per_year=0,
        usd_per_kwh=0, colocation_usd_per_kw_month=0,
    )  # fmt: skip
    node = node_economics(plain, BRIEF.horizon, "H100-SXM-80GB", 8, 730.0)
    assert node.capital_usd == pytest.approx(120_000 / 60)
    assert node.running_usd == 0.0
    costly = plain.model_copy(update={"cost_of_capital_pct": 12, "residual_pct": 10})
    node = node_economics(costly, BRIEF.horizon, "H100-SXM-80GB", 8, 730.0)
    r, n = 0.01, 60
    present = 120_000 - 12_000 / (1 + r) ** n
    assert node.capital_usd == pytest.approx(present * r / (1 - (1 + r) ** -n))
    # 8 x 700 W x 80% + 80% for the server: 8.064 kW; x PUE 1.3 at $0.10/kWh for 730 h.
    powered = plain.model_copy(update={"usd_per_kwh": 0.10})
    node = node_economics(powered, BRIEF.horizon, "H100-SXM-80GB", 8, 730.0)
    assert node.it_kw == pytest.approx(8 * 0.7 * 0.8 * 1.8)
    assert node.power_usd == pytest.approx(node.it_kw * 1.3 * 730 * 0.10)


def test_crossovers_and_misses_say_what_they_claim() -> None:
    budget = _budget()
    by_name = {p.name: p for p in budget.paths}
    for crossover in budget.crossovers:
        mine, theirs = by_name[crossover.path], by_name[crossover.other]
        if crossover.basis == "monthly cost" or crossover.month is None:
            continue
        cash = crossover.basis == "cumulative cash"
        a, b = mine.cumulative(cash=cash), theirs.cumulative(cash=cash)
        at = crossover.month - 1
        assert all(x < y for x, y in zip(a[at:], b[at:], strict=True))
        assert at == 0 or a[at - 1] >= b[at - 1]
    on_demand = by_name[ON_DEMAND]
    assert [m.scale for m in on_demand.misses] == [1.2, 0.8]
    assert all(m.regret_usd == 0 and m.premium_usd == 0 for m in on_demand.misses)
    owned = by_name[OWNED]
    low = next(m for m in owned.misses if m.scale == 0.8)
    assert low.wasted_usd > 0  # nodes bought for demand that did not come stand idle


def test_power_counts_every_node_against_the_limit() -> None:
    assert BRIEF.horizon is not None
    tight = BRIEF.horizon.model_copy(update={"power_limit_kw": 40.0})
    budget = plan_budget(_plan(tight), CATALOG)
    per_node = budget.power.node_facility_kw
    assert per_node == pytest.approx(8 * 0.7 * 0.8 * 1.8 * 1.3 * 1.1)
    assert budget.power.max_nodes == math.floor(40.0 / per_node)
    over = [m.month for m in budget.months if m.nodes * per_node > 40.0]
    assert budget.power.months_over == tuple(over) and over
    assert budget.power.kwh_per_million_tokens[0] > 0
    from reports.budget_view import budget_lines

    options = budget.power.options
    assert options and {o.option for o in options} >= {budget.pick.title()}
    mine = next(o for o in options if o.option == budget.pick.title())
    assert mine.nodes == budget.months[0].nodes
    assert mine.facility_kw == pytest.approx(budget.power.monthly_kw[0])
    assert mine.kwh_per_million_tokens == pytest.approx(budget.power.kwh_per_million_tokens[0])
    assert all(o.fits == (o.facility_kw <= 40.0 + 1e-9) for o in options)
    said = next(line for line in budget_lines(budget) if line.startswith("power:"))
    assert f"from month {over[0]}" in said
    if over[0] > 1:
        assert f"through month {over[0] - 1}" in said
    else:
        assert "cannot host even the first month's fleet" in said


@pytest.mark.parametrize(
    ("horizon", "said"),
    [
        ({"months": 12, "monthly_demand": [1, 2]}, "monthly_demand has 2 values"),
        ({"monthly_demand": [1, 2], "monthly_growth_pct": 3}, "not both"),
        ({"monthly_growth_pct": 3}, "give horizon.months"),
        ({"months": 12, "seasonality": [1] * 11 + [0]}, "seasonality weight must be above 0"),
        ({"months": 61}, "less than or equal to 60"),
        ({"months": 12, "owning": {"node_price_usd": -1}}, "greater than 0"),
        ({"months": 12, "surprise": 1}, "unknown key 'surprise'"),
    ],
)
def test_a_bad_horizon_names_its_field(horizon: dict[str, object], said: str) -> None:
    raw = BRIEF.model_dump(mode="json", exclude_none=True)
    raw["horizon"] = horizon
    with pytest.raises(ScenarioError, match=said) as caught:
        scenario_from_dict(raw, "brief.yaml")
    assert caught.value.file == "brief.yaml"
    assert (caught.value.field or "").startswith("horizon")


def test_growth_and_seasonality_shape_the_months() -> None:
    spec = HorizonSpec(months=14, monthly_growth_pct=10, seasonality=(2,) + (1,) * 11)
    factors = spec.demand_factors(10.0)
    mean = 13 / 12
    assert factors[0] == pytest.approx(2 / mean)
    assert factors[1] == pytest.approx(1.1 / mean)
    assert factors[12] == pytest.approx(1.1**12 * 2 / mean)
    listed = HorizonSpec(monthly_demand=(10, 15, 20))
    assert listed.month_count == 3 and listed.demand_factors(10.0) == (1.0, 1.5, 2.0)


def test_a_scenario_file_round_trips_its_horizon() -> None:
    from planner.inputs.scenario import scenario_from_yaml, scenario_to_yaml

    again: Scenario = scenario_from_yaml(scenario_to_yaml(BRIEF), "again.yaml")
    assert again == BRIEF and again.horizon is not None and again.horizon.owning is not None


@pytest.mark.hostile
@pytest.mark.parametrize("field", ["commitments", "owning", "hosted_api"])
def test_a_horizon_source_with_control_characters_is_refused(field: str) -> None:
    raw = BRIEF.model_dump(mode="json", exclude_none=True)
    raw["horizon"][field]["source"] = "quote \x1b[2J\u202e"
    with pytest.raises(ScenarioError, match="control characters") as caught:
        scenario_from_dict(raw, "brief.yaml")
    assert caught.value.field == f"horizon.{field}.source"
