"""A planning session in the real app: `streamlit run app.py` on (a) the demo store and (b) a
10,000-run store, driven by Playwright in Debian's chromium through 20 changes on the Plan page
(SLA targets, demand, budget, a price, toggles, scenario renames, workload, candidate GPUs,
model).

Per change it times, from the widget commit: `settled`, the first full script run that finishes
after it (Streamlit's `script_finished` message on the app's websocket) with the running
indicator gone and the recommendation drawn; and `ranges`, until the "How sure is this?" ranges
and the sensitivity chart are drawn as well (the same moment when the page computes them inline).
It also times the first Plan page of a freshly started app on a store that is already migrated
and filled, once the server says it has opened the store and read the first model's curves
(ui/serve.py's start-up line, timed too): "once the store is open". Prints p50/p95/max per
store and kind of change.

Run: `python bench/bench_plan_session.py [--stores demo,scale] [--out FILE]`; the 10,000-run
store is built once under --workdir (demo data plus bench/scale_runs.py's synthetic runs, few
samples: the Plan page never reads them) and reused.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from team.roles import SYSTEM

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import Page, WebSocket, sync_playwright  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402

from bench.scale_runs import batches  # noqa: E402
from db import repository  # noqa: E402
from db.engine import make_engine, upgrade  # noqa: E402
from db.seed import ensure_demo_data  # noqa: E402
from tests.browser.app_server import CHROMIUM_ARGS, chromium_path, running_app  # noqa: E402
from tests.browser.pages import PAGE_TIMEOUT_MS, app_idle, keyed, open_page  # noqa: E402
from ui.serve import WARM  # noqa: E402

RANGES_MARKER = "re-plans on fits perturbed"
SENSITIVITY_MARKER = "Each input moved 10% down and up"
POLL_MS = 10
VIEWPORT = {"width": 1400, "height": 1000}


# ---------------------------------------------------------------- stores


def demo_store(workdir: Path) -> str:
    """A fresh SQLite store with the demo data, as the quick start's first start leaves it."""
    path = workdir / "demo.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    url = f"sqlite:///{path}"
    upgrade(url)
    ensure_demo_data(make_engine(url))
    return url


def scale_store(workdir: Path, runs: int, samples: int) -> str:
    """The demo data plus `runs` synthetic probe-like runs (built once, then reused)."""
    path = workdir / f"scale-{runs}.db"
    url = f"sqlite:///{path}"
    if path.exists():
        return url
    partial = workdir / f"scale-{runs}.partial.db"
    partial.unlink(missing_ok=True)
    partial_url = f"sqlite:///{partial}"
    upgrade(partial_url)
    engine = make_engine(partial_url)
    ensure_demo_data(engine)
    start = time.perf_counter()
    for batch in batches(runs, samples, 100):
        repository.save_runs(engine, batch, actor=SYSTEM)
    engine.dispose()
    print(f"built {runs} runs in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    partial.rename(path)
    return url


# ---------------------------------------------------------------- the session


@dataclass(frozen=True, slots=True)
class Change:
    """One user action on the Plan page: its kind and how the browser does it."""

    kind: str
    label: str
    act: Callable[[Page], None]


def _number(key: str, text: str) -> Callable[[Page], None]:
    def act(page: Page) -> None:
        field = keyed(page, key).locator("input")
        field.fill(text)
        field.press("Enter")

    return act


def _radio(key: str, label: str) -> Callable[[Page], None]:
    def act(page: Page) -> None:
        keyed(page, key).get_by_text(label, exact=True).click()

    return act


def _checkbox(key: str) -> Callable[[Page], None]:
    def act(page: Page) -> None:
        keyed(page, key).get_by_role("checkbox").click(force=True)

    return act


H100_QUOTE = "plan_price_quote_H100-SXM-80GB"


def _keys(key: str, *presses: str, text: str = "") -> Callable[[Page], None]:
    """Click a select box's (or multiselect's) input, type `text`, then press the keys."""

    def act(page: Page) -> None:
        keyed(page, key).locator("input").click()
        if text:
            page.keyboard.type(text)
        for press in presses:
            page.keyboard.press(press)

    return act


def _next_quote(key: str) -> Callable[[Page], None]:
    """Pick the next price-catalog quote in a GPU's price picker (the Plan page's price input)."""
    return _keys(key, "ArrowDown", "Enter")


def _pick(key: str, text: str) -> Callable[[Page], None]:
    """Type into a select box or multiselect and take the first match (Enter)."""
    return _keys(key, "Enter", "Escape", text=text)


def _drop_last(key: str) -> Callable[[Page], None]:
    """Remove a multiselect's last chosen item (Backspace in its input)."""
    return _keys(key, "Backspace", "Escape")


RESERVED = "reserved (1-year or longer)"
SESSION: tuple[Change, ...] = (
    Change("sla", "TTFT p99 800 ms", _number("plan_sla_ttft_p99_ms", "800")),
    Change("sla", "TPOT p99 60 ms", _number("plan_sla_tpot_p99_ms", "60")),
    Change("demand", "20 req/s", _number("plan_demand_peak_requests_per_s", "20")),
    Change("budget", "$80,000/month", _number("plan_budget", "80000")),
    Change("price", "H100: the next catalog quote", _next_quote(H100_QUOTE)),
    Change("rename", "name bench-a", _number("plan_name", "bench-a")),
    Change("toggle", "autoscale", _radio("plan_scaling", "autoscale with demand")),
    Change("toggle", "reserved pricing", _radio("plan_pricing_mode", RESERVED)),
    Change("sla", "TTFT p99 1500 ms", _number("plan_sla_ttft_p99_ms", "1500")),
    Change("demand", "5 req/s", _number("plan_demand_peak_requests_per_s", "5")),
    Change("rename", "name bench-b", _number("plan_name", "bench-b")),
    Change("toggle", "structured output", _checkbox("plan_factor_structured_output")),
    Change("spares", "2 spare replicas", _number("plan_redundancy", "2")),
    Change("price", "H100: the quote after that", _next_quote(H100_QUOTE)),
    Change("sla", "TPOT target cleared", _number("plan_sla_tpot_p99_ms", "")),
    Change("budget", "$40,000/month", _number("plan_budget", "40000")),
    Change("toggle", "static fleet", _radio("plan_scaling", "static fleet sized for the peak")),
    Change("demand", "12 req/s", _number("plan_demand_peak_requests_per_s", "12")),
    Change("rename", "name bench-c", _number("plan_name", "bench-c")),
    Change("sla", "TTFT p99 1000 ms", _number("plan_sla_ttft_p99_ms", "1000")),
    Change("workload", "ISL 2000", _number("plan_isl", "2000")),
    Change("workload", "OSL 500", _number("plan_osl", "500")),
    Change("candidates", "GPUs: the last one dropped", _drop_last("plan_gpus")),
    Change("candidates", "GPUs: GB200 back", _pick("plan_gpus", "GB200")),
    Change("model", "gpt-oss-120b", _pick("plan_model", "gpt-oss-120b")),
    Change("model", "back to Llama-3.1-70B", _pick("plan_model", "Llama-3.1-70B")),
)


@dataclass  # not slotted: Playwright marks the handlers it wraps with an attribute
class RunLog:
    """Times (perf_counter) at which the app's websocket said a full script run finished."""

    finished: list[float] = field(default_factory=list)

    def watch(self, socket: WebSocket) -> None:
        socket.on("framereceived", self._frame)

    def _frame(self, payload: str | bytes) -> None:
        if isinstance(payload, str):
            return
        message = ForwardMsg.FromString(payload)
        if (
            message.WhichOneof("type") == "script_finished"
            and message.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY
        ):
            self.finished.append(time.perf_counter())


# True when a section is drawn by the current run: its keyed container (the page now) holds a
# chart, or (the page before) an element that is not stale shows its caption.
DRAWN_JS = """([key, text]) => {
    const fresh = e => e.getAttribute('data-stale') !== 'true';
    const box = document.querySelector('.st-key-' + key);
    const chart = box && box.querySelector('[data-testid="stPlotlyChart"]');
    if (box) return !!chart && fresh(chart.closest('[data-testid="stElementContainer"]'));
    return [...document.querySelectorAll('[data-testid="stElementContainer"]')]
        .some(e => fresh(e) && e.innerText.includes(text));
}"""


def _drawn(page: Page, key: str, text: str) -> bool:
    return bool(page.evaluate(DRAWN_JS, [key, text]))


# With --sensitivity the session first presses "Show what moves the answer" (off by default:
# a re-plan per input moved), and every change then waits for the tornado too.
WITH_SENSITIVITY = {"on": False}


def _companions_drawn(page: Page) -> bool:
    """The ranges are drawn (and the sensitivity chart, when the session asked for it)."""
    ranges = _drawn(page, "plan_ranges", RANGES_MARKER)
    if not WITH_SENSITIVITY["on"]:
        return ranges
    return ranges and _drawn(page, "plan_sensitivity", SENSITIVITY_MARKER)


def _settled(page: Page) -> bool:
    """The running indicator is gone and the recommendation is drawn."""
    return page.get_by_test_id("stStatusWidget").count() == 0 and _recommendation_drawn(page)


def _recommendation_drawn(page: Page) -> bool:
    main = page.get_by_test_id("stMain")
    # A sound pick is a success box; over budget or only flagged data, a warning; none, an error.
    return bool(
        main.get_by_test_id("stAlertContentSuccess").count()
        or main.get_by_test_id("stAlertContentWarning").count()
        or main.get_by_test_id("stAlertContentError").count()
    )


def time_change(page: Page, log: RunLog, change: Change) -> dict[str, Any]:
    """Do one change; seconds until the run after it settled, and until the ranges were in."""
    seen = len(log.finished)
    start = time.perf_counter()
    change.act(page)
    deadline = start + PAGE_TIMEOUT_MS / 1000
    settled: float | None = None
    ranges: float | None = None
    while time.perf_counter() < deadline and ranges is None:
        if settled is None and len(log.finished) > seen and _settled(page):
            settled = time.perf_counter() - start
        if settled is not None and _companions_drawn(page):
            ranges = time.perf_counter() - start
        page.wait_for_timeout(POLL_MS)
    if settled is None or ranges is None:
        raise TimeoutError(f"{change.label}: the page did not settle in {deadline - start:.0f} s")
    app_idle(page)  # a later fragment run must not overlap the next change
    print(f"  {change.label}: settled {settled:.2f} s, ranges {ranges:.2f} s", file=sys.stderr)
    return {"kind": change.kind, "label": change.label, "settled_s": settled, "ranges_s": ranges}


def _wait_companions(page: Page) -> None:
    deadline = time.perf_counter() + PAGE_TIMEOUT_MS / 1000
    while not _companions_drawn(page) and time.perf_counter() < deadline:
        page.wait_for_timeout(50)
    app_idle(page)


def wait_store_read(log: Path) -> float:
    """Seconds until the server says it has opened the store and read the first curves
    (ui/serve.py's start-up line): "once the store is open", the first page is timed after it."""
    start = time.perf_counter()
    deadline = start + PAGE_TIMEOUT_MS / 1000
    while WARM not in log.read_text(encoding="utf-8", errors="replace"):
        if time.perf_counter() > deadline:
            raise TimeoutError(f"the server did not say {WARM!r} in {deadline - start:.0f} s")
        time.sleep(0.05)
    return time.perf_counter() - start


def first_plan_page(page: Page, base: str) -> float:
    """Seconds from opening the Plan page until it is drawn and idle."""
    start = time.perf_counter()
    open_page(page, base, "plan")
    return time.perf_counter() - start


def summary(values: list[float]) -> dict[str, float]:
    """p50, p95 (nearest rank over few values: the second largest of 20) and max, seconds."""
    ordered = sorted(values)
    rank = max(0, math.ceil(0.95 * len(ordered)) - 1)
    return {
        "n": len(ordered),
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[rank], 2),
        "max": round(ordered[-1], 2),
    }


@contextmanager
def _browser_page(chromium: str) -> Iterator[tuple[Page, RunLog]]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
        page = context.new_page()
        log = RunLog()
        page.on("websocket", log.watch)
        try:
            yield page, log
        finally:
            browser.close()


def session(db_url: str, workdir: Path, chromium: str) -> dict[str, Any]:
    """Start the app on the store, open the Plan page, make the 20 changes."""
    with (
        running_app(db_url, workdir / "streamlit.log") as app,
        _browser_page(chromium) as (
            page,
            log,
        ),
    ):
        store_read = wait_store_read(app.log)
        print(f"  store opened and read {store_read:.2f} s after it answered", file=sys.stderr)
        first = first_plan_page(page, app.url)
        print(f"  first Plan page {first:.2f} s", file=sys.stderr)
        if WITH_SENSITIVITY["on"]:
            page.get_by_role("button", name="Show what moves the answer", exact=True).click()
        _wait_companions(page)
        changes = [time_change(page, log, change) for change in SESSION]
        page.reload()
        again = first_plan_page(page, app.url)
    return {
        "store_read_s": round(store_read, 2),
        "first_plan_page_s": round(first, 2),
        "reload_plan_page_s": round(again, 2),
        "changes": changes,
    }


def tables(store: str, found: dict[str, Any]) -> dict[str, Any]:
    """p50/p95/max of settled and ranges times, over all changes and per kind."""
    changes = found["changes"]
    kinds = ["all", *sorted({c["kind"] for c in changes})]
    out: dict[str, Any] = {}
    for kind in kinds:
        mine = [c for c in changes if kind in ("all", c["kind"])]
        out[kind] = {
            "settled": summary([c["settled_s"] for c in mine]),
            "ranges": summary([c["ranges_s"] for c in mine]),
        }
    print(
        f"\n{store}: store read at start-up {found.get('store_read_s', '?')} s; first Plan page "
        f"{found['first_plan_page_s']} s (reload {found['reload_plan_page_s']} s)"
    )
    print(f"{'change':<10}{'n':>3}  settled p50 / p95 / max (s)   ranges p50 / p95 / max (s)")
    for kind, row in out.items():
        s, r = row["settled"], row["ranges"]
        print(
            f"{kind:<10}{s['n']:>3}  {s['p50']:>6.2f} / {s['p95']:>5.2f} / {s['max']:>5.2f}"
            f"          {r['p50']:>6.2f} / {r['p95']:>5.2f} / {r['max']:>5.2f}"
        )
    return out


def main() -> None:
    """Build or reuse the stores, run the session on each, print and optionally write JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", default="demo,scale")
    parser.add_argument("--workdir", default="/tmp/capplan-session")
    parser.add_argument("--scale-runs", type=int, default=10_000)
    parser.add_argument("--scale-samples", type=int, default=200_000)
    parser.add_argument("--out", help="write the JSON here")
    parser.add_argument("--summarize", help="print the tables of a JSON written by --out")
    parser.add_argument(
        "--sensitivity",
        action="store_true",
        help="ask for what moves the answer first, so every change re-plans it too",
    )
    args = parser.parse_args()
    WITH_SENSITIVITY["on"] = args.sensitivity
    if args.summarize:
        found = json.loads(Path(args.summarize).read_text(encoding="utf-8"))
        for store in ("demo", "scale"):
            if store in found:
                tables(store, found[store])
        return
    chromium = chromium_path()
    if chromium is None:
        sys.exit("no chromium: apt-get install chromium (or set CAPPLAN_CHROMIUM)")
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"cpus": os.cpu_count(), "load_before": os.getloadavg()}
    for store in args.stores.split(","):
        if store == "demo":
            url = demo_store(workdir)
        else:
            url = scale_store(workdir, args.scale_runs, args.scale_samples)
        found = session(url, workdir, chromium)
        found["summary"] = tables(store, found)
        results[store] = found
    results["load_after"] = os.getloadavg()
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
