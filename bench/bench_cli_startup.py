"""How fast the command line answers: `capplan --help`, a command's --help, `capplan runs` and
`capplan plan` of the finance brief on the demo store, each a fresh process as a person types it,
against `python -c pass` in the same run (the interpreter's own start, which no CLI can beat).
`capplan plan` is timed once on an empty results cache (it fits and keeps every calibration and
fit: "first") and then with what that run kept, as every later run finds it.

Runs alternate so machine load hits every command alike; the median and the fastest are shown.
Run: `python bench/bench_cli_startup.py [--repeats N] [--json]`.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BRIEF = "docs/scenarios/finance-brief-chat.yaml"
PLAN = "capplan plan (finance brief, demo store)"


def _capplan() -> list[str]:
    """`python -m cli` from this tree's root: the code beside this script, whichever tree an
    installed console script points at (two trees compare in one run)."""
    return [sys.executable, "-m", "cli"]


def commands(store: str) -> dict[str, list[str]]:
    """What is timed, by name."""
    capplan = _capplan()
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "capplan --help": [*capplan, "--help"],
        "capplan plan --help": [*capplan, "plan", "--help"],
        "capplan runs (demo store, first page)": [*capplan, "runs", "--db", store, "--limit", "20"],
        PLAN: [*capplan, "plan", BRIEF, "--db", store],
    }


def _time_once(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def measure(repeats: int) -> dict[str, dict[str, float]]:
    """Median and fastest wall seconds per command over `repeats` alternating rounds."""
    with tempfile.TemporaryDirectory() as folder:
        store = f"sqlite:///{Path(folder) / 'demo.db'}"
        demo = [*_capplan(), "demo-data", "--db", store]
        # The user's own cache stays out of it: an empty one of this run's.
        env = {**os.environ, "CAPPLAN_CACHE_DIR": str(Path(folder) / "cache")}
        subprocess.run(demo, cwd=ROOT, check=True, capture_output=True, env=env)
        timed = commands(store)
        first = _time_once(timed[PLAN], env)
        samples: dict[str, list[float]] = {name: [] for name in timed}
        for _ in range(repeats):
            for name, command in timed.items():
                samples[name].append(_time_once(command, env))
    results = {
        name: {"median_s": statistics.median(values), "fastest_s": min(values)}
        for name, values in samples.items()
    }
    results[f"{PLAN}, first run"] = {"median_s": first, "fastest_s": first}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--json", action="store_true", help="Print one JSON document.")
    args = parser.parse_args()
    results = measure(args.repeats)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    base = results["python -c pass"]["median_s"]
    print(
        f"{args.repeats} alternating rounds; median (fastest), and the median over python -c pass"
    )
    for name, result in results.items():
        print(
            f"{name:52s} {result['median_s'] * 1000:7.0f} ms ({result['fastest_s'] * 1000:.0f} ms)"
            f"  +{(result['median_s'] - base) * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
