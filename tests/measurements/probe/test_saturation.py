"""Saturation: a sweep stops when throughput goes flat or TTFT explodes, and names the knee."""

from __future__ import annotations

from measurements.probe.config import SaturationConfig
from measurements.probe.saturation import SaturationPoint, assess

# The seed article's vLLM H100 curve (output tok/s at 1/16/64/128 streams), then a flat 256.
SEED = [
    SaturationPoint(1, 68.2, 40),
    SaturationPoint(16, 1010, 45),
    SaturationPoint(64, 2840, 60),
    SaturationPoint(128, 3710, 90),
]


def test_a_curve_still_climbing_is_not_saturated() -> None:
    verdict = assess(SEED, SaturationConfig())
    assert not verdict.saturated and verdict.knee is None


def test_flat_throughput_stops_and_the_knee_is_the_last_level_that_grew() -> None:
    verdict = assess([*SEED, SaturationPoint(256, 3790, 150)], SaturationConfig())
    assert verdict.saturated and verdict.knee == 128  # 3710 -> 3790 is +2.2%, under 5%
    assert "knee at concurrency 128" in verdict.reason and "3710.0 tok/s" in verdict.reason


def test_patience_waits_for_several_flat_levels() -> None:
    flat_once = [*SEED, SaturationPoint(256, 3790, 150)]
    config = SaturationConfig(patience=2)
    assert not assess(flat_once, config).saturated
    verdict = assess([*flat_once, SaturationPoint(512, 3700, 300)], config)
    assert verdict.saturated and verdict.knee == 128


def test_a_drop_counts_as_flat() -> None:
    verdict = assess([*SEED, SaturationPoint(256, 3000, 150)], SaturationConfig())
    assert verdict.saturated and verdict.knee == 128


def test_ttft_blowup_stops_even_while_throughput_grows() -> None:
    points = [*SEED, SaturationPoint(256, 4500, 401)]  # 401 ms > 10 x 40 ms
    verdict = assess(points, SaturationConfig())
    assert verdict.saturated and verdict.knee == 128
    assert "p50 TTFT 401.0 ms at concurrency 256" in verdict.reason
    assert not assess([*SEED, SaturationPoint(256, 4500, 400)], SaturationConfig()).saturated


def test_a_level_without_throughput_is_flat() -> None:
    verdict = assess(
        [SaturationPoint(1, 50, 10), SaturationPoint(2, None, None)], SaturationConfig()
    )
    assert verdict.saturated and verdict.knee == 1 and "no throughput" in verdict.reason


def test_disabled_never_stops_and_one_level_is_never_enough() -> None:
    flat = [*SEED, SaturationPoint(256, 3710, 4000)]
    assert not assess(flat, SaturationConfig(enabled=False)).saturated
    assert not assess(SEED[:1], SaturationConfig()).saturated


def test_rate_sweeps_name_their_unit() -> None:
    points = [SaturationPoint(2, 100, 20), SaturationPoint(4, 101, 25)]
    assert "knee at rate 2" in assess(points, SaturationConfig(), unit="rate").reason
