"""Shared shapes on the measured silicon sample: siblings only, 1.0 outside, latencies untouched."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from planner.curves.load import LoadCurve
from planner.fitting.fit import CurveFit, fit_curve, refit_like, shape_factor
from planner.fitting.series import series
from planner.fitting.shapes import (
    MAX_SHAPE_SIBLINGS,
    MIN_SHAPE_CURVES,
    apply_shape,
    group_key,
    shape_for,
    shaped_fitter,
    shared_shapes,
)
from planner.physics.projection import PROJECTED
from tests.planner.builders import seed_curves, silicon_curves

SILICON = silicon_curves()
H200 = "H200-SXM-141GB"


def _vllm_h200(isl: int = 1024, osl: int = 1024) -> list[LoadCurve]:
    """vLLM on H200 at one workload: TP 1, 2, 4, 8 (the family whose tok/s sags at 32 streams)."""
    return [
        c
        for c in SILICON
        if c.key.engine == "vllm" and c.key.gpu == H200 and (c.key.isl, c.key.osl) == (isl, osl)
    ]


@pytest.fixture(scope="module")
def fits() -> list[CurveFit]:
    return [fit_curve(c) for c in _vllm_h200()]


def _tp(fits: list[CurveFit], tp: int) -> CurveFit:
    return next(f for f in fits if f.curve.key.tp == tp)


def test_vllm_h200_shape_is_the_measured_sag_at_32_and_overshoot_at_64(
    fits: list[CurveFit],
) -> None:
    shape = shared_shapes(fits)[group_key(fits[0].curve)]
    assert shape.concurrencies == (4.0, 8.0, 16.0, 32.0, 64.0)
    assert shape.curves == (4, 4, 4, 4, 4)
    by_c = dict(shape.pairs())
    assert 0.90 < by_c[32.0] < 0.93  # TP 1, 2, 4 sag 8-9% below their fitted law
    assert 1.04 < by_c[64.0] < 1.07
    assert all(0.98 < by_c[c] < 1.04 for c in (4.0, 8.0, 16.0))


def test_a_curve_is_corrected_by_its_siblings_only(fits: list[CurveFit]) -> None:
    tp1 = _tp(fits, 1)
    siblings = [f for f in fits if f is not tp1]
    shape = shape_for(tp1.curve, fits)
    assert shape is not None and shape.curves == (3, 3, 3, 3, 3)
    assert shape == shared_shapes(siblings)[group_key(tp1.curve)]
    # Its own residuals never feed it: halve its measured tok/s at 32 streams and refit.
    points = tuple(
        replace(p, output_tok_s=p.output_tok_s / 2) if p.concurrency == 32 and p.output_tok_s else p
        for p in tp1.curve.points
    )
    distorted = fit_curve(replace(tp1.curve, points=points))
    assert shape_for(tp1.curve, [*siblings, distorted]) == shape


def test_without_run_ids_the_curve_itself_is_still_left_out(fits: list[CurveFit]) -> None:
    anonymous = [fit_curve(replace(f.curve, run_id=None)) for f in fits]
    shape = shape_for(anonymous[0].curve, anonymous)
    assert shape is not None and shape.curves == (3, 3, 3, 3, 3)


def test_the_same_run_is_no_sibling_even_as_an_adjusted_copy(fits: list[CurveFit]) -> None:
    tp1 = _tp(fits, 1)
    copy = fit_curve(replace(tp1.curve, provenance="adjusted", label="adjusted from TP 1"))
    assert copy.curve != tp1.curve and copy.curve.run_id == tp1.curve.run_id
    assert shape_for(tp1.curve, [*fits, copy]) == shape_for(tp1.curve, fits)


def test_fewer_siblings_than_the_minimum_give_no_correction(fits: list[CurveFit]) -> None:
    tp1 = _tp(fits, 1)
    assert MIN_SHAPE_CURVES == 3
    two_siblings = [f for f in fits if f.curve.key.tp in (1, 2, 4)]
    assert shape_for(tp1.curve, two_siblings) is None
    assert shape_for(tp1.curve, [tp1]) is None
    assert shape_for(tp1.curve, []) is None


def test_other_engines_gpus_versions_and_workloads_are_no_siblings(fits: list[CurveFit]) -> None:
    tp1 = _tp(fits, 1)
    trt = [fit_curve(c) for c in SILICON if c.key.engine == "tensorrt-llm"]
    assert shape_for(tp1.curve, trt) is None
    other_version = replace(tp1.curve, key=replace(tp1.curve.key, engine_version="0.7.3"))
    assert shape_for(other_version, fits) is None
    other_workload = replace(tp1.curve, key=replace(tp1.curve.key, osl=8192), run_id=None)
    assert shape_for(other_workload, fits) is None
    seed_vllm = seed_curves()[0]
    assert shape_for(seed_vllm, [fit_curve(c) for c in SILICON]) is None


def test_a_projected_curve_gets_no_shape(fits: list[CurveFit]) -> None:
    projected = replace(_tp(fits, 1).curve, provenance=PROJECTED, run_id=None)
    assert shape_for(projected, fits) is None


def test_factor_is_one_outside_the_shared_concurrencies_and_log_interpolated_inside() -> None:
    pairs = ((16.0, 1.02), (32.0, 0.90), (64.0, 1.06))
    got = shape_factor(pairs, [1.0, 8.0, 15.9, 16.0, math.sqrt(16 * 32), 32.0, 64.0, 65.0, 0.0])
    np.testing.assert_allclose(got, [1.0, 1.0, 1.0, 1.02, 0.96, 0.90, 1.06, 1.0, 1.0])
    np.testing.assert_array_equal(shape_factor((), [4.0, 32.0]), [1.0, 1.0])


def test_applied_shape_scales_throughput_and_band_and_leaves_latencies_alone(
    fits: list[CurveFit],
) -> None:
    tp2 = _tp(fits, 2)
    shape = shape_for(tp2.curve, fits)
    assert shape is not None and tp2.throughput is not None
    shaped = apply_shape(tp2, shape)
    assert shaped.throughput is not None
    xs = [4.0, 24.0, 32.0, 64.0, 128.0]
    factor = shape.factor(xs)
    np.testing.assert_allclose(shaped.throughput.eval(xs), tp2.throughput.eval(xs) * factor)
    for new, old in zip(shaped.throughput.eval_band(xs), tp2.throughput.eval_band(xs), strict=True):
        np.testing.assert_allclose(new, old * factor)
    assert factor[-1] == 1.0  # 128 streams: beyond every sibling's levels
    # The correction brings the fit to TP 2's measured 32-stream tok/s within 2% (plain: 8%).
    c, t = series(tp2.curve.points, "output_tok_s")
    at_32 = float(t[c == 32.0][0])
    assert abs(float(shaped.throughput.eval([32.0])[0]) / at_32 - 1) < 0.02
    assert abs(float(tp2.throughput.eval([32.0])[0]) / at_32 - 1) > 0.07
    assert (shaped.ttft_p50, shaped.ttft_p99, shaped.tpot, shaped.e2e_p99) == (
        tp2.ttft_p50,
        tp2.ttft_p99,
        tp2.tpot,
        tp2.e2e_p99,
    )
    smoothed = "smoothed to the shape its related curves share"
    assert any(smoothed in f and "estimated" in f for f in shaped.flags)
    assert str(shaped.throughput.summary()["shape"]).startswith("x1.0")
    assert tp2.throughput.summary()["shape"] is None


def test_applying_a_shape_twice_replaces_it(fits: list[CurveFit]) -> None:
    tp2 = _tp(fits, 2)
    shape = shape_for(tp2.curve, fits)
    once, twice = apply_shape(tp2, shape), apply_shape(apply_shape(tp2, shape), shape)
    assert once.throughput is not None and twice.throughput is not None
    np.testing.assert_array_equal(once.throughput.eval([32.0]), twice.throughput.eval([32.0]))
    assert apply_shape(tp2, None) is tp2


def test_refit_keeps_the_shape_as_it_keeps_the_held_out_error(fits: list[CurveFit]) -> None:
    tp2 = _tp(fits, 2)
    shaped = apply_shape(tp2, shape_for(tp2.curve, fits)).throughput
    assert shaped is not None
    c, t = series(tp2.curve.points, "output_tok_s")
    refitted = refit_like(c, t * 1.01, shaped)
    assert refitted is not None
    assert refitted.shape == shaped.shape and refitted.loo_mape_pct == shaped.loo_mape_pct


def test_shaped_fitter_corrects_family_members_and_leaves_lone_curves_plain() -> None:
    seed_vllm = seed_curves()[0]
    targets = [_vllm_h200()[0], seed_vllm]
    fitter = shaped_fitter([*SILICON, seed_vllm], targets)
    member = fitter(targets[0])
    assert member.throughput is not None and member.throughput.shape
    lone = fitter(seed_vllm)
    assert lone == fit_curve(seed_vllm) and lone.throughput is not None
    assert lone.throughput.shape == ()


def test_a_plan_learns_a_shape_from_the_newest_siblings_only() -> None:
    # Forty repeat runs of TP 2, the i-th reading (1 + i/100) x its tok/s at 32 streams: the
    # median over the newest MAX_SHAPE_SIBLINGS differs from the median over all forty.
    family = _vllm_h200()
    target = next(c for c in family if c.key.tp == 1)
    tp2 = next(c for c in family if c.key.tp == 2)

    def repeat(i: int) -> LoadCurve:
        points = tuple(
            replace(p, output_tok_s=p.output_tok_s * (1 + i / 100))
            if p.concurrency == 32 and p.output_tok_s
            else p
            for p in tp2.points
        )
        return replace(tp2, run_id=1000 + i, points=points)

    repeats = [repeat(i) for i in range(40)]
    shaped = shaped_fitter(repeats, [target])(target).throughput
    newest = shaped_fitter(repeats[-MAX_SHAPE_SIBLINGS:], [target])(target).throughput
    assert shaped is not None and newest is not None and shaped.shape
    assert shaped.shape == newest.shape
    every = shape_for(target, [fit_curve(c) for c in repeats])
    assert every is not None and every.curves == (40,) * len(every.curves)
    assert dict(every.pairs())[32.0] != pytest.approx(dict(shaped.shape)[32.0], rel=1e-3)
