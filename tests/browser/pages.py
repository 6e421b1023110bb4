"""Playwright helpers over the capplan app's pages: open a page and wait for it to finish drawing,
read the recommendation, download a file. Every wait is on something visible, never a sleep.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

# The first Plan page of a fresh store loads the demo data, builds curves and fits every run;
# the "How sure is this?" ranges re-plan hundreds of times: minutes on a loaded 2-core box.
PAGE_TIMEOUT_MS = 240_000
# Each page's path (st.navigation names them after the file) and a heading that shows it is
# drawn (one of its last sections).
PAGES: dict[str, tuple[str, str]] = {
    "plan": ("/", "Take it away"),
    "curves": ("/curves", "Physics check"),
    "runs": ("/runs", "Stored runs"),
    "probe": ("/probe", "Probe an endpoint"),
    "scenarios": ("/scenarios", "Scenarios"),
    "prices": ("/prices", "GPU specs"),
    "models": ("/models", "Add a model"),
}


def app_idle(page: Page) -> None:
    """Wait until the script run is over (Streamlit shows a stop button/spinner while running)."""
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=PAGE_TIMEOUT_MS)


def open_page(page: Page, base_url: str, name: str) -> None:
    """Go to one of the app's pages; wait until its marker heading is drawn and the run is over."""
    path, marker = PAGES[name]
    page.goto(f"{base_url}{path}")
    heading = page.get_by_test_id("stMain").get_by_role("heading", name=marker, exact=True)
    expect(heading).to_be_visible(timeout=PAGE_TIMEOUT_MS)
    app_idle(page)


def recommendation(page: Page) -> Locator:
    """The Plan page's recommendation (the st.success box under the title)."""
    return page.get_by_test_id("stMain").get_by_test_id("stAlertContentSuccess").first


def metric_value(page: Page, label: str) -> str:
    """The shown value of the st.metric whose label contains label."""
    metric = page.get_by_test_id("stMetric").filter(has_text=label)
    return metric.get_by_test_id("stMetricValue").inner_text()


def dollars(text: str) -> float:
    """'$34,456' -> 34456.0."""
    return float(text.strip().lstrip("$").replace(",", ""))


def column_headers(frame: Locator) -> list[str]:
    """A data frame's column names (the columns scrolled into view)."""
    return frame.locator("[role=columnheader]").all_inner_texts()


def data_frame(page: Page, column: str) -> Locator:
    """The st.dataframe that has a column header named column.

    The grid is drawn on a canvas; its cells live in an accessible table inside the canvas,
    which Playwright counts as hidden, so role= selectors are CSS here, not get_by_role.
    """
    header = page.locator("[role=columnheader]", has_text=re.compile(f"^{re.escape(column)}$"))
    return page.get_by_test_id("stDataFrame").filter(has=header).first


def grid_rows(frame: Locator) -> list[list[str]]:
    """The cells of a data frame's accessible grid, row by row (the columns scrolled into view)."""
    rows = frame.locator("tbody [role=row]")
    return [rows.nth(i).locator("[role=gridcell]").all_inner_texts() for i in range(rows.count())]


def download(page: Page, button: str, folder: Path) -> Path:
    """Press the download button labelled button and save what the browser receives in folder."""
    with page.expect_download(timeout=PAGE_TIMEOUT_MS) as started:
        # A button that appears once its file is built (the PDF report: seconds, more on a busy
        # machine) is waited for as long as a page is.
        page.get_by_role("button", name=button, exact=True).click(timeout=PAGE_TIMEOUT_MS)
    received = started.value
    target = folder / received.suggested_filename
    received.save_as(target)
    return target


def keyed(page: Page, key: str) -> Locator:
    """The element of the widget or chart created with key= (Streamlit marks it .st-key-<key>)."""
    return page.locator(f".st-key-{key}")


def open_options(page: Page, key: str, typed: str = "") -> Locator:
    """Open the option list of the selectbox or multiselect created with key=; its options
    (narrowed to those matching `typed`, as a person types to find one in a long list: the list
    renders only the options in view).

    Streamlit's combobox opens on a key press, not on a click into its text field.
    """
    field = keyed(page, key).get_by_role("combobox")
    field.click()
    field.press("ArrowDown")
    if typed:
        field.press_sequentially(typed)
    return page.get_by_role("listbox").get_by_role("option")


CHOOSE_ATTEMPTS = 3
OPTION_TIMEOUT_MS = 20_000


def choose(page: Page, key: str, option: str) -> None:
    """Pick option in the selectbox or multiselect created with key= (a multiselect adds it).

    A rerun that lands while the list is opening closes it again; then the list is reopened.
    """
    wanted = re.compile(f"^{re.escape(option)}$")
    for attempt in range(1, CHOOSE_ATTEMPTS + 1):
        app_idle(page)
        try:
            open_options(page, key, option).filter(has_text=wanted).click(timeout=OPTION_TIMEOUT_MS)
            break
        except PlaywrightTimeoutError:
            page.keyboard.press("Escape")
            if attempt == CHOOSE_ATTEMPTS:
                raise
    page.keyboard.press("Escape")
    app_idle(page)


def choose_all(page: Page, key: str, options: Sequence[str]) -> None:
    """Pick every option in the multiselect created with key=, until each shows as picked: a
    rerun still running from one pick can reset the widget to the picks it knew of."""
    for _ in range(CHOOSE_ATTEMPTS):
        missing = [
            option
            for option in options
            if keyed(page, key).get_by_role("button", name=f"Remove {option}", exact=True).count()
            == 0
        ]
        if not missing:
            return
        for option in missing:
            choose(page, key, option)
    picked = keyed(page, key).inner_text()
    raise AssertionError(f"{key}: could not pick {list(options)} (shows {picked!r})")


def type_into(page: Page, key: str, text: str) -> None:
    """Replace the text of the text or number input created with key= and commit it (Enter)."""
    field = keyed(page, key).locator("input")
    field.fill(text)
    field.press("Enter")
    app_idle(page)


def press(page: Page, key: str) -> None:
    """Click the button created with key= and wait for the run it starts to end."""
    keyed(page, key).get_by_role("button").click()
    app_idle(page)


def numbers(text: str) -> float:
    """A number as a data frame shows it ('34,456.25') -> 34456.25."""
    return float(text.replace(",", "").replace("$", ""))
