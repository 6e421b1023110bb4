"""The Curves page comparing the clients in a real browser: the real vllm bench serve and guidellm
runs of one vLLM CPU server on one chart, one legend entry per tool, and a screenshot of it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.app_server import AppStartError, RunningApp, running_app
from tests.browser.conftest import VIEWPORT
from tests.browser.pages import PAGE_TIMEOUT_MS, open_page
from tests.stores import Stores

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from screenshots import CLIENTS_HEADING, prepare_clients, show_clients

pytestmark = pytest.mark.browser
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def clients_app(
    tmp_path_factory: pytest.TempPathFactory, chromium_executable: str, stores: Stores
) -> Iterator[RunningApp]:
    """The app on a store holding only the two clients' runs of one server."""
    folder = tmp_path_factory.mktemp("clients-app")
    try:
        with running_app(stores.empty("clients"), folder / "streamlit.log", prepare_clients) as app:
            yield app
    except AppStartError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def wide_page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport=VIEWPORT)
    yield context.new_page()
    context.close()


def test_the_clients_share_one_chart_one_legend_entry_per_tool(
    clients_app: RunningApp, wide_page: Page, tmp_path: Path
) -> None:
    open_page(wide_page, clients_app.url, "curves")
    show_clients(wide_page)
    chart = wide_page.locator(".js-plotly-plot").filter(has_text=CLIENTS_HEADING)
    expect(chart).to_have_count(1, timeout=PAGE_TIMEOUT_MS)
    legend = chart.locator(".legendtext").all_text_contents()  # SVG text: no inner text
    assert legend == ["vllm bench serve", "guidellm 0.8.1"]
    main = wide_page.get_by_test_id("stMain")
    expect(main.get_by_text("guidellm 0.8.1 (run")).to_be_visible()
    expect(
        main.get_by_text("Workload 128/64 holds runs measured at 128/64, 129/64")
    ).to_be_visible()
    shot = tmp_path / "compare-clients.png"
    wide_page.screenshot(path=shot, full_page=True)
    assert shot.read_bytes().startswith(PNG_MAGIC)
