"""The probe against a real vLLM server (CPU build, tiny random Llama): a sweep, latencies set
against the server's own, and a server killed mid-sweep. Only what no load on the box can break
is asserted; the probe's agreement with `vllm bench serve` is bench/bench_probe_agreement.py."""

from __future__ import annotations

import asyncio
import itertools
import re
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from measurements.probe.config import ProbeConfig, SaturationConfig
from measurements.probe.level_run import ProgressEvent
from measurements.probe.sweep import ProbeOutcome, run_probe
from measurements.probe.workloads import WorkloadConfig
from measurements.run_file import Deployment, Level, read_run_file
from tests.integration.conftest import CLIENT_WALL_LIMIT_S, VllmServer, realtime_client

pytestmark = pytest.mark.vllm

ISL = 128
OSL = 64
LATENCY_REQUESTS = 64
# Per request, for two clocks timing the same span (the server's time.time, the probe's
# perf_counter); not a margin for load, which only lengthens the probe's side.
CLOCK_SLACK_S = 0.001
METRICS_WAIT_S = 30.0
IN_FLIGHT_TRIM_S = 0.001
_COUNTER = re.compile(r"^(vllm:(?:prompt|generation)_tokens_total)\{[^}]*\} ([0-9.e+]+)$", re.M)
_LATENCY = re.compile(
    r"^(vllm:(?:e2e_request_latency|time_to_first_token)_seconds_(?:sum|count))\{[^}]*\} "
    r"([0-9.e+-]+)$",
    re.M,
)


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
    return asyncio.run(asyncio.wait_for(coroutine, timeout=CLIENT_WALL_LIMIT_S))


def scrape(
    base_url: str, pattern: re.Pattern[str], done: Callable[[dict[str, float]], bool]
) -> dict[str, float]:
    """The server's metrics that `pattern` names, once `done` says they are all in: vLLM records
    a request's counts just after streaming its end, so a scrape may come before them (up to
    METRICS_WAIT_S, then what it has)."""
    deadline = time.monotonic() + METRICS_WAIT_S
    while True:
        text = httpx.get(f"{base_url}/metrics", timeout=10).text
        found = {name: float(value) for name, value in pattern.findall(text)}
        if done(found) or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def token_counters(base_url: str, generated: float = 0.0) -> dict[str, float]:
    """The server's own prompt and generation token totals, once it has generated `generated`."""
    return scrape(
        base_url, _COUNTER, lambda f: f.get("vllm:generation_tokens_total", 0.0) >= generated
    )


def output_tok_s(level: Level) -> float:
    """A level's output tok/s; a level without one fails the test with its notes."""
    value = level.value("output_tok_s")
    if value is None:
        pytest.fail(f"level c={level.load_value} has no output_tok_s: {level.notes}")
    return value


def most_in_flight(level: Level) -> int:
    """The most requests of a level in flight at once, from their send times and latencies."""
    edges = sorted(
        edge
        for s in level.samples
        if s.send_s is not None and s.e2e_ms is not None
        # The next request of a stream is sent after the last one ended: a 1 ms trim keeps the
        # rounding of stored times from counting the two as overlapping.
        for edge in ((s.send_s, 1), (s.send_s + s.e2e_ms / 1000 - IN_FLIGHT_TRIM_S, -1))
    )
    return max(itertools.accumulate(step for _, step in edges))


def test_sweep_runs_each_concurrency_and_token_counts_match_server_usage(
    vllm_server: VllmServer, tmp_path: Path
) -> None:
    before = token_counters(vllm_server.base_url)
    config = probe_config(vllm_server, (1, 2, 4, 8), warmup_requests=0)
    with realtime_client():
        outcome = run(config, tmp_path / "sweep.json")
    run_file = read_run_file(tmp_path / "sweep.json")
    streamed = sum(level.output_tokens_total or 0 for level in run_file.levels)
    after = token_counters(vllm_server.base_url, before["vllm:generation_tokens_total"] + streamed)

    assert outcome.complete and run_file.complete, outcome.stop_reason
    assert [level.load_value for level in run_file.levels] == [1, 2, 4, 8]
    # How much throughput batching adds is the box's to say (bench/bench_probe_agreement.py
    # prints it): here, that each level ran its concurrency, no more and no less, and streamed.
    for level in run_file.levels:
        assert output_tok_s(level) > 0
        assert most_in_flight(level) == level.load_value, level.load_value
    samples = [s for level in run_file.levels for s in level.samples]
    assert samples and all(s.ok for s in samples)
    assert {s.output_tokens for s in samples} == {OSL}  # ignore_eos: exactly max_tokens
    assert {s.input_tokens for s in samples} == {ISL}  # exact prompts for the model's tokenizer
    # The server's own counters saw exactly the tokens the run file says were sent and streamed.
    sent = sum(level.input_tokens_total or 0 for level in run_file.levels)
    assert after["vllm:prompt_tokens_total"] - before["vllm:prompt_tokens_total"] == sent
    assert (
        after["vllm:generation_tokens_total"] - before["vllm:generation_tokens_total"] == streamed
    )


def server_latencies(base_url: str, served: float) -> dict[str, float]:
    """The server's own TTFT and e2e histogram sums and counts, once it has counted `served`."""
    return scrape(
        base_url, _LATENCY, lambda f: f.get("vllm:e2e_request_latency_seconds_count", 0.0) >= served
    )


def test_probe_latencies_are_never_shorter_than_the_servers_own(
    vllm_server: VllmServer, tmp_path: Path
) -> None:
    """vLLM times each request from its arrival to its first token and to its last; the probe
    from before it sends to after it reads each. Whatever the load, the probe's totals are at
    least the server's (a probe clock started late, or read in the wrong unit, undercuts them).
    How close the probe comes to `vllm bench serve` depends on the box's load (beside two busy
    loops, single pairs ran 0.37-1.61 apart): bench/bench_probe_agreement.py prints it."""
    before = server_latencies(vllm_server.base_url, 0)
    served = before.get("vllm:e2e_request_latency_seconds_count", 0.0) + LATENCY_REQUESTS
    config = probe_config(vllm_server, (8,), requests_per_level=LATENCY_REQUESTS, warmup_requests=0)
    with realtime_client():
        level = run(config, tmp_path / "c8.json").run.levels[0]
    after = server_latencies(vllm_server.base_url, served)
    server = {name: after[name] - before.get(name, 0.0) for name in after}

    assert len(level.samples) == LATENCY_REQUESTS and all(s.ok for s in level.samples)
    assert server["vllm:e2e_request_latency_seconds_count"] == LATENCY_REQUESTS, server
    assert server["vllm:time_to_first_token_seconds_count"] == LATENCY_REQUESTS, server
    slack_s = LATENCY_REQUESTS * CLOCK_SLACK_S
    probe_e2e_s = sum(s.e2e_ms or 0.0 for s in level.samples) / 1000
    probe_ttft_s = sum(s.ttft_ms or 0.0 for s in level.samples) / 1000
    assert probe_e2e_s + slack_s >= server["vllm:e2e_request_latency_seconds_sum"], server
    assert probe_ttft_s + slack_s >= server["vllm:time_to_first_token_seconds_sum"], server
    assert probe_ttft_s < probe_e2e_s


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
