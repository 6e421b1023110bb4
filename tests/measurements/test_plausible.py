"""Impossible levels are refused at every door: the RunFile model checks them, so an importer,
the probe and a restore all refuse the same numbers, naming them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from cli import app
from measurements.run_file import Level, Metric, RequestSample, RunFile

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


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("output_tok_s", 1e308, "output_tok_s 1e+308 is beyond 1e+09 tok/s"),
        ("p99_ttft_ms", 2e9, "p99_ttft_ms 2e+09 is beyond 1e+09 ms"),
        ("request_s", 1e12, "request_s 1e+12 is beyond 1e+06"),
    ],
)
def test_a_metric_no_instrument_could_give_is_refused(name: str, value: float, said: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(f"implausible metric: {said}")):
        Metric(name=name, value=value)
    assert Metric(name=name, value=1000.0).value == 1000.0  # a plausible one is kept


@pytest.mark.parametrize(
    ("sample", "said"),
    [
        ({"send_s": -1e308}, "send_s -1e+308 is more than 1e+07 s from the level start"),
        ({"chunk_gaps_ms": [1.0, -3.0]}, "chunk_gaps_ms[1] -3 is not between 0 and 1e+09 ms"),
        ({"e2e_ms": 1e300}, "e2e_ms 1e+300 is not between 0 and 1e+09 ms"),
    ],
)
def test_a_sample_no_clock_could_measure_is_refused(sample: dict[str, object], said: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(f"implausible sample: {said}")):
        RequestSample.model_validate(sample)
    kept = RequestSample.model_validate({"send_s": -0.5, "chunk_gaps_ms": [0.0, 12.5]})
    assert kept.chunk_gaps_ms == (0.0, 12.5)  # a send just before the window is possible


@pytest.mark.parametrize(
    ("metrics", "sample", "said"),
    [
        ([{"name": "output_tok_s", "value": 1e308}], {}, "field 'levels.0.metrics.0'"),
        ([], {"send_s": -1e308}, "field 'levels.0.samples.0'"),
        ([], {"chunk_gaps_ms": [1.0, -3.0]}, "field 'levels.0.samples.0'"),
    ],
)
def test_a_run_file_with_impossible_numbers_is_refused_naming_file_field_and_value(
    tmp_path: Path, metrics: list[object], sample: dict[str, object], said: str
) -> None:
    level = {"load_kind": "concurrency", "load_value": 8, "metrics": metrics}
    document = {
        "schema_version": 1,
        "source": "probe",
        "provenance": "measured",
        "deployment": {"engine": "vllm", "model": "m", "gpu": "H100-SXM-80GB"},
        "levels": [{**level, "samples": [sample]}],
    }
    file = tmp_path / "claims.json"
    file.write_text(json.dumps(document))
    store = f"sqlite:///{tmp_path / 'store.db'}"
    result = CliRunner().invoke(app, ["import", str(file), "--db", store])
    assert result.exit_code == 2, result.output
    line = " ".join(result.stderr.split())
    assert "claims.json" in line and said in line and "implausible" in line
    assert "1e+308" in line or "-3.0" in line


@pytest.mark.parametrize(
    ("model", "raw"),
    [
        (Metric, {"name": "output_tok_s", "value": True}),
        (RequestSample, {"send_s": False}),
        (RequestSample, {"chunk_gaps_ms": [1.0, True]}),
        (Level, {"load_kind": "concurrency", "load_value": True}),
        (RequestSample, {"ttft_ms": True}),
        (RequestSample, {"output_tokens": True}),
        (Level, {"load_kind": "concurrency", "load_value": 1, "duration_s": True}),
        (Level, {"load_kind": "concurrency", "load_value": 1, "completed": False}),
    ],
    ids=["metric", "send", "gap", "load", "ttft", "tokens", "duration", "completed"],
)
def test_a_boolean_where_a_measured_number_belongs_is_refused(
    model: type[Metric | RequestSample | Level], raw: dict[str, object]
) -> None:
    """JSON `true` is not 1 tok/s: pydantic's lax mode would store it as 1."""
    with pytest.raises(ValidationError, match="expected a number, got the boolean"):
        model.model_validate(raw)
