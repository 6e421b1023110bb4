"""Roofline ceilings and the physics check of measured curves (seed article, silicon sample)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from hardware.gpus import load_gpu_specs
from planner.curves.load import CurveKey, CurvePoint, LoadCurve
from planner.physics.catalog import model_facts
from planner.physics.roofline import Ceilings, ceilings, check_curve
from tests.planner.builders import SEED_TRTLLM, seed_curve, seed_curves, silicon_curves

H100_SPEC = next(spec for spec in load_gpu_specs() if spec.gpu == "H100-SXM-80GB")


def _ceilings(model: str, precision: str, tp: int = 1) -> Ceilings:
    found = ceilings(model, precision, H100_SPEC, tp)
    assert isinstance(found, Ceilings)
    return found


def _curve(points: tuple[CurvePoint, ...], **key: Any) -> LoadCurve:
    base = CurveKey("vllm", None, "meta-llama/Llama-3.1-8B", "bf16", "H100", 1, 1, 2048, 256)
    return LoadCurve(replace(base, **key), points, None, "measured", None, None, None, 1, ())


def test_single_stream_ceiling_is_bandwidth_over_weights_read() -> None:
    facts = model_facts("llama-3.1-70b")
    assert facts is not None
    # FP8: 1 byte a weight; the input table is looked up, not read.
    read_bytes = facts.total_params - facts.vocab_size * facts.hidden_size
    assert _ceilings("llama-3.1-70b", "fp8").decode_tok_s_single_stream == pytest.approx(
        3.35e12 / read_bytes
    )
    assert _ceilings("llama-3.1-70b", "fp8", tp=2).decode_tok_s_single_stream == pytest.approx(
        2 * 3.35e12 / read_bytes
    )


def test_prefill_floor_uses_the_precision_peak() -> None:
    fp8, bf16 = _ceilings("llama-3.1-8b", "fp8"), _ceilings("llama-3.1-8b", "bf16")
    expected = 2 * fp8.prefill_params * 4000 / 1979e12 * 1000
    assert fp8.min_prefill_ms(4000) == pytest.approx(expected)
    assert bf16.min_prefill_ms(4000) == pytest.approx(expected * 1979 / 989)


def test_four_bit_has_no_prefill_floor() -> None:
    assert _ceilings("llama-3.1-8b", "int4").min_prefill_ms(1000) is None


def test_aggregate_ceiling_at_most_concurrency_times_single_stream() -> None:
    ceil = _ceilings("llama-3.1-70b", "fp8", tp=2)
    for concurrency in (1.0, 8.0, 64.0, 256.0):
        most = ceil.max_output_tok_s(concurrency, 1024, 1024)
        assert most <= concurrency * ceil.decode_tok_s_single_stream * (1 + 1e-12)
        assert ceil.max_output_tok_s(concurrency, 8192, 1024) < most


def test_memory_fit_estimate() -> None:
    assert _ceilings("llama-3.1-70b", "bf16").max_streams(2048) == 0
    tp2, tp4 = _ceilings("llama-3.1-70b", "fp8", 2), _ceilings("llama-3.1-70b", "fp8", 4)
    assert 0 < tp2.max_streams(2048) < tp4.max_streams(2048)
    assert tp2.max_streams(2048, kv_bytes_per_element=1.0) >= 2 * tp2.max_streams(2048)


def test_seed_article_single_stream_is_above_the_ceiling() -> None:
    check = check_curve(seed_curve("tensorrt-llm", SEED_TRTLLM))
    first = check.points[0]
    assert first.stream_tok_s == 81.4
    assert first.stream_pct_of_ceiling == pytest.approx(81.4 / 48.2 * 100, rel=1e-3)
    assert "81.4 tok/s" in first.flags[0] and "48.2 tok/s" in first.flags[0]
    assert "1 x H100-SXM-80GB" in first.flags[0]
    assert check.above_ceiling


def test_seed_article_on_two_gpus_is_within_the_ceilings() -> None:
    for curve in seed_curves():
        two_gpus = replace(curve, key=replace(curve.key, tp=2, gpu_count=2), gpus_per_replica=2)
        assert not check_curve(two_gpus).above_ceiling


def test_measured_silicon_sample_stays_under_every_ceiling() -> None:
    for curve in silicon_curves():
        check = check_curve(curve)
        assert check.ceilings is not None, check.notes
        assert not check.flags, curve.label_text()
        for point in check.points:
            assert point.stream_pct_of_ceiling is not None
            assert 0 < point.stream_pct_of_ceiling <= 100
            assert point.output_pct_of_ceiling is not None
            assert 0 < point.output_pct_of_ceiling <= 100


def test_ttft_below_prefill_floor_is_flagged() -> None:
    check = check_curve(_curve((CurvePoint(1.0, ttft_ms=1.0, tpot_ms=20.0),)))
    assert check.points[0].min_prefill_ms is not None
    assert check.points[0].min_prefill_ms > 1.0
    assert "below the prefill floor" in check.flags[0]


def test_overfull_concurrency_gets_a_memory_note() -> None:
    check = check_curve(_curve((CurvePoint(1.0, tpot_ms=20.0), CurvePoint(4096.0, tpot_ms=90.0))))
    assert check.max_streams is not None
    assert any("4096" in note and "estimate" in note for note in check.notes)
    assert not check.flags


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ({"model": "acme/unknown-13b"}, "model facts unknown"),
        ({"precision": None}, "bytes per weight unknown"),
        ({"gpu": "MI300X"}, "no specs for GPU"),
        ({"gpu": None}, "GPU not stated"),
    ],
)
def test_no_check_says_why(key: dict[str, Any], reason: str) -> None:
    check = check_curve(_curve((CurvePoint(1.0, output_tok_s=10.0),), **key))
    assert check.ceilings is None and not check.points
    assert reason in check.notes[0] and check.notes[0].startswith("no physics check")
