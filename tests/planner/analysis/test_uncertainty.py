"""The plan at its sizing confidence and its ranges, from one set of error samples (demo data)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from errors import PlanningError
from measurements.demo.runs import demo_runs
from planner.analysis.capacity import make_plan
from planner.analysis.uncertainty import plan_ranges, ranges_of
from planner.curves.load import LoadCurve, curve_from_run
from planner.fitting.fit import MAPE_TO_SIGMA
from planner.inputs.prices import load_catalog_csv
from planner.inputs.scenario import load_scenario
from planner.sizing.draws import Draws
from planner.sizing.options import SizedOption
from tests.planner.builders import ROOT

CATALOG = load_catalog_csv()
CURVES: list[LoadCurve] = [
    c for c in (curve_from_run(run, i) for i, run in enumerate(demo_runs())) if c is not None
]
AGENT = load_scenario(ROOT / "docs" / "scenarios" / "agent-platform.yaml")
SEED = load_scenario(ROOT / "docs" / "scenarios" / "seed-article-h100.yaml")


SCENARIOS = sorted((ROOT / "docs" / "scenarios").glob("*.yaml"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda path: path.stem)
@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.99])
def test_every_headline_sits_at_the_quantile_it_names(path: Path, confidence: float) -> None:
    base = load_scenario(path)
    options = base.options.model_copy(update={"sizing_confidence": confidence})
    sc = base.model_copy(update={"options": options})
    plan = make_plan(sc, CURVES, CATALOG)
    sized = [o for o in plan.options if isinstance(o, SizedOption)]
    assert sized
    for option in sized:
        costs = option.spread.costs()
        planned = option.total_monthly_cost_usd
        # The planned fleet covers at least `confidence` of the samples, and a cheaper one
        # would cover fewer: it is the quantile, not merely above it.
        assert np.mean(costs <= planned + 1e-6) >= confidence
        assert np.mean(costs < planned - 1e-6) < confidence
        assert option.spread.met_share(planned) >= confidence
    ranges = ranges_of(plan)
    for option in ranges.options:
        cost = option.total_monthly_cost_usd
        planned_cost = option.point_total_monthly_cost_usd
        if cost is None or planned_cost is None:
            continue
        assert cost.p10 <= cost.p50 <= cost.p90
        if confidence >= 0.5:
            assert cost.p50 <= planned_cost + 1e-6
        if confidence >= 0.9:
            assert cost.p90 <= planned_cost + 1e-6
    for option in sized:
        costs = option.spread.costs()
        finite = costs[np.isfinite(costs)]
        assert finite.min() - 1e-6 <= option.expected_monthly_cost_usd <= finite.max() + 1e-6
        if confidence >= 0.5:  # the expected (median) fleet never costs more than the planned one
            assert option.expected_monthly_cost_usd <= option.total_monthly_cost_usd + 1e-6


def test_a_higher_confidence_never_plans_a_cheaper_fleet() -> None:
    def costs(confidence: float) -> dict[str, float]:
        options = AGENT.options.model_copy(update={"sizing_confidence": confidence})
        plan = make_plan(AGENT.model_copy(update={"options": options}), CURVES, CATALOG)
        return {o.title(): o.total_monthly_cost_usd for o in plan.options if o.meets_sla}

    low, mid, high = costs(0.5), costs(0.9), costs(0.99)
    assert set(high) <= set(mid) <= set(low)
    assert all(low[t] <= mid[t] + 1e-6 for t in mid)
    assert all(mid[t] <= high[t] + 1e-6 for t in high)
    assert any(low[t] < high[t] for t in high), "the error samples move no fleet at all"


def test_the_ranges_of_a_plan_need_no_new_plan_and_match_plan_ranges() -> None:
    plan = make_plan(SEED, CURVES, CATALOG)
    assert ranges_of(plan) == plan_ranges(SEED, CURVES, CATALOG)


def test_every_sized_option_of_the_agent_platform_gets_ordered_ranges() -> None:
    ranges = plan_ranges(AGENT, CURVES, CATALOG, samples=40, seed=3)
    sized = [o for o in ranges.options if o.sampled]
    assert len(sized) >= 10
    for option in sized:
        assert option.nodes is not None and option.point_nodes is not None
        assert option.nodes.p10 <= option.nodes.p50 <= option.nodes.p90
        assert float(option.nodes.p50).is_integer()
        assert option.nodes.p50 <= option.point_nodes


def test_zero_noise_collapses_every_range_to_the_plan_itself() -> None:
    ranges = plan_ranges(SEED, CURVES, CATALOG, samples=3, noise_scale=0.0)
    point = make_plan(SEED, CURVES, CATALOG, draws=Draws(samples=3, noise_scale=0.0))
    assert [o.title for o in ranges.options] == [o.title() for o in point.options]
    for option, planned in zip(ranges.options, point.options, strict=True):
        if option.nodes is None or option.total_monthly_cost_usd is None:
            assert option.feasible_share == 0.0
            continue
        assert isinstance(planned, SizedOption)
        assert option.nodes.p10 == option.nodes.p90 == planned.nodes
        cost = option.total_monthly_cost_usd
        assert cost.p10 == cost.p90 == pytest.approx(planned.total_monthly_cost_usd)
        assert option.feasible_share == 1.0
    assert ranges.choice_change_share == 0.0


def test_the_same_seed_reproduces_the_ranges() -> None:
    first = plan_ranges(SEED, CURVES, CATALOG, samples=15, seed=7)
    again = plan_ranges(SEED, CURVES, CATALOG, samples=15, seed=7)
    assert first == again


def test_the_choice_pick_share_and_how_often_the_pick_changes_are_one_measure() -> None:
    plan = make_plan(AGENT, CURVES, CATALOG, draws=Draws(samples=60, seed=1))
    ranges = ranges_of(plan)
    choice = plan.recommendation.choice
    assert choice is not None
    share = next(o.pick_share for o in ranges.options if o.key == choice.key)
    assert share == pytest.approx(1.0 - ranges.choice_change_share)
    # Every sample with a pick counts for at least one option (ties count for each).
    assert sum(o.pick_share for o in ranges.options) >= 1.0 - ranges.no_choice_share - 1e-9
    assert all(0.0 <= o.pick_share <= 1.0 for o in ranges.options)


def test_an_option_the_point_plan_rejects_reports_no_range_and_a_zero_feasible_share() -> None:
    ranges = plan_ranges(AGENT, CURVES, CATALOG, samples=3, seed=0)
    point = {o.title(): o for o in make_plan(AGENT, CURVES, CATALOG).options}
    rejected = [o for o in ranges.options if not point[o.title].meets_sla]
    assert rejected, "agent-platform has a candidate without TPOT measurements"
    for option in rejected:
        assert option.nodes is None and option.total_monthly_cost_usd is None
        assert option.feasible_share == 0.0 and option.pick_share == 0.0


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
