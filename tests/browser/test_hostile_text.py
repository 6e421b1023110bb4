"""Text from files is shown as written in the real app: a value that is Markdown for an image, a
KaTeX formula or a colour directive renders as those characters, and nothing is fetched."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from playwright.sync_api import Page, expect

from tests.browser.app_server import ROOT, RunningApp
from tests.browser.pages import PAGE_TIMEOUT_MS, app_idle, open_page

pytestmark = [pytest.mark.browser, pytest.mark.hostile]

SCENARIO = ROOT / "docs" / "scenarios" / "agent-platform.yaml"


class _Beacon(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Beacon.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def beacon() -> Iterator[str]:
    """A loopback server that records every request; yields its base URL."""
    _Beacon.hits = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Beacon)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_scenario_value_that_is_markdown_is_shown_as_written(
    app: RunningApp, page: Page, beacon: str
) -> None:
    hostile = f"![b]({beacon}/beacon.png) $\\frac{{a}}{{b}}$ :red[x]"
    # A valid scenario plus one unknown key: the error quotes the key's value.
    text = SCENARIO.read_text(encoding="utf-8") + f"surprise: '{hostile}'\n"
    open_page(page, app.url, "plan")
    page.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(
        {"name": "hostile.yaml", "mimeType": "application/yaml", "buffer": text.encode()}
    )
    error = page.get_by_test_id("stMain").get_by_test_id("stAlertContentError").first
    expect(error).to_contain_text("unknown key 'surprise'", timeout=PAGE_TIMEOUT_MS)
    app_idle(page)
    shown = error.inner_text()
    assert f"![b]({beacon}/beacon.png)" in shown, shown
    # The message quotes the value as Python writes it (repr doubles the backslash).
    assert "frac{a}{b}$" in shown and ":red[x]" in shown, shown
    assert error.locator("img").count() == 0
    assert page.locator(".katex").count() == 0
    page.wait_for_timeout(500)  # an image the page did render would have been fetched by now
    assert _Beacon.hits == []
