"""Autoscaled against static for the pick: both fleets are what a plan under each scaling gives,
autoscaling never costs more GPU-hours than the peak fleet, and the reacting autoscaler's risk is
the day's requests in each rising hour's lead time."""

from __future__ import annotations

import numpy as np
import pytest

from planner.analysis.autoscale import compare_scaling
from planner.analysis.capacity import Plan, make_plan
from planner.inputs.scenario import DemandSpec, Scaling, Scenario
from planner.sizing.fleet import demand_shape
from planner.sizing.options import SizedOption
from tests.planner.analysis.test_budget import BRIEF, CATALOG
from tests.planner.builders import silicon_curves

PROFILE = (0.3,) * 7 + (0.6, 0.9, 1.0, 1.0, 0.9, 0.8, 0.9, 1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4,
                        0.35, 0.3, 0.3)  # fmt: skip


def _scenario(scaling: Scaling, **demand: object) -> Scenario:
    options = BRIEF.options.model_copy(update={"scaling": scaling})
    spec = DemandSpec.model_validate({"peak_requests_per_s": 40, **demand})
    return BRIEF.model_copy(update={"demand": spec, "options": options, "horizon": None})


def _plan(scenario: Scenario) -> Plan:
    return make_plan(scenario, silicon_curves(), CATALOG)


@pytest.mark.parametrize("scaling", [Scaling.STATIC, Scaling.AUTOSCALE])
def test_both_fleets_are_what_a_plan_under_each_scaling_gives(scaling: Scaling) -> None:
    view = compare_scaling(_plan(_scenario(scaling, hourly_profile=PROFILE)))
    key = view.autoscaled.key
    for kind, got in ((Scaling.AUTOSCALE, view.autoscaled), (Scaling.STATIC, view.static)):
        (want,) = [o for o in _plan(_scenario(kind, hourly_profile=PROFILE)).options
                   if o.key == key]  # fmt: skip
        assert isinstance(want, SizedOption)
        assert got.hourly_replicas == want.hourly_replicas
        assert got.total_monthly_cost_usd == pytest.approx(want.total_monthly_cost_usd)
    assert view.autoscaled.gpu_hours_per_month < view.static.gpu_hours_per_month
    assert view.saving_usd > 0


def test_the_reacting_risk_is_the_requests_in_each_rising_hours_lead() -> None:
    view = compare_scaling(_plan(_scenario(Scaling.AUTOSCALE, hourly_profile=PROFILE)))
    replicas = np.array(view.autoscaled.hourly_replicas, dtype=float)
    rising = replicas > np.roll(replicas, 1)
    weights = demand_shape(_scenario(Scaling.AUTOSCALE, hourly_profile=PROFILE).demand).weights
    want = weights[rising].sum() * min(view.lead_s, 3600) / 3600 / weights.sum()
    assert view.late_share == pytest.approx(want) and view.late_share > 0
    assert view.worst_load == pytest.approx(max(replicas[rising] / np.roll(replicas, 1)[rising]))
    said = view.risk_text()
    assert f"{view.late_share:.1%} of the day's requests" in said
    assert ("SLA is missed" in said) == view.over_capacity


def test_a_flat_day_has_nothing_to_scale() -> None:
    view = compare_scaling(_plan(_scenario(Scaling.AUTOSCALE)))
    assert view.late_share == 0 and "takes no risk" in view.risk_text()


def test_the_session_says_it_only_where_the_day_has_a_shape() -> None:
    from workflows.session import PlanningSession

    def session(scenario: Scenario) -> PlanningSession:
        return PlanningSession(
            scenario, curves=silicon_curves, prices=lambda: CATALOG, runs=lambda ids: [],
            samples=0,
        )  # fmt: skip

    flat = session(_scenario(Scaling.STATIC))
    assert flat.scaling is None and "scaling" not in flat.document(with_sensitivity=False)
    shaped = session(_scenario(Scaling.STATIC, hourly_profile=PROFILE))
    document = shaped.document(with_sensitivity=False)
    scaling = document["scaling"]
    assert isinstance(scaling, dict) and scaling["saving_usd_per_month"] > 0
    assert len(scaling["autoscaled"]["hourly_replicas"]) == 24
