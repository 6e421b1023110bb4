"""How long the documents of a plan take: the finance brief (docs/scenarios/finance-brief-chat.yaml)
on a fresh demo store, planned as the app plans it (the plan, its ranges and sensitivity), then
each report format built from it the way the app's "Build report" button builds it, and the
whole `capplan report --format pdf` / `--format xlsx` command as a person types it (a new process
each time: imports, store, plan, ranges, sensitivity, document).

Run: `python bench/bench_documents.py [--repeats 5] [--out FILE]`. Prints p50 / max seconds per
step and writes them as JSON to --out. Targets (issue 23): PDF <= 5 s and XLSX <= 1 s at the demo
data, beside the plan itself.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from db.engine import make_engine, upgrade  # noqa: E402
from db.seed import ensure_demo_data  # noqa: E402
from planner.inputs.scenario import load_scenario  # noqa: E402
from reports.formats import render_report  # noqa: E402
from workflows.session import PlanningSession  # noqa: E402

BRIEF = ROOT / "docs" / "scenarios" / "finance-brief-chat.yaml"
FORMATS = ("pdf", "xlsx", "html", "json", "csv")


def timed(action: Callable[[], object], repeats: int) -> list[float]:
    """Wall seconds of `repeats` calls."""
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        out.append(time.perf_counter() - start)
    return out


def summary(values: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(values), 3), "max": round(max(values), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="capplan-bench-docs-"))
    url = f"sqlite:///{work / 'demo.db'}"
    upgrade(url)
    engine = make_engine(url)
    ensure_demo_data(engine)
    scenario = load_scenario(BRIEF)
    results: dict[str, dict[str, float]] = {}

    def plan_all() -> PlanningSession:
        session = PlanningSession.from_store(engine, scenario)
        session.report(with_sensitivity=True)  # the plan, its ranges, what-if and sensitivity
        return session

    results["plan + ranges + sensitivity"] = summary(timed(plan_all, args.repeats))
    session = plan_all()

    def report() -> object:
        return session.report(with_sensitivity=True)

    results["report model"] = summary(timed(report, args.repeats))
    model = report()
    for fmt in FORMATS:
        # What the app's button does: the report model, then the document.
        results[f"{fmt} (app: model + document)"] = summary(
            timed(lambda fmt=fmt: render_report(report(), fmt), args.repeats)
        )
        results[f"{fmt} (document only)"] = summary(
            timed(lambda fmt=fmt: render_report(model, fmt), args.repeats)
        )
    # `python -m cli` from this checkout (the installed `capplan` may point at another one).
    capplan = [sys.executable, "-m", "cli"]
    env = {**os.environ, "CAPPLAN_DB": url, "PYTHONPATH": str(ROOT)}
    for fmt in ("pdf", "xlsx"):
        target = work / f"brief.{fmt}"
        argv = [*capplan, "report", "--format", fmt, "--out", str(target), str(BRIEF)]

        def command(argv: list[str] = argv) -> None:
            subprocess.run([*argv, "--force"], check=True, env=env, capture_output=True, cwd=ROOT)

        results[f"capplan report --format {fmt} (new process)"] = summary(
            timed(command, max(3, args.repeats // 2))
        )
    width = max(len(name) for name in results)
    print(f"{'seconds':<{width}}  p50     max")
    for name, values in results.items():
        print(f"{name:<{width}}  {values['p50']:<7} {values['max']}")
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
