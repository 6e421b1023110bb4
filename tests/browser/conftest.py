"""The real app (streamlit run app.py on a fresh SQLite store) driven by Playwright in Debian's
chromium (no browser download).

Without chromium these tests skip, unless CAPPLAN_REQUIRE_BROWSER=1 (CI), where they fail instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import NoReturn

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, ViewportSize, sync_playwright

from tests.browser.app_server import (
    CHROMIUM_ARGS,
    AppStartError,
    RunningApp,
    chromium_path,
    running_app,
)
from tests.stores import Stores

VIEWPORT: ViewportSize = {"width": 1400, "height": 1000}


def pytest_configure(config: pytest.Config) -> None:
    """Register the `browser` marker (pytest runs with --strict-markers)."""
    config.addinivalue_line(
        "markers", "browser: drives the real app in chromium with Playwright (Debian chromium)"
    )


def browser_required() -> bool:
    """True when CI demands the browser tests: a missing chromium is then a failure, not a skip."""
    return os.environ.get("CAPPLAN_REQUIRE_BROWSER", "") == "1"


def unavailable(reason: str) -> NoReturn:
    """Skip the test, or fail it when CAPPLAN_REQUIRE_BROWSER=1 so CI can never pass by skipping."""
    if browser_required():
        pytest.fail(f"CAPPLAN_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def chromium_executable() -> str:
    """Debian's chromium (apt-get install chromium), or $CAPPLAN_CHROMIUM."""
    path = chromium_path()
    if path is None:
        unavailable(
            "no chromium found ($CAPPLAN_CHROMIUM, /usr/bin/chromium): apt-get install chromium"
        )
    return path


# Package scope, not session: Playwright's sync API keeps an event loop running in the main
# thread until it stops, and every later asyncio.run() (the probe, the simulator) would fail.
@pytest.fixture(scope="package")
def browser(chromium_executable: str) -> Iterator[Browser]:
    """One headless chromium for the browser tests, stopped when they are done."""
    with sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(
                executable_path=chromium_executable, args=CHROMIUM_ARGS
            )
        except Exception as exc:  # noqa: BLE001 - any launch failure means: no usable browser
            unavailable(f"chromium at {chromium_executable} did not start: {exc}")
        yield launched
        launched.close()


@pytest.fixture(scope="package")
def app(
    tmp_path_factory: pytest.TempPathFactory, chromium_executable: str, stores: Stores
) -> Iterator[RunningApp]:
    """The real app on an empty store of the backend under test: it loads the demo data on first
    start, as users see.

    Asks for chromium first so a machine without it skips (or fails) before starting the app.
    """
    folder = tmp_path_factory.mktemp("browser-app")
    try:
        with running_app(stores.empty("browser"), folder / "streamlit.log") as running:
            yield running
    except AppStartError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh browser context (own Streamlit session) and page, 1400 px wide, downloads on."""
    context: BrowserContext = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    opened = context.new_page()
    yield opened
    context.close()
