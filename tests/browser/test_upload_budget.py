"""The per-session upload budget in chromium, on the real server: the file that passes the budget
is refused by the page with a message naming it, and the server takes no file after it."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.app_server import ROOT, AppStartError, RunningApp, running_app
from tests.browser.pages import PAGE_TIMEOUT_MS, app_idle, open_page
from tests.stores import Stores

pytestmark = pytest.mark.browser

C8 = ROOT / "tests" / "fixtures" / "vllm-cpu-real" / "c8.json"  # 3,705 bytes
BUDGET_MB = "0.005"  # 5,242 bytes: the first copy fits, the second passes it


@pytest.fixture(scope="module")
def budget_app(
    tmp_path_factory: pytest.TempPathFactory, chromium_executable: str, stores: Stores
) -> Iterator[RunningApp]:
    """The real app with a 5 KiB upload budget per session."""
    folder = tmp_path_factory.mktemp("budget-app")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(os.environ, "CAPPLAN_MAX_SESSION_UPLOAD_MB", BUDGET_MB)
        try:
            with running_app(stores.empty("budget"), folder / "streamlit.log") as running:
                yield running
        except AppStartError as exc:
            pytest.fail(str(exc), pytrace=False)


def _copies(folder: Path, names: tuple[str, ...]) -> list[Path]:
    paths = [folder / name for name in names]
    for path in paths:
        shutil.copyfile(C8, path)
    return paths


def test_the_upload_past_the_session_budget_is_refused(
    budget_app: RunningApp, page: Page, tmp_path: Path
) -> None:
    open_page(page, budget_app.url, "runs")
    uploader = page.get_by_test_id("stFileUploaderDropzoneInput").first
    uploader.set_input_files(_copies(tmp_path, ("a.json", "b.json", "c.json")))
    # The browser sends the three at once; the server takes them one at a time: the first two
    # (the session held less than its budget before each), not the third, sent after the budget
    # was passed (HTTP 413; Streamlit's uploader shows an error icon whose tooltip says only
    # "Request failed with status code 413"). The page then refuses the second by name.
    expect(page.get_by_test_id("stFileChipIconError")).to_have_count(1, timeout=PAGE_TIMEOUT_MS)
    page.get_by_text("Store runs the planner cannot use").click()
    page.get_by_role("button", name="Import", exact=True).click()
    refused = page.get_by_text(re.compile(r"[abc]\.json: not read: 3\.6 KiB more would pass"))
    expect(refused).to_be_visible(timeout=PAGE_TIMEOUT_MS)
    expect(refused).to_contain_text("0.005 MiB upload budget (CAPPLAN_MAX_SESSION_UPLOAD_MB")
    app_idle(page)
