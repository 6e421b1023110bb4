"""plan_ranges: percentiles of nodes and cost from the fit uncertainty, on the demo data."""

from __future__ import annotations

import math

import pytest

from errors import PlanningError
from measurements.demo.runs import demo_runs
from planner.capacity import make_plan
from planner.curves import LoadCurve, curve_from_run
from planner.fit import MAPE_TO_SIGMA
from planner.prices import load_catalog_csv
from planner.scenario import load_scenario
from planner.uncertainty import plan_ranges

from .builders import ROOT

CATALOG = load_catalog_csv()
CURVES: list[LoadCurve] = [
    c for c in (curve_from_run(run, i) for i, run in enumerate(demo_runs())) if c is not None
]
AGENT = load_scenario(ROOT / "docs" / "scenarios" / "agent-platform.yaml")
SEED = load_scenario(ROOT / "docs" / "scenarios" / "seed-article-h100.yaml")


def test_percentiles_are_ordered_and_p50_is_within_a_node_of_the_point_plan() -> None:
    ranges = plan_ranges(SEED, CURVES, CATALOG, samples=40, seed=3)
    assert ranges.samples == 40
    checked = 0
    for option in ranges.options:
        for spread in (option.nodes, option.gpus, option.replicas, option.total_monthly_cost_usd):
            if spread is not None:
                assert spread.p10 <= spread.p50 <= spread.p90
        if option.nodes is not None and option.point_nodes is not None:
            assert abs(option.nodes.p50 - option.point_nodes) <= 1
            assert float(option.nodes.p50).is_integer()
            checked += 1
    assert checked == 2


def test_every_sized_option_of_the_agent_platform_gets_ordered_ranges() -> None:
    ranges = plan_ranges(AGENT, CURVES, CATALOG, samples=8, seed=3)
    sized = [o for o in ranges.options if o.sampled]
    assert len(sized) >= 10
    for option in sized:
        assert option.nodes is not None and option.point_nodes is not None
        assert option.nodes.p10 <= option.nodes.p50 <= option.nodes.p90
        assert option.nodes.p10 <= option.point_nodes + 1


def test_zero_noise_collapses_every_range_to_one_value_near_the_point_plan() -> None:
    # Zero noise re-plans on the fitted curves: one value per option, within a node of the plan.
    ranges = plan_ranges(SEED, CURVES, CATALOG, samples=3, noise_scale=0.0)
    point = make_plan(SEED, CURVES, CATALOG)
    assert [o.title for o in ranges.options] == [o.title() for o in point.options]
    for option, planned in zip(ranges.options, point.options, strict=True):
        if option.nodes is None or option.total_monthly_cost_usd is None:
            assert option.feasible_share == 0.0
            continue
        assert option.nodes.p10 == option.nodes.p90
        assert option.total_monthly_cost_usd.p10 == option.total_monthly_cost_usd.p90
        assert planned.nodes is not None and abs(option.nodes.p50 - planned.nodes) <= 1
        assert option.feasible_share == 1.0
    assert ranges.choice_change_share in (0.0, 1.0)


def test_the_same_seed_reproduces_the_ranges() -> None:
    first = plan_ranges(SEED, CURVES, CATALOG, samples=15, seed=7)
    again = plan_ranges(SEED, CURVES, CATALOG, samples=15, seed=7)
    assert first == again


def test_win_shares_and_no_choice_add_up_to_every_sample() -> None:
    ranges = plan_ranges(SEED, CURVES, CATALOG, samples=30, seed=1)
    total = sum(o.win_share for o in ranges.options) + ranges.no_choice_share
    assert total == pytest.approx(1.0)
    assert 0.0 <= ranges.choice_change_share <= 1.0


def test_an_option_the_point_plan_rejects_reports_no_range_and_a_zero_feasible_share() -> None:
    ranges = plan_ranges(AGENT, CURVES, CATALOG, samples=3, seed=0)
    point = {o.title(): o for o in make_plan(AGENT, CURVES, CATALOG).options}
    rejected = [o for o in ranges.options if not point[o.title].meets_sla]
    assert rejected, "agent-platform has a candidate without TPOT measurements"
    for option in rejected:
        assert option.nodes is None and option.total_monthly_cost_usd is None
        assert option.feasible_share == 0.0 and option.win_share == 0.0


def test_noise_is_the_held_out_error_of_each_fit_as_a_sigma() -> None:
    ranges = plan_ranges(SEED, CURVES, CATALOG, samples=1, noise_scale=2.0)
    point = {o.title(): o for o in make_plan(SEED, CURVES, CATALOG).options}
    for option in ranges.options:
        fit = point[option.title].fit.throughput
        assert fit is not None and fit.loo_mape_pct is not None
        sigma = dict(option.noise_rel)["output_tok_s"]
        assert sigma == pytest.approx(2.0 * MAPE_TO_SIGMA * fit.loo_mape_pct / 100.0)


def test_measured_values_without_a_fit_are_flagged_as_taken_as_they_are() -> None:
    ranges = plan_ranges(SEED, CURVES, CATALOG, samples=1)
    assert any("has no fit" in flag for flag in ranges.flags)
    assert "held-out" in ranges.method


@pytest.mark.parametrize(("samples", "noise"), [(0, 1.0), (5, -0.1), (5, math.inf)])
def test_bad_samples_or_noise_scale_are_refused(samples: int, noise: float) -> None:
    with pytest.raises(PlanningError, match=r"samples|noise_scale"):
        plan_ranges(SEED, CURVES, CATALOG, samples=samples, noise_scale=noise)
