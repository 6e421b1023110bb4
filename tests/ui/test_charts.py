"""The figure builders: measured markers, fitted line, filled band, dashed extrapolation."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from planner.analysis.uncertainty import OptionRange, Percentiles, PlanRanges
from planner.curves.load import CurveKey, CurvePoint, LoadCurve
from planner.fitting.fit import CurveFit, fit_curve
from planner.sizing.options import OptionKey
from ui.charts import (
    EXTRAPOLATED_DASH,
    concurrency_grid,
    cost_range_figure,
    stream_speed_figure,
    throughput_figure,
    ttft_figure,
)

# The seed article's published output tok/s at 1/16/64/128 streams (H100, Llama 3.1 70B FP8).
SEED_VLLM = {1: 68.2, 16: 1010.0, 64: 2840.0, 128: 3710.0}


def _curve(
    run_id: int, engine: str, throughput: dict[int, float], **latency: dict[int, float]
) -> LoadCurve:
    points = tuple(
        CurvePoint(
            concurrency=float(c),
            output_tok_s=t,
            **{name: values[c] for name, values in latency.items() if c in values},
        )
        for c, t in throughput.items()
    )
    key = CurveKey(
        engine, "1.0", "meta-llama/Llama-3.1-70B", "fp8", "H100-SXM-80GB", 1, 1, 1024, 1024
    )
    return LoadCurve(key, points, run_id, "published", None, None, None, 1, ())


def _step_law(concurrencies: list[int], a: float = 0.01, b: float = 0.0002) -> dict[int, float]:
    return {c: c / (a + b * c) for c in concurrencies}


@pytest.fixture
def seed_fit() -> CurveFit:
    return fit_curve(_curve(1, "vllm", SEED_VLLM))


@pytest.fixture
def two_ranges() -> list[CurveFit]:
    """A curve measured up to 128 streams and one measured only up to 16."""
    wide = _curve(1, "vllm", _step_law([1, 4, 16, 64, 128]))
    narrow = _curve(2, "tensorrt-llm", _step_law([1, 2, 4, 8, 16], a=0.008))
    return [fit_curve(wide), fit_curve(narrow)]


def _traces(figure: Any, suffix: str) -> list[Any]:  # plotly ships no type hints
    return [t for t in figure.data if t.name.endswith(suffix)]


def test_measured_markers_are_the_curve_points(seed_fit: CurveFit) -> None:
    figure = throughput_figure([seed_fit])
    (markers,) = _traces(figure, "published")
    assert markers.mode == "markers"
    assert list(markers.x) == [1.0, 16.0, 64.0, 128.0]
    assert list(markers.y) == list(SEED_VLLM.values())


def test_fitted_line_and_filled_band_cover_the_measured_range(seed_fit: CurveFit) -> None:
    assert seed_fit.throughput is not None
    figure = throughput_figure([seed_fit])
    (band,) = _traces(figure, "band")
    (line,) = [t for t in figure.data if " fit (" in t.name]
    assert band.fill == "toself"
    assert min(line.x) == 1.0 and max(line.x) == 128.0
    assert line.line.dash in (None, "solid")
    lo, hi = seed_fit.throughput.eval_band(np.asarray(line.x))
    # The band polygon is the upper edge left to right, then the lower edge back.
    n = len(line.x)
    assert np.allclose(band.y[:n], hi) and np.allclose(band.y[n:], lo[::-1])
    assert all(low <= mid <= high for low, mid, high in zip(lo, line.y, hi, strict=True))


def test_a_curve_read_past_its_measured_range_is_dashed(two_ranges: list[CurveFit]) -> None:
    figure = throughput_figure(two_ranges)
    extrapolated = _traces(figure, "extrapolated")
    assert len(extrapolated) == 1  # only the narrow curve is read past its data
    (segment,) = extrapolated
    assert "run 2" in segment.name
    assert segment.line.dash == EXTRAPOLATED_DASH
    assert min(segment.x) == 16.0 and max(segment.x) == 128.0
    narrow_line = next(t for t in figure.data if t.name.startswith("run 2") and " fit (" in t.name)
    assert max(narrow_line.x) == 16.0  # the solid line stops where the data stops


def test_grid_spans_every_curve_and_keeps_the_measured_points(
    two_ranges: list[CurveFit],
) -> None:
    grid = concurrency_grid(two_ranges)
    assert grid[0] == 1.0 and grid[-1] == 128.0
    assert {1.0, 2.0, 4.0, 8.0, 16.0, 64.0, 128.0} <= set(grid.tolist())
    assert concurrency_grid([]).size == 0


def test_ttft_figure_draws_p50_and_p99_series_on_log_axes() -> None:
    concurrencies = [1, 4, 16, 64]
    curve = _curve(
        3,
        "vllm",
        _step_law(concurrencies),
        p50_ttft_ms={c: 20.0 + 2.0 * c for c in concurrencies},
        p99_ttft_ms={c: 40.0 + 5.0 * c for c in concurrencies},
    )
    figure = ttft_figure([fit_curve(curve)])
    measured = {t.name: list(t.y) for t in _traces(figure, "published")}
    assert measured == {
        "run 3 · vLLM 1.0 · H100 SXM 80GB x1 · TP1 · 1024/1024 · TTFT p50 published": [
            22.0,
            28.0,
            52.0,
            148.0,
        ],
        "run 3 · vLLM 1.0 · H100 SXM 80GB x1 · TP1 · 1024/1024 · TTFT p99 published": [
            45.0,
            60.0,
            120.0,
            360.0,
        ],
    }
    assert figure.layout.yaxis.type == "log" and figure.layout.xaxis.type == "log"


def test_per_stream_figure_divides_throughput_by_concurrency_and_shows_tpot() -> None:
    curve = _curve(4, "vllm", SEED_VLLM, p50_tpot_ms={64: 24.2})
    figure = stream_speed_figure([fit_curve(curve)])
    per_stream = next(t for t in figure.data if t.name.endswith("T(c)/c published"))
    assert np.allclose(per_stream.y, [68.2, 1010 / 16, 2840 / 64, 3710 / 128])
    tpot = next(t for t in figure.data if t.name.endswith("1000/TPOT published"))
    assert list(tpot.x) == [64.0] and np.isclose(tpot.y[0], 1000 / 24.2)
    line = next(t for t in figure.data if " fit (" in t.name)
    fit = fit_curve(curve).throughput
    assert fit is not None
    assert np.allclose(line.y, fit.eval(np.asarray(line.x)) / np.asarray(line.x))


@pytest.mark.parametrize(
    ("provenance", "word"),
    [("published", "published"), ("adjusted", "adjusted"), ("projected", "projected"),
     ("measured", "measured")],
)  # fmt: skip
def test_legends_call_only_measured_points_measured(provenance: str, word: str) -> None:
    curve = replace(_curve(1, "vllm", SEED_VLLM), provenance=provenance)
    fit = fit_curve(curve)
    for figure in (throughput_figure([fit]), stream_speed_figure([fit])):
        names = [t.name for t in figure.data if t.mode == "markers"]
        assert names and all(name.endswith(f" {word}") for name in names), names
        hovers = " ".join(str(t.hovertemplate) for t in figure.data if t.mode == "markers")
        assert ("(measured)" in hovers) == (word == "measured"), hovers


def test_cost_range_chart_says_its_dot_is_the_p50_and_draws_the_planned_cost() -> None:
    key = OptionKey("vllm", "H100-SXM-80GB", 2, "fp8")
    option = OptionRange(
        key=key, point_nodes=3, point_gpus=24, point_replicas=12,
        point_total_monthly_cost_usd=51_684.0, expected_total_monthly_cost_usd=68_000.0,
        nodes=Percentiles(3, 4, 5),
        gpus=Percentiles(24, 32, 40), replicas=Percentiles(12, 16, 20),
        total_monthly_cost_usd=Percentiles(51_684.0, 68_912.0, 86_140.0), sampled=True,
        feasible_share=1.0, pick_share=1.0, noise_rel=(),
    )  # fmt: skip
    ranges = PlanRanges(60, 0, 1.0, 0.9, (option,), key, 0.0, 0.0, "test", ())
    figure = cost_range_figure(ranges)
    title = figure.layout.title.text
    dot, planned = figure.data
    assert "P50 (dot)" in title and "planned cost (diamond)" in title
    assert list(dot.x) == [68_912.0] and dot.name.startswith("P50")
    assert list(dot.error_x.array) == [86_140.0 - 68_912.0]
    assert list(dot.error_x.arrayminus) == [68_912.0 - 51_684.0]
    assert list(planned.x) == [51_684.0] and planned.marker.symbol == "diamond-open"
    assert list(dot.y) == ["vLLM TP2 on H100 SXM 80GB (FP8)"]


def _priced(option: OptionRange, key: OptionKey, p50_usd: float) -> OptionRange:
    costs = Percentiles(0.8 * p50_usd, p50_usd, 1.2 * p50_usd)
    return replace(option, key=key, point_total_monthly_cost_usd=p50_usd,
                   total_monthly_cost_usd=costs)  # fmt: skip


def test_one_costly_option_does_not_squeeze_the_others_off_the_cost_chart() -> None:
    key = OptionKey("vllm", "H100-SXM-80GB", 2, "fp8")
    base = OptionRange(
        key=key, point_nodes=3, point_gpus=24, point_replicas=12,
        point_total_monthly_cost_usd=20_000.0, expected_total_monthly_cost_usd=20_000.0,
        nodes=Percentiles(3, 3, 3), gpus=Percentiles(24, 24, 24),
        replicas=Percentiles(12, 12, 12), total_monthly_cost_usd=None, sampled=True,
        feasible_share=1.0, pick_share=1.0, noise_rel=(),
    )  # fmt: skip
    options = tuple(
        _priced(base, OptionKey("vllm", gpu, 2, "fp8"), usd)
        for gpu, usd in (("H100-SXM-80GB", 20_000.0), ("H200-SXM-141GB", 100_000.0),
                         ("B200-SXM-180GB", 1_700_000.0))
    )  # fmt: skip
    spread = cost_range_figure(PlanRanges(60, 0, 1.0, 0.9, options, key, 0.0, 0.0, "t", ()))
    assert spread.layout.xaxis.type == "log"
    assert "log" in spread.layout.xaxis.title.text
    near = cost_range_figure(PlanRanges(60, 0, 1.0, 0.9, options[:2], key, 0.0, 0.0, "t", ()))
    assert near.layout.xaxis.type != "log"
