"""The canonical aggregate math, checked against values worked out by hand."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from measurements.aggregate import (
    SteadyWindow,
    WindowRule,
    distribution,
    latency_metrics,
    peak_overlap,
    per_token_gaps,
    steady_window,
    tokens_in_window,
    tpot_ms,
    window_metrics,
)


@dataclass(frozen=True)
class Req:
    """A request as the level metrics see it (the probe's RequestRecord has the same fields)."""

    send_s: float
    chunk_times_s: tuple[float, ...]
    chunk_tokens: tuple[int, ...]
    input_tokens: int | None = 10
    output_tokens: int | None = None
    tokens_exact: bool = True

    @property
    def first_token_s(self) -> float | None:
        return self.chunk_times_s[0] if self.chunk_times_s else None

    @property
    def end_s(self) -> float | None:
        return self.chunk_times_s[-1] if self.chunk_times_s else None


def test_linear_percentiles_mean_and_spread() -> None:
    summary = distribution([10, 20, 30, 40])
    assert summary is not None
    assert (summary.mean, summary.p50, summary.min, summary.max) == (25, 25, 10, 40)
    assert summary.p90 == pytest.approx(37)  # 30 + 0.7 * 10
    assert summary.std == pytest.approx(11.18034, rel=1e-5)  # population stddev
    assert distribution([]) is None


def test_tpot_needs_more_than_one_token() -> None:
    assert tpot_ms(100, 1000, 10) == 100
    assert tpot_ms(100, 100, 1) is None
    assert tpot_ms(None, 100, 5) is None


def test_a_chunk_of_k_tokens_spreads_its_gap_over_k() -> None:
    gaps = per_token_gaps((1.0, 1.3, 1.9), (1, 3, 2))
    assert gaps == pytest.approx([0.1, 0.1, 0.1, 0.3, 0.3])


@given(
    st.lists(st.floats(0.0001, 5), min_size=1, max_size=30),
    st.lists(st.integers(1, 6), min_size=31, max_size=31),
)
def test_per_token_gaps_sum_to_last_minus_first_chunk(steps: list[float], ks: list[int]) -> None:
    times = [0.5]
    for step in steps:
        times.append(times[-1] + step)
    tokens = ks[: len(times)]
    gaps = per_token_gaps(times, tokens)
    assert sum(gaps) == pytest.approx(times[-1] - times[0])
    assert len(gaps) == sum(tokens) - tokens[0]


def test_closed_loop_window_waits_for_full_concurrency_and_stops_at_last_send() -> None:
    sends = [0.0, 0.0, 0.5, 2.0, 4.0, 6.0, 8.0]
    lasts = [2.0, 4.0, 6.0, 6.0, 8.0, 9.0, 10.0]
    rule = WindowRule(0.1, 0.1, fill_count=3)
    window = steady_window(0.0, sends, lasts, rule)
    # span 0..10: start = max(0 + 1.0, third send 0.5) = 1.0; end = min(last send 8, 10 - 1) = 8
    assert (window.start_s, window.end_s, window.note) == (1.0, 8.0, None)
    late_fill = steady_window(0.0, sends, lasts, WindowRule(0.1, 0.1, fill_count=4))
    assert late_fill.start_s == 2.0  # the 4th request went out at 2.0


def test_drain_fraction_cuts_a_long_tail() -> None:
    window = steady_window(0.0, [0.0, 1.0, 9.5], [1.0, 2.0, 20.0], WindowRule(0.1, 0.1))
    assert (window.start_s, window.end_s) == (2.0, 9.5)
    tail = steady_window(0.0, [0.0, 1.0, 19.0], [1.0, 2.0, 20.0], WindowRule(0.1, 0.1))
    assert tail.end_s == 18.0  # 20 - 0.1 x 20 comes before the last send


def test_duration_level_ends_at_the_cut() -> None:
    window = steady_window(
        5.0, [5.0, 5.1, 6.0], [6.5, 6.9, 7.0], WindowRule(0.1, 0.1, cut_at_s=7.0)
    )
    assert window.start_s == pytest.approx(5.2) and window.end_s == 7.0
    assert window.level_start_s == 5.0


def test_one_wave_has_no_steady_state_and_says_so() -> None:
    window = steady_window(0.0, [0.0, 0.0], [3.0, 4.0], WindowRule(0.1, 0.1, fill_count=2))
    assert (window.start_s, window.end_s) == (0.0, 4.0)
    assert window.note is not None and "whole span" in window.note


def test_tokens_count_by_arrival_inside_a_half_open_window() -> None:
    window = SteadyWindow(0.0, 1.0, 3.0)
    assert tokens_in_window((0.5, 1.0, 2.0, 3.0), (1, 2, 4, 8), window) == 6


def test_peak_overlap_treats_intervals_as_half_open() -> None:
    assert peak_overlap([(0, 1), (1, 2), (2, 3)]) == 1
    assert peak_overlap([(0, 2), (1, 3), (1.5, 1.7)]) == 3


def test_window_rates_count_straddling_requests_in_part() -> None:
    window = SteadyWindow(0.0, 1.0, 3.0)
    early = Req(0.0, (0.5, 0.9, 1.5), (1, 1, 1), output_tokens=3)  # one token inside
    inside = Req(1.0, (1.2, 1.4, 2.0, 2.5), (1, 1, 1, 1), output_tokens=4)
    late = Req(2.5, (2.8, 3.5), (2, 2), output_tokens=4)  # first chunk (2 tokens) inside
    served = [early, inside, late]
    metrics = {m.name: m.value for m in window_metrics(served, served, window)}
    assert metrics["output_tok_s"] == (1 + 4 + 2) / 2
    assert metrics["input_tok_s"] == (10 + 10) / 2  # inside and late reached first token in it
    assert metrics["total_tok_s"] == metrics["output_tok_s"] + metrics["input_tok_s"]
    assert metrics["request_s"] == 2 / 2  # early (1.5) and inside (2.5) ended in it; late at 3.5


def test_without_per_chunk_counts_the_server_total_is_spread_over_chunks() -> None:
    window = SteadyWindow(0.0, 0.0, 10.0)
    flagged = Req(0.0, (1.0, 2.0), (1, 1), output_tokens=6, tokens_exact=False)
    metrics = {m.name: m.value for m in window_metrics([flagged], [flagged], window)}
    assert metrics["output_tok_s"] == 0.6


def test_latency_metrics_by_canonical_definitions() -> None:
    a = Req(0.0, (0.1, 0.2, 0.4), (1, 1, 2), output_tokens=4)  # ttft 100, e2e 400, tpot 100
    b = Req(1.0, (1.3, 1.6), (1, 1), output_tokens=2)  # ttft 300, e2e 600, tpot 300
    notes: list[str] = []
    values = {m.name: m.value for m in latency_metrics([a, b], notes)}
    assert values["p50_ttft_ms"] == pytest.approx(200)
    assert values["mean_tpot_ms"] == pytest.approx(200)
    assert values["max_e2e_ms"] == pytest.approx(600)
    # per-token gaps: a: 100, 100, 100 (200 ms over 2 tokens); b: 300
    assert values["p50_itl_ms"] == pytest.approx(100) and values["max_itl_ms"] == pytest.approx(300)
    assert values["max_icl_ms"] == pytest.approx(300) and values["min_icl_ms"] == pytest.approx(100)
    assert values["stream_tok_s"] == pytest.approx(5)  # 1000 / mean tpot 200
    assert values["mean_e2e_per_token_ms"] == pytest.approx((100 + 300) / 2)
    assert notes == []


def test_itl_left_out_with_a_note_when_chunk_token_counts_are_unknown() -> None:
    notes: list[str] = []
    flagged = Req(0.0, (0.1, 0.2), (1, 1), output_tokens=5, tokens_exact=False)
    names = {m.name for m in latency_metrics([flagged], notes)}
    assert "p50_icl_ms" in names and not any("_itl_" in name for name in names)
    assert len(notes) == 1 and "per-token itl not reported" in notes[0]
