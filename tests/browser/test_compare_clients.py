"""The Curves page comparing the clients in a real browser: the real vllm bench serve and guidellm
runs of one vLLM CPU server on one chart, one legend entry per tool, and a screenshot of it; and
the result folders of four tools, imported as the tools left them, compared at the loads they
share (concurrency 1 and 4, and 2 requests/s)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from db.engine import make_engine, upgrade
from measurements.importers.common import DeploymentOverrides
from team.roles import SYSTEM
from tests.browser.app_server import AppStartError, RunningApp, running_app
from tests.browser.conftest import VIEWPORT
from tests.browser.pages import PAGE_TIMEOUT_MS, open_page
from tests.stores import Stores
from workflows.ingest import IngestOptions, ingest, read_uploads

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from screenshots import CLIENTS_HEADING, prepare_clients, show_clients

pytestmark = pytest.mark.browser
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FOLDERS = (
    FIXTURES / "vllm-bench-serve" / "real-0.32.0",
    FIXTURES / "aiperf" / "real-0.13.0",
    FIXTURES / "guidellm" / "real-0.8.1",
    FIXTURES / "inference-perf" / "real-0.7.0",
)
FACTS = DeploymentOverrides(engine="vllm", model="tiny-random-llama", tp=1)


def _import_folders(db_url: str) -> None:
    """The four tools' real result folders, imported as `capplan import FOLDER...` does."""
    upgrade(db_url)
    engine = make_engine(db_url)
    ingest(engine, read_uploads(list(FOLDERS)), IngestOptions(FACTS, atomic=True), actor=SYSTEM)
    engine.dispose()


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


def test_four_tools_folders_compare_at_the_loads_they_share(
    stores: Stores, wide_page: Page, tmp_path: Path
) -> None:
    try:
        log = tmp_path / "streamlit.log"
        with running_app(stores.empty("folders"), log, _import_folders) as app:
            open_page(wide_page, app.url, "curves")
            show_clients(wide_page)
            chart = wide_page.locator(".js-plotly-plot").filter(has_text=CLIENTS_HEADING)
            expect(chart).to_have_count(1, timeout=PAGE_TIMEOUT_MS)
            legend = chart.locator(".legendtext").all_text_contents()
            assert sorted(legend) == sorted(
                ["vllm bench serve", "aiperf 0.13.0", "guidellm 0.8.1", "inference-perf"]
            ), legend
            main = wide_page.get_by_test_id("stMain")
            expect(main.get_by_text("inference-perf (run")).to_be_visible()
            expect(main.get_by_text("share no load")).to_have_count(0)
            frames = main.get_by_test_id("stDataFrame")
            table = frames.filter(has_text="request rate (req/s)")
            expect(table).to_have_count(1, timeout=PAGE_TIMEOUT_MS)
            expect(table).to_contain_text("inference-perf")
            wide_page.screenshot(path=tmp_path / "compare-folders.png", full_page=True)
    except AppStartError as exc:
        pytest.fail(str(exc), pytrace=False)
