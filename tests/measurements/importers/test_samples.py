"""Recomputation from per-request samples, checked against values worked out by hand."""

from __future__ import annotations

import pytest

from measurements.importers.common import MetricSet, normalise_engine
from measurements.importers.samples import recompute, tpot_ms
from measurements.run_file import Origin, RequestSample


def sample(
    ttft_ms: float, e2e_ms: float, tokens: int, gaps: tuple[float, ...] = ()
) -> RequestSample:
    return RequestSample(ttft_ms=ttft_ms, e2e_ms=e2e_ms, output_tokens=tokens, chunk_gaps_ms=gaps)


def test_tpot_is_decode_time_over_tokens_after_the_first() -> None:
    assert tpot_ms(sample(100, 1000, 10)) == 100  # (1000 - 100) / 9
    assert tpot_ms(sample(100, 100, 1)) is None  # undefined for a single token


def test_linear_percentiles_and_mean_over_successful_requests_only() -> None:
    samples = [sample(t, t + 90, 10) for t in (10, 20, 30, 40)]
    samples.append(RequestSample(error="HTTP 500"))
    metrics = MetricSet()
    recompute(metrics, samples, duration_s=2.0)
    values = {m.name: m.value for m in metrics.metrics() if m.origin == Origin.RECOMPUTED}
    # ttft 10,20,30,40: p50 = 25, p90 = 30 + 0.7 * 10 = 37 (linear interpolation)
    assert values["mean_ttft_ms"] == 25 and values["p50_ttft_ms"] == 25
    assert values["p90_ttft_ms"] == pytest.approx(37)
    assert values["p99_tpot_ms"] == 10  # every request: 90 ms over 9 tokens
    assert values["output_tok_s"] == 20  # 4 x 10 tokens in 2 s
    assert values["request_s"] == 2


def test_per_token_itl_only_when_each_chunk_is_one_token() -> None:
    one_per_chunk, two_per_chunk = MetricSet(), MetricSet()
    notes = recompute(one_per_chunk, [sample(5, 35, 4, (10, 10, 10))], duration_s=1)
    assert one_per_chunk.metrics() and not notes
    assert [m.value for m in one_per_chunk.metrics() if m.name == "p99_itl_ms"] == [10]
    notes = recompute(two_per_chunk, [sample(5, 35, 7, (10, 10, 10))], duration_s=1)
    assert not [m for m in two_per_chunk.metrics() if "_itl_" in m.name]
    assert [m.value for m in two_per_chunk.metrics() if m.name == "p99_icl_ms"] == [10]
    assert notes == ["per-token itl not recomputed: some chunks carried several tokens"]


def test_a_second_value_for_a_metric_is_noted_not_kept() -> None:
    metrics = MetricSet()
    metrics.add("p50_ttft_ms", 24.2, source=("ttft_ms", 24.2))
    metrics.add("p50_ttft_ms", 24.3, source=("ttft_ms_p50", 24.3))
    assert [m.value for m in metrics.metrics()] == [24.2]
    assert "ignored ttft_ms_p50=24.3" in metrics.notes[0]


@pytest.mark.parametrize(
    ("given", "name"),
    [
        ("TensorRT-LLM", "tensorrt-llm"),
        ("trt", "tensorrt-llm"),
        (" vLLM ", "vllm"),
        ("SGLang", "sglang"),
    ],
)
def test_engine_names_are_normalised(given: str, name: str) -> None:
    assert normalise_engine(given) == name
