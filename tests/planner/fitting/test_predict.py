"""Predictions: bands that are honest (none for a run too short to fit, never clipped to 0) and
the statistic each latency column is (issue 15, item 5)."""

from __future__ import annotations

import numpy as np

from planner.curves.load import CurveKey, CurvePoint, LoadCurve
from planner.fitting.fit import fit_curve, fit_throughput
from planner.fitting.predict import predict

KEY = CurveKey("vllm", None, "meta-llama/Llama-3.1-8B", "bf16", "H100", 1, 1, 1024, 128)


def _curve(points: tuple[CurvePoint, ...]) -> LoadCurve:
    return LoadCurve(KEY, points, None, "measured", None, None, None, 1, ())


def test_a_single_level_run_has_no_band_rather_than_a_zero_width_one() -> None:
    curve = _curve((CurvePoint(8.0, output_tok_s=900.0, p99_ttft_ms=120.0, p99_tpot_ms=9.0),))
    (only,) = predict(fit_curve(curve), [8.0])
    assert only.output_tok_s == 900.0 and only.tpot_ms == 9.0
    assert only.output_tok_s_lo is None and only.output_tok_s_hi is None
    assert only.tpot_ms_lo is None and only.p99_ttft_ms_hi is None


def test_each_latency_prediction_says_which_statistic_it_is() -> None:
    points = tuple(
        CurvePoint(
            c, output_tok_s=100.0 * c / (1 + c / 64), p99_ttft_ms=50 + c, p99_tpot_ms=8 + c / 10
        )
        for c in (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
    )
    (at_eight,) = predict(fit_curve(_curve(points)), [8.0])
    assert at_eight.tpot_stat == "p99" and at_eight.p99_ttft_stat == "p99"
    # A p99 TTFT never answers for the p50.
    assert at_eight.p50_ttft_stat is None and at_eight.p50_ttft_ms is None


def test_a_wide_lower_band_stays_above_zero_and_is_lognormal() -> None:
    # SYNTHETIC noisy step-time series (30% noise): the additive band went below 0 and was
    # clipped there; the plan draws lognormal errors, so the band is fit x exp(-+1.2816 sigma)
    # (an 80% band).
    rng = np.random.default_rng(3)
    c = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0])
    t = c / (0.01 + 0.0002 * c) * (1 + 0.3 * rng.standard_normal(c.size))
    fit = fit_throughput(c, np.abs(t))
    assert fit is not None
    xs = np.array([1.0, 64.0, 512.0])
    lo, hi = fit.eval_band(xs)
    y, rel = fit.eval(xs), fit.rel_spread(xs)
    assert np.all(lo > 0)
    assert np.allclose(lo, y * np.exp(-1.2816 * rel)) and np.allclose(hi, y * np.exp(1.2816 * rel))
