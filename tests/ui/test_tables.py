"""Table rows and choices for the pages, and the price-editor check."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from errors import InputError
from measurements.importers import import_path
from measurements.run_file import Origin
from planner.curves.load import CurveKey, CurvePoint, LoadCurve
from planner.fitting.fit import fit_curve
from planner.inputs.prices import load_catalog_csv
from tests.ui.conftest import FIXTURES
from ui.tables import (
    NOT_STATED,
    fit_quality_rows,
    level_rows,
    price_entries_from_rows,
    price_rows,
    records,
)
from workflows.model_choices import model_choices, model_name_choices, workload_choices


@pytest.fixture
def catalog_rows() -> list[dict[str, object]]:
    return price_rows(load_catalog_csv())


def test_shipped_catalog_rows_round_trip_through_the_check(
    catalog_rows: list[dict[str, object]],
) -> None:
    assert price_entries_from_rows(catalog_rows) == load_catalog_csv()


def test_editor_frame_rows_round_trip(catalog_rows: list[dict[str, object]]) -> None:
    frame = pd.DataFrame(catalog_rows)
    assert price_entries_from_rows(records(frame)) == load_catalog_csv()


@pytest.mark.parametrize(
    ("column", "value", "expected"),
    [
        ("usd_per_gpu_hour", -2.0, "positive, finite"),
        ("usd_per_gpu_hour", 0.0, "positive, finite"),
        ("usd_per_gpu_hour", math.nan, "positive, finite"),
        ("usd_per_gpu_hour", math.inf, "positive, finite"),
        ("usd_per_gpu_hour", "cheap", "positive, finite"),
        ("usd_per_gpu_hour", 1e308, "at most 10000"),
        ("usd_per_gpu_hour", 10_000.01, "at most 10000"),
        ("usd_per_instance_hour", -8.0, "positive, finite"),
        ("usd_per_instance_hour", 1e308, "at most 1.024e+07"),
        ("gpus_per_instance", 1e9, "whole number from 1 to 1024"),
        ("gpus_per_instance", 0, "whole number"),
        ("gpus_per_instance", 2.5, "whole number"),
        ("provider", "  ", "must not be blank"),
        ("gpu", None, "must not be blank"),
    ],
)
def test_a_bad_cell_is_named_by_row_column_and_value(
    catalog_rows: list[dict[str, object]], column: str, value: object, expected: str
) -> None:
    catalog_rows[4][column] = value
    with pytest.raises(InputError) as caught:
        price_entries_from_rows(catalog_rows)
    assert caught.value.field == column
    assert "row 5" in str(caught.value) and expected in str(caught.value)
    if value is not None and not (isinstance(value, str) and not value.strip()):
        assert repr(value) in str(caught.value)


def test_each_gpu_needs_exactly_one_default(catalog_rows: list[dict[str, object]]) -> None:
    h100 = [i for i, row in enumerate(catalog_rows) if row["gpu"] == "H100-SXM-80GB"]
    default = next(i for i in h100 if catalog_rows[i]["is_default"])
    other = next(i for i in h100 if not catalog_rows[i]["is_default"])
    two = [dict(row) for row in catalog_rows]
    two[other]["is_default"] = True
    with pytest.raises(InputError, match="H100-SXM-80GB has 2 default rows") as caught:
        price_entries_from_rows(two)
    assert caught.value.field == "is_default"
    none = [dict(row) for row in catalog_rows]
    none[default]["is_default"] = False
    with pytest.raises(InputError, match="no row for H100-SXM-80GB is marked default"):
        price_entries_from_rows(none)
    with pytest.raises(InputError, match="empty"):
        price_entries_from_rows([])
    # An owning-cost lens is never the price a GPU is rented at.
    lens = [dict(row) for row in catalog_rows]
    b300 = [row for row in lens if row["gpu"] == "B300-SXM-288GB"]
    assert b300 and not any(row["is_default"] for row in b300)  # reserved terms only: no default
    first_lens = next(row for row in b300 if str(row["pricing_type"]).startswith("tco_"))
    first_lens["is_default"] = True
    with pytest.raises(InputError, match="owning-cost lens"):
        price_entries_from_rows(lens)


def test_level_tables_keep_reported_and_recomputed_values_apart() -> None:
    path = FIXTURES / "vllm-cpu-real" / "c16-detailed.json"
    printed = json.loads(path.read_text(encoding="utf-8"))
    (run,) = import_path(path).runs
    (reported,) = level_rows(run, Origin.REPORTED)
    (recomputed,) = level_rows(run, Origin.RECOMPUTED)
    assert reported["p99_ttft_ms"] == printed["p99_ttft_ms"]  # what vLLM printed
    assert reported["output_tok_s"] == printed["output_throughput"]
    assert reported["samples"] == printed["completed"] == len(printed["ttfts"])
    # capplan's own percentiles over the samples agree with vLLM's (both linear interpolation).
    assert recomputed["p99_ttft_ms"] == pytest.approx(printed["p99_ttft_ms"], rel=1e-6)
    assert "requests_sent" not in recomputed
    assert level_rows(run, Origin.DERIVED) == []


def _curve(model: str, isl: int | None, osl: int | None, run_id: int = 1) -> LoadCurve:
    key = CurveKey("vllm", None, model, "fp8", "H100-SXM-80GB", 1, 1, isl, osl)
    points = tuple(CurvePoint(float(c), output_tok_s=c / (0.01 + 0.0002 * c)) for c in (1, 4, 16))
    return LoadCurve(key, points, run_id, "imported", None, None, None, 1, ())


def test_model_and_workload_choices_follow_the_planners_model_matching() -> None:
    curves = [
        _curve("meta-llama/Llama-3.1-70B", 1024, 1024),
        _curve("meta-llama/Llama-3.1-70B-Instruct", None, None),
        _curve("meta-llama/Llama-3.1-70B", 1024, 128),
        _curve("Qwen/Qwen3-32B", 2048, 512),
    ]
    assert model_choices(curves) == ["Qwen/Qwen3-32B", "meta-llama/Llama-3.1-70B"]
    assert workload_choices(curves, "meta-llama/Llama-3.1-70B-Instruct") == [
        "1024/128",
        "1024/1024",
        NOT_STATED,
    ]


def test_fit_quality_rows_list_each_fitted_series() -> None:
    fit = fit_curve(_curve("m", 1024, 1024, run_id=7))
    rows = fit_quality_rows([fit])
    assert [row["series"] for row in rows] == ["throughput"]  # no latency was measured
    (row,) = rows
    assert fit.throughput is not None
    assert row["run"] == 7 and row["family"] == fit.throughput.family and row["points"] == 3


def test_model_choices_name_a_model_by_its_id_before_a_path_it_was_served_from() -> None:
    # A run stored before paths were made model ids (issue 32 item 7) keeps its path.
    stored = ["/models/models--openai--gpt-oss-120b/snapshots/b5c9", "openai/gpt-oss-120b", "m"]
    assert model_name_choices(stored) == ["m", "openai/gpt-oss-120b"]
