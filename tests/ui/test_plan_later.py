"""The Plan page draws the plan first and its ranges and sensitivity after, without holding it
up (ui/background.py, over workflows/session.py's stages); a scenario rename plans nothing
again. Behaviour only: the times are in bench/bench_plan_session.py."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from planner.analysis.capacity import Plan, make_plan
from planner.analysis.uncertainty import PlanRanges, ranges_of
from planner.inputs.scenario import scenario_from_dict
from tests.ui.conftest import APP, RUN_TIMEOUT_S, settled
from ui import background
from ui import resources as res
from workflows import session

WAITING = "Reading the cost ranges"


@pytest.fixture
def held_ranges(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The ranges wait on this event before they are computed (set it to let them through)."""
    gate = threading.Event()

    def slow(plan: Plan) -> PlanRanges:
        gate.wait(RUN_TIMEOUT_S)
        return ranges_of(plan)

    monkeypatch.setattr(session, "ranges_of", slow)
    yield gate
    gate.set()


def _captions(at: AppTest) -> list[str]:
    return [c.value for c in at.caption]


def _headers(at: AppTest) -> list[str]:
    return [h.value for h in at.subheader]


def test_the_plan_is_drawn_before_its_ranges_are_in(
    store_url: str, held_ranges: threading.Event
) -> None:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.success) == 1  # the recommendation, while the ranges are still on their way
    assert "Options" in _headers(at) and "Take it away" in _headers(at)
    assert any(WAITING in c for c in _captions(at))
    assert "What moves the answer" not in _headers(at)
    assert not at.get("plotly_chart")
    assert not background.idle()
    held_ranges.set()
    settled(at)
    assert not any(WAITING in c for c in _captions(at))
    assert {"How sure is this?", "What moves the answer"} <= set(_headers(at))
    assert len(at.get("plotly_chart")) == 1  # the cost ranges: the tornado is drawn when asked
    settled(at.button(key="plan_sensitivity_show").click().run())
    assert len(at.get("plotly_chart")) == 2  # cost ranges and the tornado
    # Asked for once, it follows every change.
    settled(at.number_input(key="plan_sla_ttft_p99_ms").set_value(900.0).run())
    assert len(at.get("plotly_chart")) == 2


def test_a_rename_plans_nothing_again(store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    at = settled(AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run())
    before = at.success[0].value
    plans: list[Plan] = []

    def counted(*args: object, **kwargs: object) -> Plan:
        plans.append(make_plan(*args, **kwargs))  # type: ignore[arg-type]
        return plans[-1]

    monkeypatch.setattr(session, "make_plan", counted)
    monkeypatch.setattr(session, "ranges_of", None)  # would fail if called
    monkeypatch.setattr(session, "sensitivity", None)
    at.text_input(key="plan_name").set_value("renamed-plan").run()
    assert not at.exception, [e.value for e in at.exception]
    assert plans == []
    assert at.success[0].value == before
    # The ranges and sensitivity of the same inputs are drawn at once, from the kept results.
    assert {"How sure is this?", "What moves the answer"} <= set(_headers(at))
    assert at.button(key="plan_save").label == "Save scenario as 'renamed-plan'"
    # A change that matters plans again.
    at.number_input(key="plan_sla_ttft_p99_ms").set_value(800.0).run()
    assert len(plans) == 1


def test_the_plan_carries_the_name_it_was_asked_for(store_url: str) -> None:
    version = res.store_version(store_url)
    first = scenario_from_dict(_raw("first"), "test")
    second = scenario_from_dict(_raw("second"), "test")
    assert background.unnamed(first) == background.unnamed(second)
    assert res.plan_for(first, store_url, version).scenario.name == "first"
    assert res.plan_for(second, store_url, version).scenario.name == "second"


def test_scenario_writes_keep_the_plans_and_show_in_the_lists(store_url: str) -> None:
    version = res.store_version(store_url)

    def names() -> list[str]:
        return [r.name for r in res.saved_scenarios(store_url, version)]

    res.save_scenario(store_url, scenario_from_dict(_raw("kept"), "test"))
    assert "kept" in names()
    res.rename_scenario(store_url, "kept", "renamed")
    assert "renamed" in names() and "kept" not in names()
    res.record_plan_now(store_url, "renamed")
    assert len(res.plan_history(store_url, version, "renamed")) == 1
    # No run or price changed: the curves, fits and plans cached for this version stay.
    assert res.store_version(store_url) == version


def _raw(name: str) -> dict[str, object]:
    return {
        "name": name,
        "model": "meta-llama/Llama-3.1-70B",
        "workload": {"isl": 1024, "osl": 1024},
        "demand": {"peak_requests_per_s": 10},
        "sla": {"ttft_p99_ms": 1000},
    }
