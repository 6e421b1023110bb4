"""capplan's probe beside `vllm bench serve` on one real vLLM CPU server (tiny random Llama):
output tok/s and median TTFT at c=8 (128-token prompts, 64 output tokens), run alternately,
and the probe's closed-loop sweep 1-8 (how much throughput batching adds on this box).

Both clients run SCHED_FIFO (tests/integration/conftest.realtime_client): at normal priority
vLLM's CPU engine, spin-waiting on both cores, starves whichever client runs (8 alternating runs
gave 1,728-3,163 tok/s for `vllm bench serve`, 1,058-1,403 for the probe). Protected, on a quiet
2-core box: medians 4,820-4,923 tok/s and 12.2-14.6 ms (bench), 4,517-4,694 tok/s and 11.9-14.6
ms (probe), the probe 4-7% lower (its windowed rate cuts ramp and drain); a loaded CI box gave
median ratios 1.09 and 0.82 (pairs 0.70-1.28). Each probe run is divided by the bench run just
before it (the box drifts between pairs far more than within one); the median of those ratios is
printed beside the allowance the test once asserted (25%; TTFT: the larger of 50% and 10 ms),
which a loaded box can cross: hence a benchmark. The test keeps what no load can break
(tests/integration/test_probe_vllm.py: exact token counts, the concurrency each level ran, and
latencies never shorter than the server's own).
Run (from the repo root; start nothing else on the box):
    PYTHONPATH=. .venv/bin/python bench/bench_probe_agreement.py [--repeats 5] [--requests 256]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_probe_overhead import VLLM_BENCH  # noqa: E402
from bench.vllm_cpu import vllm_cpu_server  # noqa: E402
from tests.integration.conftest import CLIENT_WALL_LIMIT_S, VllmServer, realtime_client  # noqa: E402
from tests.integration.test_probe_vllm import ISL, OSL, probe_config, run  # noqa: E402

CONCURRENCY = 8
SWEEP = (1, 2, 4, 8)
TOK_S_TOLERANCE = 0.25
TTFT_TOLERANCE = 0.5
TTFT_SLACK_MS = 10.0


def vllm_bench(server: VllmServer, out_dir: Path, requests: int) -> dict[str, float]:
    """`vllm bench serve` (random dataset, same ISL/OSL, ignore_eos) on the same server."""
    name = f"bench-{len(list(out_dir.glob('bench-*.json')))}.json"
    argv = [
        str(server.python), "-c", VLLM_BENCH, "--backend", "vllm",
        "--base-url", server.base_url, "--model", server.model,
        "--dataset-name", "random", "--random-input-len", str(ISL),
        "--random-output-len", str(OSL), "--ignore-eos", "--max-concurrency", str(CONCURRENCY),
        "--num-prompts", str(requests), "--disable-tqdm", "--save-result",
        "--result-dir", str(out_dir), "--result-filename", name,
    ]  # fmt: skip
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=CLIENT_WALL_LIMIT_S, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"vllm bench serve failed ({done.returncode}):\n{done.stdout[-3000:]}")
    result: dict[str, float] = json.loads((out_dir / name).read_text(encoding="utf-8"))
    return result


def agreement(server: VllmServer, out: Path, repeats: int, requests: int) -> dict[str, object]:
    """Alternate runs of both clients at c=8: their numbers, the pair ratios and the verdicts."""
    probe_tok_s: list[float] = []
    probe_ttft_ms: list[float] = []
    bench_tok_s: list[float] = []
    bench_ttft_ms: list[float] = []
    config = probe_config(server, (CONCURRENCY,), requests_per_level=requests, warmup_requests=0)
    with realtime_client():  # both clients alike: alternate them, so drift hits both
        for rep in range(repeats):
            bench = vllm_bench(server, out, requests)
            bench_tok_s.append(bench["output_throughput"])
            bench_ttft_ms.append(bench["median_ttft_ms"])
            level = run(config, out / f"probe-{rep}.json").run.levels[0]
            probe_tok_s.append(level.value("output_tok_s") or float("nan"))
            probe_ttft_ms.append(level.value("p50_ttft_ms") or float("nan"))
    ratios = [p / b for p, b in zip(probe_tok_s, bench_tok_s, strict=True)]
    gaps = [p - b for p, b in zip(probe_ttft_ms, bench_ttft_ms, strict=True)]
    ttft_bound = max(TTFT_TOLERANCE * statistics.median(bench_ttft_ms), TTFT_SLACK_MS)
    return {
        "probe_tok_s": [round(v) for v in probe_tok_s],
        "bench_tok_s": [round(v) for v in bench_tok_s],
        "probe_p50_ttft_ms": [round(v, 1) for v in probe_ttft_ms],
        "bench_p50_ttft_ms": [round(v, 1) for v in bench_ttft_ms],
        "tok_s_ratio_per_pair": [round(r, 3) for r in ratios],
        "median_tok_s_ratio": round(statistics.median(ratios), 3),
        "median_ttft_gap_ms": round(statistics.median(gaps), 2),
        "tok_s_within_25pct": abs(statistics.median(ratios) - 1) <= TOK_S_TOLERANCE,
        "ttft_within_bound": abs(statistics.median(gaps)) <= ttft_bound,
    }


def sweep(server: VllmServer, out: Path) -> dict[str, object]:
    """The probe's closed-loop sweep: output tok/s per concurrency and c=8 over c=1."""
    with realtime_client():
        found = run(probe_config(server, SWEEP, warmup_requests=0), out / "sweep.json")
    tok_s = [level.value("output_tok_s") or float("nan") for level in found.run.levels]
    return {
        "concurrency": list(SWEEP),
        "output_tok_s": [round(v) for v in tok_s],
        "c8_over_c1": round(tok_s[-1] / tok_s[0], 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=5, help="alternate pairs (default 5)")
    parser.add_argument("--requests", type=int, default=256, help="requests a run (default 256)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, vllm_cpu_server(Path(tmp)) as server:
        print(json.dumps({"sweep": sweep(server, Path(tmp))}), flush=True)
        found = agreement(server, Path(tmp), args.repeats, args.requests)
        print(json.dumps({"agreement_c8": found}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
