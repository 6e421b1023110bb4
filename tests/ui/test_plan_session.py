"""A planning session as finance runs it (AppTest on a real demo store): what-if demand side by
side with the plan, a year's cost beside the month's, and inputs that survive a visit to another
page and travel in the page's link."""

from __future__ import annotations

import base64
import zlib

import pytest
from streamlit.testing.v1 import AppTest

from errors import CapplanError
from tests.ui.conftest import app_page, shown
from ui import plan_state

BRIEF = {
    "plan_isl": 1000,
    "plan_osl": 300,
    "plan_demand_peak_requests_per_s": 40.0,
    "plan_budget": 150_000.0,
    "plan_sla_ttft_p99_ms": 1000.0,
    "plan_sla_tpot_p99_ms": 50.0,
}


def _brief(at: AppTest) -> AppTest:
    at.text_input(key="plan_name").set_value("finance-brief")
    for key, value in BRIEF.items():
        at.number_input(key=key).set_value(value)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _what_if(at: AppTest) -> list[dict[str, object]]:
    (table,) = [d for d in at.dataframe if "Pick changes" in d.value.columns]
    rows: list[dict[str, object]] = table.value.to_dict("records")
    return rows


def test_the_brief_shows_what_if_demand_and_a_years_cost(store_url: str) -> None:
    at = _brief(app_page())
    assert at.success, "the brief has a recommendation"
    assert "What if demand grows" in [h.value for h in at.subheader]
    rows = _what_if(at)
    assert [r["Demand"] for r in rows] == ["1x", "1.5x", "2x"]
    assert [r["Requests/s at peak"] for r in rows] == [40.0, 60.0, 80.0]
    for row in rows:
        assert row["$/year"] == 12 * row["$/month"]  # type: ignore[operator]
    for row in rows:  # the pick may move (to another GPU): each row says whether it did
        assert row["Pick changes"] == ("no" if row["Pick"] == rows[0]["Pick"] else "yes")
    same = [r["Nodes"] for r in rows if r["Pick"] == rows[0]["Pick"]]
    assert same == sorted(same)  # type: ignore[type-var]  # more demand, never fewer nodes
    monthly = next(m for m in at.metric if m.label.startswith("Monthly cost"))
    yearly = next(m for m in at.metric if m.label.startswith("Yearly cost"))
    month = float(monthly.value.strip("$").replace(",", ""))
    year = float(yearly.value.strip("$").replace(",", ""))
    assert abs(year - 12 * month) <= 6.0  # each shown to the dollar: 12 x a rounded month
    assert abs(rows[0]["$/month"] - month) <= 0.5  # type: ignore[operator]  # shown to the dollar
    assert any(shown(c.value).startswith("If demand grows: at 1.5x") for c in at.caption)
    # The shipped quotes' age and mix are said on the page, not only in the reports.
    (prices,) = [shown(w.value) for w in at.warning if "months old" in shown(w.value)]
    assert "older than 6 months; check the current price" in prices
    assert "Mixed quotes" in prices and "Prices page" in prices
    # Growth steps the user types are planned too; a bad one is said and the defaults planned.
    at.text_input(key="plan_what_if").set_value("1, 3x, 5").run()
    assert [r["Demand"] for r in _what_if(at)] == ["1x", "3x", "5x"]
    at.text_input(key="plan_what_if").set_value("1, lots").run()
    assert any("'lots'" in shown(e.value) for e in at.sidebar.error)
    assert [r["Demand"] for r in _what_if(at)] == ["1x", "1.5x", "2x"]


def test_inputs_survive_another_page_and_travel_in_the_link(store_url: str) -> None:
    at = _brief(app_page())
    headline = at.success[0].value
    link = at.query_params[plan_state.PARAM]
    assert link, "the page's link carries the scenario"
    at.switch_page("ui/curves.py").run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page("ui/plan.py").run()
    assert not at.exception, [e.value for e in at.exception]
    for key, value in BRIEF.items():
        assert at.number_input(key=key).value == value, key
    assert at.text_input(key="plan_name").value == "finance-brief"
    assert at.success[0].value == headline
    # A new session opened on the link (a reload, or a colleague's browser) plans the same.
    fresh = app_page(**{plan_state.PARAM: link[0] if isinstance(link, list) else link})
    for key, value in BRIEF.items():
        assert fresh.number_input(key=key).value == value, key
    assert fresh.success[0].value == headline
    assert any("opened the scenario in the page's link" in i.value for i in fresh.info)


def test_a_damaged_link_is_said_and_the_page_opens_on_its_defaults(store_url: str) -> None:
    at = app_page(**{plan_state.PARAM: "not-a-capplan-link!!"})
    assert any("could not be opened" in shown(i.value) for i in at.info)
    assert at.number_input(key="plan_isl").value == 1024


def test_a_hostile_link_is_refused_by_the_scenario_limits() -> None:
    deep = "[" * 5000 + "]" * 5000  # tiny once packed, far deeper than a scenario goes
    packed = base64.urlsafe_b64encode(zlib.compress(deep.encode(), 9)).decode().rstrip("=")
    with pytest.raises(CapplanError, match=r"nesting depth|deeper"):
        plan_state.decode(packed)
    with pytest.raises(CapplanError, match="damaged"):
        plan_state.decode("%%%")


def test_targets_take_the_statistic_people_state(store_url: str) -> None:
    at = _brief(app_page())
    expander = "Targets at other statistics (p50, p90, mean)"
    assert expander in [e.label for e in at.sidebar.expander]
    at.number_input(key="plan_sla_ttft_p99_ms").set_value(None)
    at.number_input(key="plan_sla_tpot_p99_ms").set_value(None)
    at.number_input(key="plan_sla_ttft_p50_ms").set_value(400.0)
    at.number_input(key="plan_sla_tpot_p90_ms").set_value(50.0)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert f"{expander}: 2 set" in [e.label for e in at.sidebar.expander]
    said = [shown(w.value) for w in (*at.warning, *at.error)]
    assert at.success, ("a recommendation on the median TTFT and the p90 TPOT", said)
    text = " ".join(shown(m.value) for m in at.markdown)
    limits = [
        str(v)
        for d in at.dataframe
        if "Limited by" in d.value.columns
        for v in d.value["Limited by"]
    ]
    stated = ("median time to first token", "p90 time per output token")
    assert any(s in text for s in stated) or any(
        "TTFT p50" in v or "TPOT p90" in v for v in limits
    ), (text, limits)  # the targets as stated bind the pick or another option
    # The link carries the statistics as stated.
    link = at.query_params[plan_state.PARAM]
    state = plan_state.decode(link[0] if isinstance(link, list) else link)
    assert state.sla.targets() == {"ttft_p50_ms": 400.0, "tpot_p90_ms": 50.0}
