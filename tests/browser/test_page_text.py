"""Every page of the app, with its folded details opened, reads as plain text: no file of the
source tree and no raw markdown (tests/user_text.py says what either looks like)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tests.browser.app_server import RunningApp
from tests.browser.pages import PAGES, app_idle, open_page
from tests.user_text import problems

pytestmark = pytest.mark.browser


def test_no_page_names_a_source_file_or_shows_markdown(app: RunningApp, page: Page) -> None:
    found: dict[str, list[str]] = {}
    for name in PAGES:
        open_page(page, app.url, name)
        expanders = page.get_by_test_id("stExpander").locator("summary")
        for index in range(expanders.count()):
            expanders.nth(index).click()
        app_idle(page)
        text = page.locator("body").inner_text()
        if problems(text):
            found[name] = problems(text)[:5]
    assert not found, found
