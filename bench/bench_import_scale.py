"""Import scale: time and peak RSS of importing a curve CSV of 1k to 1M rows, as one run (one
load level per row) and as many runs (one row each), each in a fresh process capped at
--cap-gib of address space and --timeout seconds, so a file that would exhaust the box says so.
Run: `python bench/bench_import_scale.py [--rows 1000 10000 100000 1000000] [--root CHECKOUT]`
(--root measures another checkout, e.g. the code before a change, with this file's cases).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADER = (
    "source,engine,engine_version,model,precision,gpu,gpu_count,tp,isl,osl,load_type,"
    "concurrency_or_rate,output_tok_s,ttft_ms\n"
)
# The child: build the file, import it through the product path, report its peak RSS.
CHILD = """
import json, resource, sys, time
path, cap = sys.argv[1], int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
from measurements.importers import import_bytes
data = open(path, "rb").read()
start = time.perf_counter()
try:
    result = f"{len(import_bytes('curve.csv', data).runs):,} runs"
except MemoryError:
    result = "MemoryError"
except Exception as exc:
    result = "refused: " + str(exc)[:90]
seconds = time.perf_counter() - start
# VmHWM, not ru_maxrss: the latter keeps the forking parent's peak across exec.
status = open("/proc/self/status").read().split("VmHWM:")[1]
rss_mib = int(status.split()[0]) / 1024
print(json.dumps({"s": seconds, "rss_mib": rss_mib, "result": result, "mib": len(data) / 2**20}))
"""


def curve_csv(rows: int, runs: int) -> bytes:
    """A curve CSV of `rows` rows spread over `runs` runs (a model each), loads 1, 2, ...;
    rows as short as the issue's (a million in ~42 MiB, under the upload limit)."""
    lines = [HEADER]
    for i in range(rows):
        load = i // runs + 1
        lines.append(f"b,vllm,,m{i % runs},fp8,H100,1,1,1,1,concurrency,{load},{i % 7},9\n")
    return "".join(lines).encode()


def measure(rows: int, runs: int, args: argparse.Namespace) -> dict[str, object]:
    """One case: the file written here, imported in a fresh process by the measured checkout."""
    cap = int(args.cap_gib * 2**30)
    with tempfile.NamedTemporaryFile(suffix=".csv") as file:
        file.write(curve_csv(rows, runs))
        file.flush()
        command = [sys.executable, "-c", CHILD, file.name, str(cap)]
        return _run(command, args)


def _run(command: list[str], args: argparse.Namespace) -> dict[str, object]:
    env = {"PYTHONPATH": str(args.root), "PATH": "/usr/bin:/bin"}
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=args.timeout,
            env=env,
            check=False,
            cwd=args.root,  # `python -c` puts the working folder first on the path
        )
    except subprocess.TimeoutExpired:
        return {"s": time.perf_counter() - started, "rss_mib": None, "result": "timed out"}
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        return {"s": None, "rss_mib": None, "result": done.stderr.strip()[-90:]}
    measured: dict[str, object] = json.loads(lines[-1])
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000, 10_000, 100_000, 1_000_000])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose code runs")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per case")
    parser.add_argument("--limit-runs", type=int, nargs="*", default=[20, 2_000])
    parser.add_argument("--cap-gib", type=float, default=4.0, help="address space per case")
    args = parser.parse_args()
    print(f"{'rows':>10} {'runs':>10} {'MiB':>6} {'time s':>8} {'peak RSS MiB':>13}  result")
    # Each size as one run and as a run per row, then files at the limits (20,000 rows as 20
    # runs of 1,000 levels, as 2,000 runs of 10), which import whole.
    cases = [(rows, runs) for rows in args.rows for runs in (1, rows)]
    for rows, runs in [*cases, *((20_000, runs) for runs in args.limit_runs)]:
        out = measure(rows, runs, args)
        seconds = "-" if out["s"] is None else f"{out['s']:.2f}"
        rss = "-" if out["rss_mib"] is None else f"{out['rss_mib']:.0f}"
        size = f"{out['mib']:.1f}" if "mib" in out else "-"
        print(f"{rows:>10,} {runs:>10,} {size:>6} {seconds:>8} {rss:>13}  {out['result']}")


if __name__ == "__main__":
    main()
