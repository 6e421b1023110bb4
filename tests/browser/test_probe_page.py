"""The Probe page in a real browser: sweep the simulated engine (`capplan sim-server`, run as a
subprocess) with a tiny two-level sweep, watch progress finish, read the per-level table, and find
the stored run on the Runs page and in the store."""

from __future__ import annotations

import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from db import run_lists
from db.engine import make_engine
from tests.browser.app_server import ROOT, RunningApp
from tests.browser.pages import (
    PAGE_TIMEOUT_MS,
    app_idle,
    choose,
    data_frame,
    grid_rows,
    keyed,
    numbers,
    open_page,
)
from tests.ports import free_port

pytestmark = pytest.mark.browser

RUNS_DIR = ROOT / "data" / "probe-runs"
CAPPLAN = ROOT / ".venv" / "bin" / "capplan"
# tiny-fast serves "sim-tiny", a model no demo curve has: the probed run cannot move any plan
# the other browser tests check.
PROFILE = "tiny-fast"
MODEL = "sim-tiny"
LEVELS = (1, 2)
REQUESTS_PER_LEVEL = 4
SIM_START_TIMEOUT_S = 60.0


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/v1/models", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture
def sim_server(tmp_path: Path) -> Iterator[str]:
    """`capplan sim-server` on a free port; its base URL (no /v1), stopped afterwards."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [str(CAPPLAN), "sim-server", "--port", str(port), "--profile", PROFILE]
    with (tmp_path / "sim.log").open("wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + SIM_START_TIMEOUT_S
            while not _answers(url):
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"sim-server did not answer on {url}", pytrace=False)
                time.sleep(0.2)
            yield url
        finally:
            process.terminate()
            process.wait(timeout=20)


@pytest.fixture
def new_run_files() -> Iterator[list[Path]]:
    """The run files the Probe page writes during the test (ui/probe.RUNS_DIR, relative to the
    app's working folder, the repository); removed afterwards so no test leaves files there."""
    before = set(RUNS_DIR.glob("*.json"))
    created: list[Path] = []
    yield created
    for path in set(RUNS_DIR.glob("*.json")) - before:
        path.unlink()


def _fill_form(page: Page, base_url: str) -> None:
    keyed(page, "probe_base_url").locator("input").fill(base_url)
    keyed(page, "probe_model").locator("input").fill(MODEL)
    keyed(page, "probe_isl").locator("input").fill("32")
    keyed(page, "probe_osl").locator("input").fill("16")
    keyed(page, "probe_levels").locator("input").fill(",".join(map(str, LEVELS)))
    keyed(page, "probe_requests").locator("input").fill(str(REQUESTS_PER_LEVEL))


def test_probe_page_sweeps_the_simulator_and_stores_the_run(
    app: RunningApp, page: Page, sim_server: str, new_run_files: list[Path]
) -> None:
    open_page(page, app.url, "probe")  # the first page opened creates the store
    store = make_engine(app.db_url)
    before = {run.run_id for run in run_lists.list_runs(store)}
    files_before = set(RUNS_DIR.glob("*.json"))
    _fill_form(page, sim_server)
    page.get_by_role("button", name="Run the sweep", exact=True).click()
    main = page.get_by_test_id("stMain")
    expect(main.get_by_test_id("stProgress")).to_be_visible(timeout=PAGE_TIMEOUT_MS)
    expect(main.get_by_text("Sweep complete")).to_be_visible(timeout=PAGE_TIMEOUT_MS)
    app_idle(page)
    expect(main.get_by_test_id("stProgress")).to_contain_text("Done")
    table = data_frame(page, "TTFT p99 (ms)")
    expect(table.locator("tbody [role=row]")).to_have_count(len(LEVELS))
    levels = grid_rows(table)
    print(f"levels: {levels}")
    assert [row[0] for row in levels] == [f"concurrency {c}" for c in LEVELS], levels
    for load, tok_s, ttft_p50, ttft_p99, _, completed, failed in levels:
        assert numbers(tok_s) > 0 and 0 < numbers(ttft_p50) <= numbers(ttft_p99), load
        assert (int(completed), int(failed)) == (REQUESTS_PER_LEVEL, 0), load

    new_run_files.extend(set(RUNS_DIR.glob("*.json")) - files_before)
    assert len(new_run_files) == 1, new_run_files
    assert MODEL in new_run_files[0].read_text(encoding="utf-8")
    (new,) = [run for run in run_lists.list_runs(store) if run.run_id not in before]
    assert (new.model, new.levels, new.complete) == (MODEL, len(LEVELS), True), new
    open_page(page, app.url, "runs")
    choose(page, "filter_model", MODEL)
    table = data_frame(page, "run")
    expect(table.locator("tbody [role=row]")).to_have_count(1)
    runs = grid_rows(table)
    run_id, _, _, engine, _, model, *_ = runs[0]
    assert (int(run_id), engine, model) == (new.run_id, "other", MODEL), runs
