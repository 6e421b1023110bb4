"""The Plan page's months ahead (issue 33): a scenario with a horizon opens with it planned (the
ways to pay, their charts and sentences) and its link keeps every horizon field; turned on from
the sidebar, the defaults plan 24 months and a node price adds owning."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from planner.inputs.scenario import load_scenario
from tests.ui.conftest import ROOT, app_page
from ui import plan_horizon, plan_state

BRIEF = load_scenario(ROOT / "docs" / "scenarios" / "budget-24-months.yaml")


def _link(at: AppTest) -> str:
    value = at.query_params[plan_state.PARAM]
    return value[0] if isinstance(value, list) else value


def _ways(at: AppTest) -> list[str]:
    frames = [d.value for d in at.dataframe if "Way" in d.value.columns]
    assert len(frames) == 1, [list(d.value.columns) for d in at.dataframe]
    return list(frames[0]["Way"])


@pytest.mark.slow
def test_a_scenario_with_months_ahead_opens_priced_every_way(store_url: str) -> None:
    at = app_page(**{plan_state.PARAM: plan_state.encode(BRIEF)})
    assert not at.exception, [e.value for e in at.exception]
    assert "Over the months ahead" in [h.value for h in at.subheader]
    assert sorted(_ways(at)) == ["commitments", "hosted API", "on-demand", "owning"]
    said = " ".join(m.value for m in at.markdown)
    assert "Over 24 months, " in said and "is the cheapest way to serve" in said
    assert at.checkbox(key=plan_horizon.ON).value is True
    assert at.number_input(key="plan_horizon_node_price").value == 320_000
    # Every horizon field survives the widgets, the ones they do not show included.
    again = plan_state.decode(_link(at))
    assert again.horizon == BRIEF.horizon


@pytest.mark.slow
def test_turned_on_in_the_sidebar_the_defaults_plan_and_a_node_price_adds_owning(
    store_url: str,
) -> None:
    at = app_page()
    assert "Over the months ahead" not in [h.value for h in at.subheader]
    at.checkbox(key=plan_horizon.ON).check().run()
    assert not at.exception, [e.value for e in at.exception]
    ways = _ways(at)
    assert "on-demand" in ways and "owning" not in ways and "hosted API" not in ways
    horizon = plan_state.decode(_link(at)).horizon
    assert horizon is not None and horizon.months == 24 and horizon.monthly_growth_pct == 5
    at.number_input(key="plan_horizon_node_price").set_value(300_000.0).run()
    assert "owning" in _ways(at)


def test_the_widgets_write_over_what_a_file_set_and_leave_the_rest() -> None:
    base = {"monthly_demand": [10, 12], "owning": {"node_price_usd": 1.0, "residual_pct": 20}}
    values = {key: default for key, _, default in plan_horizon.FIELDS}
    values["plan_horizon_node_price"] = 250_000.0
    values["plan_horizon_api_in"] = 0.5
    made = plan_horizon.horizon_from(base, values)
    assert made["monthly_demand"] == [10, 12] and "months" not in made
    assert made["owning"] == {"node_price_usd": 250_000.0, "residual_pct": 20,
                              "lead_time_months": 3, "usd_per_kwh": 0.10}  # fmt: skip
    assert made["hosted_api"] == {"usd_per_million_input": 0.5, "usd_per_million_output": 0.5}
    values["plan_horizon_node_price"] = None
    assert "owning" not in plan_horizon.horizon_from(base, values)
