"""Scenarios in a real browser: save one from the Plan page, clone it, tighten the clone's TTFT
target, compare the two side by side (inputs diff, two costs, one chart), see the plan history,
then rename one and delete the other; the store agrees at each step."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from db import scenarios
from db.engine import make_engine
from tests.browser.app_server import RunningApp
from tests.browser.pages import (
    PAGE_TIMEOUT_MS,
    app_idle,
    choose,
    choose_all,
    data_frame,
    grid_rows,
    keyed,
    numbers,
    open_options,
    open_page,
    press,
    type_into,
)

pytestmark = pytest.mark.browser

BASE = "my-plan"
CLONE = "my-plan-tight"
RENAMED = "my-plan-strict"
TIGHT_TTFT_MS = 150


def _flash(page: Page, text: str) -> None:
    expect(page.get_by_test_id("stMain").get_by_text(text)).to_be_visible(timeout=PAGE_TIMEOUT_MS)
    app_idle(page)


def _save_from_plan_page(page: Page, name: str, *, over: bool = False) -> None:
    page.get_by_role("button", name=f"Save scenario as '{name}'", exact=True).click()
    if over:  # the name is taken (by this person): the page asks before replacing it
        replace = page.get_by_role("button", name=f"Replace scenario '{name}'", exact=True)
        replace.wait_for(timeout=PAGE_TIMEOUT_MS)
        expect(page.get_by_test_id("stMain")).to_contain_text(
            f"a scenario named '{name}' already exists"
        )
        replace.click()
    _flash(page, f"saved scenario '{name}' and this plan in its history")


def _tighten_clone_on_plan_page(page: Page, app: RunningApp) -> None:
    open_page(page, app.url, "plan")
    choose(page, "plan_saved", CLONE)
    press(page, "plan_load")
    _flash(page, f"loaded scenario '{CLONE}'")
    expect(keyed(page, "plan_name").locator("input")).to_have_value(CLONE)
    ttft = page.get_by_role("spinbutton", name="TTFT p99 (ms)", exact=True)
    ttft.fill(str(TIGHT_TTFT_MS))
    ttft.press("Enter")
    bound = re.compile(rf"TTFT p99 (<=|≤) {TIGHT_TTFT_MS} ms")
    expect(page.get_by_test_id("stMain")).to_contain_text(bound, timeout=PAGE_TIMEOUT_MS)
    app_idle(page)
    _save_from_plan_page(page, CLONE, over=True)


def _compare(page: Page) -> dict[str, float]:
    """Pick both scenarios to compare; check the diff and chart; give each one's $/month."""
    choose_all(page, "compare_names", [BASE, CLONE])
    diff = data_frame(page, "Input")
    expect(diff).to_be_visible(timeout=PAGE_TIMEOUT_MS)
    app_idle(page)
    changed = {row[0]: row[1:] for row in grid_rows(diff)}
    assert changed == {"TTFT p99 (ms)": ["1000.0", f"{TIGHT_TTFT_MS:.1f}"]}, changed
    answers = grid_rows(data_frame(page, "Limited by"))
    costs = {row[0]: numbers(row[3]) for row in answers}
    assert set(costs) == {BASE, CLONE}, answers
    chart = keyed(page, "compare_chart")
    expect(chart.locator(".js-plotly-plot")).to_be_visible(timeout=PAGE_TIMEOUT_MS)
    expect(chart.locator(".legendtext")).to_have_text([BASE, CLONE])
    assert chart.locator(".bars .point").count() >= 2
    return costs


def test_save_clone_compare_rename_delete_scenarios(app: RunningApp, page: Page) -> None:
    store = make_engine(app.db_url)
    open_page(page, app.url, "plan")
    _save_from_plan_page(page, BASE)
    assert [record.name for record in scenarios.list_scenarios(store)] == [BASE]

    open_page(page, app.url, "scenarios")
    choose(page, "manage_name", BASE)
    type_into(page, "manage_new_name", CLONE)
    press(page, "clone")
    _flash(page, f"cloned '{BASE}' as '{CLONE}'")
    _tighten_clone_on_plan_page(page, app)

    open_page(page, app.url, "scenarios")
    costs = _compare(page)
    print(f"compared: {costs}")
    # A tighter first-token target means fewer streams per replica: more replicas, more cost.
    assert costs[CLONE] > costs[BASE] > 1_000

    choose(page, "history_name", BASE)
    frame = data_frame(page, "record_id")
    # The grid can be drawn a moment before its rows arrive: wait for the first one.
    frame.locator("tbody [role=row]").first.wait_for(state="attached", timeout=PAGE_TIMEOUT_MS)
    history = grid_rows(frame)
    assert len(history) == 1, history
    record_id, _, choice, usd_per_month, *_ = history[0]
    assert re.match(r"(tensorrt-llm|TensorRT-LLM) .*GB200", choice), history
    assert round(numbers(usd_per_month)) == round(costs[BASE])
    (record,) = scenarios.plan_history(store, BASE)
    assert record.record_id == int(record_id)
    assert record.run_ids, record
    assert record.catalog_version, record

    choose(page, "manage_name", CLONE)
    type_into(page, "manage_new_name", RENAMED)
    press(page, "rename")
    _flash(page, f"renamed '{CLONE}' to '{RENAMED}'")
    choose(page, "manage_name", BASE)
    keyed(page, "delete_confirm").get_by_text("Yes, delete it").click()
    app_idle(page)
    press(page, "delete")
    _flash(page, f"deleted '{BASE}'")
    assert [record.name for record in scenarios.list_scenarios(store)] == [RENAMED]
    expect(open_options(page, "manage_name")).to_have_text([RENAMED])
    page.keyboard.press("Escape")
