"""The HTML capacity report in a real browser: downloaded from the Plan page, self-contained
(plotly inlined, nothing fetched from the network), naming the shown plan, and its plotly
charts draw when chromium opens the file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, Route, expect

from tests.browser.app_server import RunningApp
from tests.browser.pages import (
    PAGE_TIMEOUT_MS,
    choose,
    dollars,
    download,
    metric_value,
    open_page,
    recommendation,
)

pytestmark = pytest.mark.browser

DEFAULT_CHOICE = "Run TensorRT-LLM TP1 on"
DEFAULT_OPTION = "TensorRT-LLM TP1 on GB200 NVL72 186GB"
HTML_FORMAT = "HTML with interactive charts"
REMOTE_SCRIPT = re.compile(r"<script[^>]*\bsrc\s*=\s*[\"']?(https?:)?//", re.IGNORECASE)
# plotly.js minified is megabytes; an HTML that only links to a CDN is kilobytes.
MIN_INLINED_BYTES = 1_000_000


def _download_html(page: Page, app: RunningApp, folder: Path) -> tuple[Path, str, float]:
    open_page(page, app.url, "plan")
    shown = recommendation(page).inner_text()
    cost = dollars(metric_value(page, "Monthly cost ("))
    choose(page, "plan_report_format", HTML_FORMAT)
    page.get_by_role("button", name="Build report", exact=True).click()
    saved = download(page, "Download the HTML report", folder)
    return saved, shown, cost


def test_html_report_is_self_contained_and_draws_its_charts(
    app: RunningApp, page: Page, tmp_path: Path
) -> None:
    saved, shown, cost = _download_html(page, app, tmp_path)
    assert saved.name == "my-plan-capacity-report.html"
    html = saved.read_text(encoding="utf-8")
    print(f"{saved.name}: {len(html):,} chars; shown ${cost:,.0f}/month")
    assert len(html.encode()) > MIN_INLINED_BYTES
    assert REMOTE_SCRIPT.search(html) is None, REMOTE_SCRIPT.search(html)
    assert "Plotly.newPlot" in html
    assert shown.startswith(DEFAULT_CHOICE), shown
    assert DEFAULT_OPTION in html
    assert f"${cost:,.0f}" in html

    fetched: list[str] = []

    def refuse_network(route: Route) -> None:
        fetched.append(route.request.url)
        route.abort()

    # A page of its own: the app's page may still fetch from the app while the report opens.
    report = page.context.new_page()
    report.route(re.compile(r"^https?://"), refuse_network)
    report.goto(saved.as_uri())
    charts = report.locator(".js-plotly-plot")
    expect(charts.first).to_be_visible(timeout=PAGE_TIMEOUT_MS)
    assert charts.count() >= 3, charts.count()
    # A drawn plotly chart has its SVG layers with traces in them.
    assert report.locator(".js-plotly-plot .main-svg .trace").count() >= 3
    assert fetched == [], fetched
