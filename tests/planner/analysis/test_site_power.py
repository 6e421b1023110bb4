"""Measured power and a site's power limit: a run's watts per GPU, read at the sized load,
replace TDP x utilisation in owning and in the facility kW; a power limit is a constraint the
recommendation chooses within (passing over what the site cannot host, and saying so), and when
nothing fits, the plan says so and still carries the option needing the least power."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import pytest

from planner.analysis.budget import plan_budget
from planner.analysis.capacity import Plan, make_plan
from planner.analysis.measured_power import measured_power
from planner.analysis.owning import node_economics
from planner.analysis.recommend import Verdict
from planner.curves.load import LoadCurve
from planner.inputs.horizon_spec import HorizonSpec
from planner.sizing.options import SizedOption
from tests.planner.analysis.test_budget import BRIEF, CATALOG
from tests.planner.builders import silicon_curves

H100_W, H200_W = 690.0, 350.0  # per GPU at every level: H100 near TDP, H200 far below
OVERHEAD = 1.8  # BRIEF's 80% for the rest of the server
PUE_HEADROOM = 1.3 * 1.1


@cache
def powered_curves() -> tuple[LoadCurve, ...]:
    """The silicon sample with a power reading on every level: each H100 level at H100_W + the
    concurrency / 10 W, each H200 level at H200_W."""

    def watts(curve: LoadCurve, load: float) -> float:
        return H100_W + load / 10 if curve.key.gpu.startswith("H100") else H200_W

    return tuple(
        replace(
            c, points=tuple(replace(p, mean_gpu_power_w=watts(c, p.concurrency)) for p in c.points)
        )
        for c in silicon_curves()
    )


@cache
def plan_with(limit: float | None, measured: bool = True) -> Plan:
    assert BRIEF.horizon is not None
    horizon = BRIEF.horizon.model_copy(update={"power_limit_kw": limit})
    curves = powered_curves() if measured else tuple(silicon_curves())
    return make_plan(BRIEF.model_copy(update={"horizon": horizon}), curves, CATALOG)


def measured_option(plan: Plan, gpu: str) -> SizedOption:
    """The cheapest sound option on `gpu` whose curve is its own measurement (adjusted to the
    brief's workload), not a projection from another GPU."""
    return next(
        o
        for o in plan.options
        if isinstance(o, SizedOption)
        and o.gpu.startswith(gpu)
        and o.curve.provenance == "adjusted"
        and not o.concerns
    )


def test_measured_watts_are_read_at_the_sized_load_and_replace_tdp_in_owning() -> None:
    plan = plan_with(None)
    h100 = measured_option(plan, "H100")
    loads = [p.concurrency for p in h100.curve.points]
    at = min(max(h100.concurrency_per_replica, loads[0]), loads[-1])
    found = measured_power(h100)
    assert found is not None and found.watts_per_gpu == pytest.approx(H100_W + at / 10)
    assert f"{h100.concurrency_per_replica:.1f} streams" in found.text
    assert h100.facility_kw is None and h100.fits_power  # no limit: not a constraint
    assert BRIEF.horizon is not None and BRIEF.horizon.owning is not None
    owning = BRIEF.horizon.owning.model_copy(update={"usd_per_kwh": 0.10})
    by_tdp = node_economics(owning, BRIEF.horizon, h100.gpu, 8, 730.0)
    by_run = node_economics(owning, BRIEF.horizon, h100.gpu, 8, 730.0, measured=found)
    assert by_run.power_usd / by_tdp.power_usd == pytest.approx(found.watts_per_gpu / 560.0)
    assert by_run.it_kw == pytest.approx(8 * found.watts_per_gpu / 1000 * OVERHEAD)
    budget = plan_budget(plan, CATALOG)
    rows = {o.option: o for o in budget.power.options}
    assert rows[h100.title()].measured


def test_a_projection_carries_no_power_of_the_gpu_it_came_from() -> None:
    pick = plan_with(None).recommendation.choice
    assert isinstance(pick, SizedOption) and pick.curve.provenance == "projected"
    assert any(p.mean_gpu_power_w == H200_W for p in pick.curve.points)  # copied from H200 ...
    assert measured_power(pick) is None  # ... and never read as the H100's
    budget = plan_budget(plan_with(None), CATALOG)
    assert not budget.power.measured and "TDP" in budget.power.text


def test_a_curve_without_power_keeps_tdp_and_says_what_to_measure() -> None:
    plan = plan_with(None, measured=False)
    assert measured_power(measured_option(plan, "H200")) is None
    budget = plan_budget(plan_with(None, measured=False), CATALOG)
    assert not budget.power.measured and "TDP" in budget.power.text
    assert "probe it on the GPU box" in budget.power.text


def test_the_plan_chooses_within_the_sites_power_and_names_what_it_passed_over() -> None:
    free = plan_with(None).recommendation.choice
    assert isinstance(free, SizedOption) and free.gpu.startswith("H100")
    plan = plan_with(20.0)
    choice = plan.recommendation.choice
    assert isinstance(choice, SizedOption) and choice.gpu.startswith("H200")
    assert choice.fits_power and choice.facility_kw is not None and choice.facility_kw <= 20.0
    assert choice.total_monthly_cost_usd > free.total_monthly_cost_usd
    same = next(o for o in plan.options if o.key == free.key)
    assert isinstance(same, SizedOption) and not same.fits_power
    reason = plan.recommendation.reason
    assert f"Passed over {free.title()}" in reason and "over the site's 20 kW limit" in reason
    assert measured_power(choice) is not None
    per_node = 8 * H200_W / 1000 * OVERHEAD * PUE_HEADROOM
    assert choice.facility_kw == pytest.approx(choice.nodes * per_node)


def test_when_nothing_fits_the_plan_says_so_and_plans_the_least_power() -> None:
    plan = plan_with(10.0)
    rec = plan.recommendation
    assert rec.choice is None and rec.verdict is Verdict.OVER_POWER
    least = rec.over_power
    assert least is not None and least.facility_kw is not None
    sized = [o for o in plan.options if isinstance(o, SizedOption) and not o.concerns]
    assert least.facility_kw == min(o.facility_kw or 0.0 for o in sized)
    assert "fits the site's power limit" in rec.reason and "(1 fit)" in rec.reason
    budget = plan_budget(plan, CATALOG)  # the months are planned over it, every month over
    assert budget.pick is least and budget.power.months_over == tuple(range(1, 25))


def test_no_limit_leaves_the_plan_as_it_was() -> None:
    plain = plan_with(None)
    assert all(
        o.facility_kw is None and o.power_limit_kw is None
        for o in plain.options
        if isinstance(o, SizedOption)
    )
    spec = HorizonSpec(months=3, power_limit_kw=1e6)
    roomy = make_plan(BRIEF.model_copy(update={"horizon": spec}), powered_curves(), CATALOG)
    assert roomy.recommendation.choice is not None and plain.recommendation.choice is not None
    assert roomy.recommendation.choice.key == plain.recommendation.choice.key
    assert roomy.recommendation.reason == plain.recommendation.reason
