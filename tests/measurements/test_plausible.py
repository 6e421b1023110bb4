"""Impossible levels are refused at every door: the RunFile model checks them, so an importer,
the probe and a restore all refuse the same numbers, naming them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from measurements.run_file import Level, Metric, RunFile

pytestmark = pytest.mark.hostile


def _level(*metrics: tuple[str, float], **counts: object) -> Level:
    return Level.model_validate(
        {
            "load_kind": counts.pop("load_kind", "concurrency"),
            "load_value": counts.pop("load_value", 8),
            "metrics": [Metric(name=n, value=v) for n, v in metrics],
            **counts,
        }
    )


def _refused(*metrics: tuple[str, float], **counts: object) -> str:
    with pytest.raises(ValidationError) as caught:
        _level(*metrics, **counts)
    return str(caught.value)


def test_a_p99_below_the_median_is_refused() -> None:
    said = _refused(("p50_ttft_ms", 200.0), ("p99_ttft_ms", 150.0))
    assert "p50_ttft_ms 200 is above p99_ttft_ms 150" in said


def test_a_mean_outside_min_and_max_is_refused() -> None:
    said = _refused(("min_tpot_ms", 10.0), ("mean_tpot_ms", 55.0), ("max_tpot_ms", 50.0))
    assert "mean_tpot_ms 55 is above max_tpot_ms 50" in said


def test_a_mean_above_the_p99_is_possible_and_kept() -> None:
    # One long request in a hundred: the mean can sit above the p99 without the max.
    level = _level(("p99_e2e_ms", 1000.0), ("mean_e2e_ms", 1200.0), ("max_e2e_ms", 90_000.0))
    assert level.value("mean_e2e_ms") == 1200.0


def test_rounding_within_a_twentieth_of_a_millisecond_passes() -> None:
    assert _level(("p95_itl_ms", 12.35), ("p99_itl_ms", 12.3)).value("p99_itl_ms") == 12.3


def test_more_completed_than_sent_is_refused() -> None:
    assert "100 requests completed but only 10 were sent" in _refused(
        requests_sent=10, completed=100
    )
    assert "more than the 10 sent" in _refused(requests_sent=10, completed=8, failed=5)


def test_tokens_beyond_any_context_window_are_refused() -> None:
    said = _refused(completed=64, output_tokens_total=10**12)
    assert "per request, beyond any context window" in said


@pytest.mark.parametrize("load", [1e308, 2e6])
def test_a_load_beyond_any_deployment_is_refused(load: float) -> None:
    assert "is beyond 1e+06" in _refused(load_value=load)


def test_a_plausible_level_is_kept_whole() -> None:
    level = _level(
        ("min_ttft_ms", 80.0),
        ("p50_ttft_ms", 100.0),
        ("mean_ttft_ms", 104.0),
        ("p99_ttft_ms", 180.0),
        ("max_ttft_ms", 200.0),
        requests_sent=64,
        completed=63,
        failed=1,
        output_tokens_total=63 * 256,
    )
    assert level.value("p99_ttft_ms") == 180.0 and level.completed == 63


def test_a_level_repeated_exactly_is_refused_but_a_repeat_measurement_is_kept() -> None:
    first = _level(("p50_ttft_ms", 100.0), completed=10)
    again = _level(("p50_ttft_ms", 104.0), completed=10)  # the same load measured twice
    deployment = {"engine": "vllm", "model": "m"}
    with pytest.raises(ValidationError) as caught:
        RunFile.model_validate(
            {
                "source": "probe",
                "provenance": "measured",
                "deployment": deployment,
                "levels": [first, first],
            }
        )
    assert "level 1 repeats level 0 exactly (concurrency 8)" in str(caught.value)
    kept = RunFile.model_validate(
        {
            "source": "probe",
            "provenance": "measured",
            "deployment": deployment,
            "levels": [first, again],
        }
    )
    assert len(kept.levels) == 2
