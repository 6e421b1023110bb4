"""A level's records become a Level: failures kept, tokens counted by chunk time inside the
window, schedule lag reported; synthetic records with hand-worked numbers."""

from __future__ import annotations

import pytest

from measurements.aggregate import SteadyWindow
from measurements.probe.config import ProbeConfig
from measurements.probe.records import level_from_records
from measurements.probe.send import RequestRecord
from measurements.probe.workloads import WorkloadConfig
from measurements.run_file import LoadKind

CONFIG = ProbeConfig(
    base_url="http://server:8000",
    model="m",
    concurrencies=(1,),
    workload=WorkloadConfig(isl=8, osl=8),
)


def record(send_s: float, first: float, step: float, **extra: object) -> RequestRecord:
    times = tuple(first + step * i for i in range(4))
    fields: dict[str, object] = {
        "send_s": send_s,
        "first_token_s": times[0],
        "end_s": times[-1],
        "chunk_times_s": times,
        "chunk_tokens": (1, 1, 1, 1),
        "input_tokens": 8,
        "output_tokens": 4,
        "http_status": 200,
        "error": None,
        "tokens_exact": True,
        "requested_input_tokens": 8,
        "requested_output_tokens": 4,
    }
    return RequestRecord(**{**fields, **extra})  # type: ignore[arg-type]


def test_failures_are_counted_never_dropped_and_a_high_rate_is_marked() -> None:
    records = [record(0.1 * i, 0.1 * i + 0.05, 0.01) for i in range(8)]
    failed: dict[str, object] = {
        "first_token_s": None,
        "end_s": 0.5,
        "chunk_times_s": (),
        "chunk_tokens": (),
        "output_tokens": None,
    }
    records += [record(0.9, 0, 0, error="HTTP 503: busy", http_status=503, **failed)] * 2
    level = level_from_records(
        records,
        load_kind=LoadKind.CONCURRENCY,
        load_value=2,
        window=SteadyWindow(0, 0.1, 0.8),
        config=CONFIG,
    )
    assert (level.requests_sent, level.completed, level.failed, len(level.samples)) == (
        10,
        8,
        2,
        10,
    )
    assert level.notes is not None
    assert (
        "failure rate 20.0% is above the 5.0% limit: kept out of fits; 2 failed (2x HTTP 503: busy)"
        in level.notes
    )
    assert level.samples[-1].error == "HTTP 503: busy" and level.samples[-1].output_tokens is None


def test_output_rate_counts_tokens_by_chunk_time_inside_the_window() -> None:
    records = [record(0.0, 0.5, 0.5), record(1.0, 1.2, 0.5)]  # chunks 0.5..2.0 and 1.2..2.7
    window = SteadyWindow(10.0 - 10.0, 1.0, 2.0)
    level = level_from_records(
        records, load_kind=LoadKind.CONCURRENCY, load_value=2, window=window, config=CONFIG
    )
    assert level.value("output_tok_s") == 4.0  # 1.0, 1.5 of the first; 1.2, 1.7 of the second
    assert (level.window_start_s, level.window_end_s) == (1.0, 2.0)
    assert level.value("max_concurrent_requests") == 2


@pytest.mark.parametrize(("lag_s", "behind"), [(0.050, True), (0.001, False)])
def test_a_client_that_falls_behind_its_schedule_says_so(lag_s: float, behind: bool) -> None:
    records = [record(0.1 * i + lag_s, 0.1 * i + 0.2, 0.01, scheduled_s=0.1 * i) for i in range(10)]
    level = level_from_records(
        records,
        load_kind=LoadKind.RATE,
        load_value=10,
        window=SteadyWindow(0, 0, 1.5),
        config=CONFIG,
    )
    assert level.notes is not None and f"p99 {1000 * lag_s:.2f} ms" in level.notes
    assert ("fell behind" in level.notes) is behind
