"""Scale: a store of 10,000 runs and 10 million per-request samples on SQLite and Postgres.

Measures ingest through the product path (repository.save_runs in batches), the run list a
page at a time, curve loading (what the Curves and Plan pages and the planner do), a plan of
docs/scenarios/agent-platform.yaml, first renders of the Runs, Curves and Plan pages (AppTest,
each in a fresh process) and peak RSS, so a team can see what a big shared history costs.
Run: `python bench/bench_scale.py --backend both --runs 10000 --samples 1000000 --out FILE`
(add `--reuse URL --top-up-to 10000000` to grow a filled store to 10M samples by SQL copies).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from team.roles import SYSTEM

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import create_engine, insert, make_url, text  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402

from bench.scale_runs import batches  # noqa: E402
from db import repository, run_lists, run_reads  # noqa: E402
from db.engine import Engine, make_engine, upgrade  # noqa: E402
from db.models import LevelMetric, LoadLevel  # noqa: E402
from db.models import RequestSample as RequestSampleRow  # noqa: E402
from db.run_lists import RunFilter  # noqa: E402
from measurements.run_file import Level  # noqa: E402
from planner.analysis.capacity import make_plan  # noqa: E402
from planner.analysis.sensitivity import sensitivity  # noqa: E402
from planner.analysis.uncertainty import plan_ranges  # noqa: E402
from planner.curves.load import LoadCurve, curve_from_run  # noqa: E402
from planner.fitting.fit import clear_fit_cache, fit_curve  # noqa: E402
from planner.inputs.prices import load_catalog_csv  # noqa: E402
from planner.inputs.scenario import load_scenario  # noqa: E402
from workflows import planning  # noqa: E402

SCENARIO = ROOT / "docs" / "scenarios" / "agent-platform.yaml"
PAGE = 250


# ---------------------------------------------------------------- stores


def fresh_store(backend: str, args: argparse.Namespace) -> str:
    """An empty migrated store on the backend; returns its URL."""
    if backend == "sqlite":
        path = Path(args.workdir) / "scale.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        url = f"sqlite:///{path}"
    else:
        admin = create_engine(args.pg_url, isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            connection.execute(text("DROP DATABASE IF EXISTS capplan_scale"))
            connection.execute(text("CREATE DATABASE capplan_scale"))
        admin.dispose()
        url = make_url(args.pg_url).set(database="capplan_scale").render_as_string(False)
    upgrade(url)
    return url


def store_size_mb(url: str) -> float:
    """The store's size on disk in MiB (SQLite file and WAL; Postgres pg_database_size)."""
    if url.startswith("sqlite"):
        path = Path(make_url(url).database or "")
        files = [path, Path(f"{path}-wal")]
        return sum(f.stat().st_size for f in files if f.exists()) / 2**20
    engine = create_engine(url)
    with engine.connect() as connection:
        size = connection.execute(text("SELECT pg_database_size(current_database())")).scalar_one()
    engine.dispose()
    return float(size) / 2**20


COPY_COLUMNS = "send_s, ttft_ms, e2e_ms, input_tokens, output_tokens, chunk_gaps_ms, http_status"


def top_up(url: str, target: int) -> dict[str, Any]:
    """Copy every stored sample into its own level again (positions shifted) until the store
    holds about `target` samples: a fast SQL fill of the bulk, NOT the product's ingest path."""
    engine = create_engine(url)
    with engine.connect() as connection:
        have = connection.execute(text("SELECT count(*) FROM request_samples")).scalar_one()
    copies = max(0, round(target / max(have, 1)) - 1)
    start = time.perf_counter()
    for copy in range(1, copies + 1):
        with engine.begin() as connection:
            connection.execute(
                text(
                    f"INSERT INTO request_samples (level_id, position, {COPY_COLUMNS}) "
                    f"SELECT level_id, position + :shift, {COPY_COLUMNS} FROM request_samples "
                    "WHERE position < 1000000"  # the ingested samples, never earlier copies
                ),
                {"shift": copy * 1_000_000},
            )
    if not url.startswith("sqlite"):
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(text("VACUUM ANALYZE"))
    with engine.connect() as connection:
        now = connection.execute(text("SELECT count(*) FROM request_samples")).scalar_one()
    engine.dispose()
    return {
        "samples": now,
        "sql_fill_s": round(time.perf_counter() - start, 1),
        "store_mb": round(store_size_mb(url), 1),
    }


# ---------------------------------------------------------------- measures


def median_ms(action: Callable[[], object], repeats: int) -> float:
    """Median wall time of action over repeats, in ms."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 2)


def rss_mb() -> float:
    """Peak RSS of this process so far, MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def ingest(url: str, args: argparse.Namespace) -> dict[str, Any]:
    """Fill the store through repository.save_runs, timing only the save calls."""
    engine = make_engine(url)
    saved_s = 0.0
    runs = samples = 0
    for batch in batches(args.runs, args.samples, args.batch):
        start = time.perf_counter()
        repository.save_runs(engine, batch, actor=SYSTEM)
        saved_s += time.perf_counter() - start
        runs += len(batch)
        samples += sum(len(level.samples) for run in batch for level in run.levels)
        if args.verbose and runs % (args.batch * 10) == 0:
            print(f"  {runs} runs, {samples} samples, {saved_s:.0f} s", file=sys.stderr)
    engine.dispose()
    return {
        "runs": runs,
        "samples": samples,
        "save_s": round(saved_s, 1),
        "runs_per_s": round(runs / saved_s, 1),
        "samples_per_s": round(samples / saved_s),
        "store_mb": round(store_size_mb(url), 1),
    }


def _orm_insert_level(session: Session, run_id: int, position: int, level: Level) -> None:
    """The save path before Core executemany (ORM level row + ORM bulk insert), for --ingest-ab."""
    columns = level.model_dump(mode="json", exclude={"metrics", "samples"})
    row = LoadLevel(run_id=run_id, position=position, **columns)
    session.add(row)
    session.flush()
    for table, items in ((LevelMetric, level.metrics), (RequestSampleRow, level.samples)):
        if items:
            rows = [
                {"level_id": row.id, "position": i, **item.model_dump(mode="json")}
                for i, item in enumerate(items)
            ]
            session.execute(insert(table), rows)


def ingest_ab(backend: str, args: argparse.Namespace, rounds: int = 2) -> dict[str, Any]:
    """Ingest the same runs into a fresh store with the old ORM path and the Core path,
    alternated `rounds` times; the samples/s of each try."""
    product = repository._insert_level
    out: dict[str, list[int]] = {"orm_bulk": [], "core_executemany": []}
    try:
        for _ in range(rounds):
            for name, insert_level in (
                ("orm_bulk", _orm_insert_level),
                ("core_executemany", product),
            ):
                repository._insert_level = insert_level  # type: ignore[assignment]
                out[name].append(ingest(fresh_store(backend, args), args)["samples_per_s"])
    finally:
        repository._insert_level = product  # type: ignore[assignment]
    return {"runs": args.runs, "samples": args.samples, "samples_per_s": out}


def queries(url: str, repeats: int) -> dict[str, Any]:
    """Run-list pages, filters, one run, and the planner's load of every run's curve."""
    engine = make_engine(url)
    out = _list_timings(engine, repeats)
    loads, curves = _curve_loads(engine)
    out |= loads
    out |= _plan_timings(engine, curves, repeats)
    sample = curves[:: max(1, len(curves) // 50)]
    start = time.perf_counter()
    for curve in sample:
        fit_curve(curve)
    out["fit_one_curve_ms"] = round((time.perf_counter() - start) * 1000 / len(sample), 1)
    out["curves"] = len(curves)
    out["peak_rss_mb"] = round(rss_mb(), 1)
    engine.dispose()
    return out


def _list_timings(engine: Engine, repeats: int) -> dict[str, Any]:
    """Run-list pages (first, last, filtered, searched), filter choices, all runs, one run."""
    total = run_lists.count_runs(engine)
    last = max(0, (total - 1) // PAGE * PAGE)
    vllm_h200 = RunFilter(engines=("vllm",), gpus=("H200-SXM-141GB",))
    some = run_lists.list_runs(engine, limit=1, offset=total // 2)[0].run_id
    return {
        "list_page_first_ms": median_ms(lambda: run_lists.run_page(engine, None, PAGE), repeats),
        "list_page_last_ms": median_ms(
            lambda: run_lists.run_page(engine, None, PAGE, last), repeats
        ),
        "list_page_filtered_ms": median_ms(
            lambda: run_lists.run_page(engine, vllm_h200, PAGE), repeats
        ),
        "list_page_text_ms": median_ms(
            lambda: run_lists.run_page(engine, RunFilter(text="run-77"), PAGE), repeats
        ),
        "filter_choices_ms": median_ms(lambda: run_lists.run_filter_choices(engine), repeats),
        "list_all_runs_ms": median_ms(lambda: run_lists.list_runs(engine), 3),
        "get_run_with_samples_ms": median_ms(lambda: run_reads.get_run(engine, some), repeats),
    }


def _curve_loads(engine: Engine) -> tuple[dict[str, Any], list[LoadCurve]]:
    """Every run's curve read a chunk at a time, then every run read at once (time and RSS)."""
    out: dict[str, Any] = {}
    # Chunked first: ru_maxrss only ever grows, so the smaller peak must be read first.
    before = rss_mb()
    start = time.perf_counter()
    stored = run_reads.iter_runs(engine)
    curves = [c for c in (curve_from_run(s.run, s.run_id) for s in stored) if c is not None]
    out["curves_chunked_s"] = round(time.perf_counter() - start, 2)
    out["curves_chunked_rss_growth_mb"] = round(rss_mb() - before, 1)
    before = rss_mb()
    start = time.perf_counter()
    everything = run_reads.load_runs(engine)
    out["load_runs_all_s"] = round(time.perf_counter() - start, 2)
    out["load_runs_all_rss_growth_mb"] = round(rss_mb() - before, 1)
    del everything
    return out, curves


def _plan_timings(engine: Engine, curves: list[LoadCurve], repeats: int) -> dict[str, Any]:
    """A cold and a warm plan over every curve, then what the Plan page reads and plans now:
    the scenario model's curves, their ranges and sensitivity, and the Curves page choices."""
    out: dict[str, Any] = {}
    scenario = load_scenario(SCENARIO)
    prices = load_catalog_csv()
    clear_fit_cache()
    start = time.perf_counter()
    plan = make_plan(scenario, curves, prices)
    out["plan_cold_s"] = round(time.perf_counter() - start, 2)
    out["plan_warm_ms"] = median_ms(lambda: make_plan(scenario, curves, prices), repeats)
    out["plan_options"] = len(plan.options)
    # What the Plan page and `capplan plan` read now: the scenario model's curves only.
    start = time.perf_counter()
    names = planning.model_names_like(engine, scenario.model)
    stored = run_reads.iter_runs(engine, models=names)
    mine = [c for c in (curve_from_run(s.run, s.run_id) for s in stored) if c is not None]
    out["curves_scenario_model_s"] = round(time.perf_counter() - start, 2)
    out["curves_scenario_model"] = len(mine)
    clear_fit_cache()
    start = time.perf_counter()
    plan_ranges(scenario, mine, prices)
    out["plan_ranges_scenario_model_s"] = round(time.perf_counter() - start, 2)
    start = time.perf_counter()
    sensitivity(scenario, mine, prices)
    out["sensitivity_scenario_model_s"] = round(time.perf_counter() - start, 2)
    out["curve_workloads_ms"] = median_ms(lambda: run_lists.curve_workloads(engine), repeats)
    return out


PAGE_SCRIPT = """
import json, sys, time
from streamlit.testing.v1 import AppTest
import ui.resources  # imports are not the page's work: load them before the clock starts
start = time.perf_counter()
at = AppTest.from_file(sys.argv[1], default_timeout=float(sys.argv[2])).run()
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec from the (big) bench parent.
hwm_kb = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({"render_s": round(time.perf_counter() - start, 2),
                  "errors": [str(e.value)[:200] for e in [*at.exception, *at.error]],
                  "peak_rss_mb": hwm_kb // 1024}))
"""


def render_pages(url: str, pages: list[str], timeout_s: float) -> dict[str, Any]:
    """First render of each page on its own (AppTest of the page file, no other page run first)
    in a fresh process (cold caches, the store already migrated), with that process's peak RSS."""
    out: dict[str, Any] = {}
    for page in pages:
        env = {**os.environ, "CAPPLAN_DB": url}
        command = [sys.executable, "-c", PAGE_SCRIPT, str(ROOT / page), str(timeout_s)]
        try:
            done = subprocess.run(
                command,
                check=False,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout_s + 30,
                cwd=ROOT,
            )
            last = done.stdout.strip().splitlines()[-1:] or [done.stderr[-300:]]
            out[page] = json.loads(last[0]) if done.returncode == 0 else {"failed": last[0]}
        except subprocess.TimeoutExpired:
            out[page] = {"render_s": None, "timed_out_after_s": timeout_s}
    return out


def main() -> None:
    """Parse arguments, build and measure each backend's store, print or write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="sqlite")
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=10_000_000)
    parser.add_argument("--batch", type=int, default=100, help="runs per save_runs call")
    parser.add_argument(
        "--pg-url", default="postgresql+psycopg://postgres@127.0.0.1:54329/postgres"
    )
    parser.add_argument("--workdir", default="/tmp/capplan-scale")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--page-timeout", type=float, default=300)
    parser.add_argument("--pages", default="ui/runs.py,ui/curves.py,ui/plan.py", help="or ''")
    parser.add_argument("--reuse", help="measure an existing store URL instead of filling one")
    parser.add_argument(
        "--top-up-to", type=int, help="then copy samples by SQL up to this many (fast fill)"
    )
    parser.add_argument("--out", help="write the JSON here (default: print it)")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument(
        "--ingest-ab", action="store_true", help="only time ingest: old ORM path vs Core path"
    )
    args = parser.parse_args()
    backends = ("sqlite", "postgres") if args.backend == "both" else (args.backend,)
    results: dict[str, Any] = {"runs": args.runs, "samples": args.samples, "cpus": os.cpu_count()}
    for backend in backends:
        if args.ingest_ab:
            results[backend] = {"ingest_ab": ingest_ab(backend, args)}
            print(json.dumps(results[backend]), file=sys.stderr)
            continue
        url = args.reuse or fresh_store(backend, args)
        found: dict[str, Any] = {} if args.reuse else {"ingest": ingest(url, args)}
        if args.top_up_to:
            found["top_up"] = top_up(url, args.top_up_to)
        found["queries"] = queries(url, args.repeats)
        if args.pages:
            found["pages"] = render_pages(url, args.pages.split(","), args.page_timeout)
        results[backend] = found
        print(json.dumps({backend: found}, indent=1), file=sys.stderr)
    document = json.dumps(results, indent=2)
    if args.out:
        Path(args.out).write_text(document + "\n", encoding="utf-8")
    else:
        print(document)


if __name__ == "__main__":
    main()
