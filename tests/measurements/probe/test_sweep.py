"""Whole sweeps (run_probe) against an in-process fake OpenAI-compatible server behind
httpx.MockTransport: closed and open loops, warm-up, windows, saturation, crash safety."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from errors import InputError
from measurements.probe import level_run
from measurements.probe import sweep as sweep_module
from measurements.probe.config import ProbeConfig, SaturationConfig
from measurements.probe.level_run import ProgressEvent
from measurements.probe.sweep import ProbeOutcome, run_probe
from measurements.probe.workloads import ArrivalProcess, WorkloadConfig
from measurements.run_file import Deployment, Level, LoadKind, read_run_file


class FakeServer:
    """An OpenAI-compatible streaming server behind httpx.MockTransport: one token per `token_s`
    per running request, at most `max_batch` running (FIFO beyond), optional failures."""

    def __init__(
        self,
        token_s: float = 0.002,
        max_batch: int = 1000,
        fail_from: int | None = None,
        fail_every: int | None = None,
    ) -> None:
        self.token_s, self.max_batch = token_s, max_batch
        self.fail_from, self.fail_every = fail_from, fail_every
        self.requests, self.active = 0, 0
        self.active_at_arrival: list[int] = []  # in-flight count (this one included) per arrival
        self.auth: set[str] = set()
        self._batch: asyncio.Semaphore | None = None

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        self.auth.add(request.headers.get("authorization", ""))
        if self.fail_from is not None and self.requests >= self.fail_from:
            raise httpx.ConnectError("connection refused", request=request)
        if self.fail_every and self.requests % self.fail_every == 0:
            return httpx.Response(503, json={"error": "busy"})
        self.active += 1
        self.active_at_arrival.append(self.active)
        return httpx.Response(200, content=self._stream(json.loads(request.content)))

    async def _stream(self, body: dict[str, object]) -> AsyncIterator[bytes]:
        self._batch = self._batch or asyncio.Semaphore(self.max_batch)
        prompt_tokens, max_tokens = len(str(body["prompt"]).split()), int(str(body["max_tokens"]))
        try:
            async with self._batch:
                for done in range(1, max_tokens + 1):
                    await asyncio.sleep(self.token_s)
                    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": done}
                    finish = "length" if done == max_tokens else None
                    chunk = {
                        "choices": [{"index": 0, "text": " w", "finish_reason": finish}],
                        "usage": usage,
                    }
                    yield f"data: {json.dumps(chunk)}\n\n".encode()
                tail = {"choices": [], "usage": usage}
                yield f"data: {json.dumps(tail)}\n\ndata: [DONE]\n\n".encode()
        finally:
            self.active -= 1


def sweep(
    server: FakeServer, out: Path, progress: list[ProgressEvent] | None = None, **fields: object
) -> ProbeOutcome:
    base: dict[str, object] = {
        "base_url": "http://fake:8000",
        "model": "tiny",
        "concurrencies": (1, 2, 4),
        "workload": WorkloadConfig(isl=16, osl=6),
        "requests_per_level": 16,
    }
    config = ProbeConfig.model_validate({**base, **fields})
    outcome = run_probe(
        config,
        deployment=Deployment(engine="vllm", model="tiny"),
        out=out,
        on_progress=None if progress is None else progress.append,
        transport=httpx.MockTransport(server.handle),
    )
    return asyncio.run(asyncio.wait_for(outcome, 20))


def test_closed_loop_keeps_exactly_concurrency_in_flight_after_an_unmeasured_warmup(
    tmp_path: Path,
) -> None:
    server, progress = FakeServer(), list[ProgressEvent]()
    outcome = sweep(
        server, tmp_path / "run.json", progress, saturation=SaturationConfig(enabled=False)
    )
    assert outcome.complete and outcome.knee is None
    arrivals = server.active_at_arrival
    assert len(arrivals) == server.requests == 4 + 3 * 16  # warm-up requests are sent ...
    per_level = [arrivals[4 + 16 * i : 4 + 16 * (i + 1)] for i in range(3)]
    assert [max(level) for level in per_level] == [1, 2, 4]  # ... and never measured
    assert [level.requests_sent for level in outcome.run.levels] == [16, 16, 16]
    assert all(level.output_tokens_total == 16 * 6 for level in outcome.run.levels)
    assert read_run_file(tmp_path / "run.json") == outcome.run
    first = outcome.run.levels[0]
    assert first.window_start_s is not None and first.window_end_s is not None and first.duration_s
    assert 0 < first.window_start_s < first.window_end_s < first.duration_s
    assert all((level.value("output_tok_s") or 0) > 0 for level in outcome.run.levels)
    starts = [e for e in progress if e.requests_done == 0]
    ends = [e for e in progress if e.requests_done == 16]
    assert [(e.level_index, e.load_value) for e in starts] == [(0, 1), (1, 2), (2, 4)]
    assert len(ends) == 3 and all(e.levels_total == 3 and e.failures == 0 for e in ends)
    assert all(e.output_tok_s_so_far and e.requests_total == 16 for e in ends)


def test_saturation_stops_the_sweep_and_records_the_knee(tmp_path: Path) -> None:
    # Two requests run at once, more only queue: throughput doubles from 1 to 2, then is flat.
    # Coarse 20 ms tokens and a 40% threshold keep this steady on a busy 2-core box.
    server = FakeServer(token_s=0.02, max_batch=2)
    outcome = sweep(
        server,
        tmp_path / "run.json",
        concurrencies=(1, 2, 4, 8),
        requests_per_level=8,
        workload=WorkloadConfig(isl=16, osl=4),
        saturation=SaturationConfig(min_gain_pct=40, ttft_blowup_factor=1000),
    )
    assert outcome.complete and outcome.knee == 2
    assert [level.load_value for level in outcome.run.levels] == [1, 2, 4]  # 8 never ran
    assert outcome.run.notes is not None and "knee at concurrency 2" in outcome.run.notes


def test_a_server_dying_mid_sweep_leaves_a_readable_partial_run(tmp_path: Path) -> None:
    server = FakeServer(fail_from=4 + 16 + 1)  # refuses everything after the first level
    outcome = sweep(server, tmp_path / "run.json")
    saved = read_run_file(tmp_path / "run.json")
    assert not outcome.complete and not saved.complete
    assert [level.completed for level in saved.levels] == [16, 0]
    assert saved.levels[1].failed is not None and saved.levels[1].failed >= 3
    assert "server stopped answering at concurrency 2" in outcome.stop_reason
    assert saved.notes is not None and "ConnectError: connection refused" in saved.notes


def test_an_interrupted_sweep_keeps_its_finished_levels(tmp_path: Path) -> None:
    out = tmp_path / "run.json"

    async def interrupt() -> None:
        config = ProbeConfig(
            base_url="http://fake:8000",
            model="tiny",
            concurrencies=(1, 2),
            requests_per_level=8,
            workload=WorkloadConfig(isl=16, osl=6),
        )
        server = FakeServer(token_s=0.005)
        task = asyncio.create_task(
            run_probe(
                config,
                deployment=Deployment(engine="vllm", model="tiny"),
                out=out,
                transport=httpx.MockTransport(server.handle),
            )
        )
        while not out.exists():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(asyncio.wait_for(interrupt(), 20))
    saved = read_run_file(out)
    assert not saved.complete and len(saved.levels) == 1 and saved.notes is not None
    assert "interrupted after 1 level(s)" in saved.notes


def test_open_loop_sends_on_the_seeded_schedule_and_reports_lag(tmp_path: Path) -> None:
    outcome = sweep(
        FakeServer(token_s=0.001),
        tmp_path / "run.json",
        concurrencies=(),
        rates=(100.0,),
        requests_per_level=30,
        seed=7,
    )
    level = outcome.run.levels[0]
    assert level.load_kind is LoadKind.RATE and level.requests_sent == 30 == level.completed
    schedule = ArrivalProcess(100.0).times_s(np.random.default_rng(7), count=30)
    sends = sorted(s.send_s or 0 for s in level.samples)
    lags = [sent - due for sent, due in zip(sends, schedule, strict=True)]
    assert min(lags) >= -1e-6  # never early; how late depends on how busy the box is
    assert max(lags) < 1.0
    assert level.notes is not None and "schedule lag p50" in level.notes


def test_a_timed_level_cuts_requests_still_in_flight_as_incomplete(tmp_path: Path) -> None:
    outcome = sweep(
        FakeServer(token_s=0.01),
        tmp_path / "run.json",
        concurrencies=(2,),
        requests_per_level=None,
        duration_per_level_s=0.5,
        warmup_requests=0,
        workload=WorkloadConfig(isl=16, osl=20),
    )
    level = outcome.run.levels[0]
    assert outcome.complete and level.failed == 0 and level.incomplete  # 0.2 s requests, cut at 0.5
    assert level.completed is not None and level.completed + level.incomplete == level.requests_sent
    assert level.window_end_s == pytest.approx(0.5)
    cut = [s for s in level.samples if s.error is not None]
    assert len(cut) == level.incomplete and all(
        s.error.startswith("incomplete") for s in cut if s.error
    )
    assert level.failure_rate() in (0.0, None)  # None if a busy box let no request finish
    assert level.value("output_tok_s")  # tokens of cut requests still count in the window


def test_failed_requests_are_counted_and_a_failing_level_is_marked(tmp_path: Path) -> None:
    outcome = sweep(
        FakeServer(fail_every=5),
        tmp_path / "run.json",
        concurrencies=(2,),
        requests_per_level=20,
        warmup_requests=0,
    )
    level = outcome.run.levels[0]
    assert (level.requests_sent, level.completed, level.failed) == (20, 16, 4)
    assert level.notes is not None and "failure rate 20.0% is above the 5.0% limit" in level.notes


def test_the_api_key_is_sent_but_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = FakeServer()
    with pytest.raises(InputError, match="api_key_env"):
        sweep(server, tmp_path / "run.json", api_key_env="CAPPLAN_TEST_KEY")
    monkeypatch.setenv("CAPPLAN_TEST_KEY", "sk-secret-123")
    sweep(server, tmp_path / "run.json", api_key_env="CAPPLAN_TEST_KEY", concurrencies=(1,))
    assert server.auth == {"Bearer sk-secret-123"}
    assert "sk-secret-123" not in (tmp_path / "run.json").read_text(encoding="utf-8")


def test_a_server_that_answers_nothing_is_an_input_error_and_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="every warm-up request failed"):
        sweep(FakeServer(fail_from=1), tmp_path / "run.json")
    assert not (tmp_path / "run.json").exists()


def test_a_level_the_probe_cannot_aggregate_is_kept_as_counts_and_ends_the_sweep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An edge case no server reaches any more (usage is checked per request): the probe's own
    # math failing on the second level must still leave that level's counts in the file.
    real = level_run.level_from_records
    calls: list[int] = []

    def second_fails(*args: Any, **kwargs: Any) -> Level:
        calls.append(1)
        if len(calls) == 2:
            raise OverflowError("cannot fit 'int' into an index-sized integer")
        return real(*args, **kwargs)

    monkeypatch.setattr(level_run, "level_from_records", second_fails)
    out = tmp_path / "run.json"
    outcome = sweep(FakeServer(), out, saturation=SaturationConfig(enabled=False))
    assert (
        not outcome.complete
        and outcome.stop_reason == "the probe could not aggregate concurrency 2"
    )
    first, second = read_run_file(out).levels
    assert first.metrics and not second.metrics
    assert (second.requests_sent, second.completed, second.failed) == (16, 16, 0)
    assert second.notes is not None and "OverflowError: cannot fit" in second.notes


def test_a_run_file_that_cannot_be_written_mid_sweep_is_an_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(run: object, path: Path) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sweep_module, "write_run_file", disk_full)
    with pytest.raises(InputError, match=r"after 1 level\(s\): No space left on device"):
        sweep(FakeServer(), tmp_path / "run.json", saturation=SaturationConfig(enabled=False))
