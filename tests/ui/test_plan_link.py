"""The Plan page's link carries any text a field accepts (emoji, quotes, backslashes, characters
beyond the Basic Multilingual Plane) and a saved scenario's prices, and restores them exactly."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from planner.inputs.scenario import Scenario, load_scenario
from tests.ui.conftest import ROOT, app_page, shown
from ui import plan_state

H100 = "H100-SXM-80GB"
RUNPOD = "RunPod | H100 SXM5 (Secure Cloud) | on_demand"
NAME = 'launch 🚀 "q3" \\ 𠜎 \\u00e9'  # an emoji, quotes, backslashes, a non-BMP letter
NAMES = (
    "launch 🚀 plan",
    'the "big" one',
    "C:\\plans\\q3 \\u00e9 \\ud83d",
    "𠜎 non-BMP 🦙 ∑ 中文 'x' \\\"",
    "👩‍👩‍👧 family",  # the scenario drops the zero-width joiners (clean_name); the link keeps that
)


def _link(at: AppTest) -> str:
    value = at.query_params[plan_state.PARAM]
    return value[0] if isinstance(value, list) else value


def _options(at: AppTest) -> list[dict[str, object]]:
    (frame,) = [d.value for d in at.dataframe if "recommended" in d.value.columns]
    rows: list[dict[str, object]] = frame.to_dict("records")
    return rows


@pytest.mark.parametrize("name", NAMES)
def test_the_link_carries_any_name_exactly(name: str) -> None:
    base = load_scenario(ROOT / "docs" / "scenarios" / "agent-platform.yaml")
    scenario = Scenario.model_validate(base.model_dump() | {"name": name})
    assert plan_state.decode(plan_state.encode(scenario)) == scenario
    assert scenario.name == name or "\u200d" in name


def test_a_link_with_an_emoji_name_and_typed_prices_reopens_them(store_url: str) -> None:
    at = app_page()
    at.text_input(key="plan_name").set_value(NAME).run()
    assert not at.exception, [e.value for e in at.exception]
    planned = plan_state.decode(_link(at))
    typed = planned.model_copy(update={"pricing": {H100: 3.33}})
    fresh = app_page(**{plan_state.PARAM: plan_state.encode(typed)})
    said = [shown(i.value) for i in fresh.info]
    assert any("opened the scenario in the page's link" in s for s in said), said
    assert fresh.text_input(key="plan_name").value == NAME
    h100 = [o for o in _options(fresh) if o["gpu"] == H100]
    assert h100 and {o["usd_per_gpu_hour"] for o in h100} == {3.33}
    assert plan_state.decode(_link(fresh)).on_demand_price(H100) == 3.33


def test_a_link_with_a_picked_quote_reopens_the_pick(store_url: str) -> None:
    at = app_page()
    at.selectbox(key=f"plan_price_quote_{H100}").set_value(RUNPOD).run()
    link = _link(at)
    fresh = app_page(**{plan_state.PARAM: link})
    assert fresh.selectbox(key=f"plan_price_quote_{H100}").value == RUNPOD
    h100 = [o for o in _options(fresh) if o["gpu"] == H100]
    assert h100 and {o["usd_per_gpu_hour"] for o in h100} == {2.69}
