"""Full-page screenshots of the app's pages for the README and docs/:
docs/screenshots/<page>.png, 1400 px.

Starts the real app (streamlit run app.py) on a fresh store with the demo data plus the scenarios
of docs/scenarios/*.yaml, and drives Debian's chromium with Playwright, as tests/browser does; the
Scenarios page is shot comparing them. `clients` shoots the Curves page comparing the clients on
a store of their own (compare-clients.png). Run: .venv/bin/python scripts/screenshots.py
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from team.roles import SYSTEM

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import Page, sync_playwright  # noqa: E402

from db import scenarios  # noqa: E402
from db.engine import make_engine, upgrade  # noqa: E402
from planner.inputs.scenario import scenario_from_yaml  # noqa: E402
from tests.browser.app_server import CHROMIUM_ARGS, chromium_path, running_app  # noqa: E402
from tests.browser.pages import (  # noqa: E402
    PAGE_TIMEOUT_MS,
    PAGES,
    app_idle,
    choose,
    keyed,
    open_page,
)

WIDTH = 1400
HEIGHT = 1000
MAX_HEIGHT = 12_000
# Streamlit scrolls inside its own containers, not the document: a "full page" screenshot would
# stop at the viewport, so the viewport is grown to the tallest scrolling container first.
CONTENT_HEIGHT_JS = """() => Math.max(0, ...[...document.querySelectorAll(
  '[data-testid=stMain], [data-testid=stSidebarContent]')].map(e => e.scrollHeight))"""
SETTLE_POLLS = 20
SETTLE_POLL_MS = 500
SCENARIOS = sorted((ROOT / "docs" / "scenarios").glob("*.yaml"))
# The Curves page comparing two clients of one server: its own store, shot as compare-clients.png.
CLIENTS = "clients"
CLIENTS_HEADING = "Compare the clients"


def seed_scenarios(db_url: str) -> list[str]:
    """Save docs/scenarios/*.yaml in the store (schema created first); their names."""
    upgrade(db_url)
    engine = make_engine(db_url)
    names: list[str] = []
    for path in SCENARIOS:
        text = path.read_text(encoding="utf-8")
        name = scenario_from_yaml(text, str(path)).name
        scenarios.save_scenario(engine, name, text, actor=SYSTEM)
        names.append(name)
    return names


def compare_scenarios(page: Page, names: list[str]) -> None:
    """On the Scenarios page, pick every saved scenario to compare and record a plan of the
    first; wait for the chart."""
    for name in names:
        choose(page, "compare_names", name)
    keyed(page, "compare_chart").locator(".js-plotly-plot").wait_for(timeout=PAGE_TIMEOUT_MS)
    app_idle(page)
    # One recorded plan, so the history section shows a record rather than its empty state.
    keyed(page, "record_now").get_by_role("button").click()
    page.get_by_text("recorded plan").wait_for(timeout=PAGE_TIMEOUT_MS)
    app_idle(page)
    keyed(page, "compare_chart").locator(".js-plotly-plot").wait_for(timeout=PAGE_TIMEOUT_MS)
    page.get_by_role("heading", name="Scenarios", exact=True).click()  # no focused widget


def _content_height(page: Page) -> int:
    """The page's content height once it stops changing (tables and charts draw after the run)."""
    last = -1
    for _ in range(SETTLE_POLLS):
        height = int(page.evaluate(CONTENT_HEIGHT_JS))
        if height == last:
            break
        last = height
        page.wait_for_timeout(SETTLE_POLL_MS)
    return min(max(last, HEIGHT), MAX_HEIGHT)


def _shoot(page: Page, target: Path) -> None:
    page.set_viewport_size({"width": WIDTH, "height": _content_height(page)})
    app_idle(page)
    page.set_viewport_size({"width": WIDTH, "height": _content_height(page)})
    page.screenshot(path=target, full_page=True)
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})


def take(out: Path, names: list[str]) -> list[Path]:
    """Open each named page in the app and save a full-page PNG of it under out."""
    chromium = chromium_path()
    if chromium is None:
        raise SystemExit("no chromium found ($CAPPLAN_CHROMIUM, /usr/bin/chromium)")
    out.mkdir(parents=True, exist_ok=True)
    saved: list[Path] = []
    seeded: list[str] = []
    with (
        tempfile.TemporaryDirectory(prefix="capplan-shots-") as scratch,
        running_app(
            f"sqlite:///{Path(scratch) / 'capplan.db'}",
            Path(scratch) / "streamlit.log",
            prepare=lambda url: seeded.extend(seed_scenarios(url)),
        ) as app,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        for name in names:
            open_page(page, app.url, name)
            if name == "scenarios":
                compare_scenarios(page, seeded)
            target = out / f"{name}.png"
            _shoot(page, target)
            saved.append(target)
            print(f"wrote {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")
        browser.close()
    return saved


def prepare_clients(db_url: str) -> None:
    """A store holding only the real vllm bench serve and guidellm runs of one vLLM CPU server
    (tests/fixtures/vllm-cpu-clients; guidellm's token means at the issue's 129 / 63.9), with
    no GPU stated: it ran on a CPU."""
    from tests.client_runs import RECORDED_FACTS, store_client_runs  # noqa: PLC0415

    upgrade(db_url)
    store_client_runs(db_url, rounded=True, facts=RECORDED_FACTS)


def show_clients(page: Page) -> None:
    """On the Curves page (its only model preselected), wait for the clients' comparison chart."""
    heading = page.get_by_role("heading", name=CLIENTS_HEADING, exact=True)
    heading.wait_for(timeout=PAGE_TIMEOUT_MS)
    page.locator(".js-plotly-plot").last.wait_for(timeout=PAGE_TIMEOUT_MS)
    app_idle(page)
    heading.scroll_into_view_if_needed()


def take_clients(out: Path) -> Path:
    """The Curves page comparing the clients, as out/compare-clients.png."""
    chromium = chromium_path()
    if chromium is None:
        raise SystemExit("no chromium found ($CAPPLAN_CHROMIUM, /usr/bin/chromium)")
    out.mkdir(parents=True, exist_ok=True)
    target = out / "compare-clients.png"
    with (
        tempfile.TemporaryDirectory(prefix="capplan-shots-") as scratch,
        running_app(
            f"sqlite:///{Path(scratch) / 'capplan.db'}",
            Path(scratch) / "streamlit.log",
            prepare=prepare_clients,
        ) as app,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        open_page(page, app.url, "curves")
        show_clients(page)
        _shoot(page, target)
        browser.close()
    print(f"wrote {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("pages", nargs="*", help=f"pages to shoot (default: all of {list(PAGES)})")
    args = parser.parse_args()
    unknown = [name for name in args.pages if name not in (*PAGES, CLIENTS)]
    if unknown:
        parser.error(f"unknown page(s) {unknown}: choose from {[*PAGES, CLIENTS]}")
    wanted = args.pages or [*PAGES, CLIENTS]
    pages = [name for name in wanted if name != CLIENTS]
    if pages:
        take(args.out, pages)
    if CLIENTS in wanted:
        take_clients(args.out)


if __name__ == "__main__":
    main()
