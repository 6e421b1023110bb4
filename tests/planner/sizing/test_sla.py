"""SLA checks: what binds c* when the search stops at a cap or at the top of the data."""

from __future__ import annotations

import numpy as np

from planner.curves.load import CurveKey, CurvePoint, LoadCurve
from planner.fitting.fit import CurveFit, fit_curve
from planner.sizing.draws import Draws
from planner.sizing.sla import (
    MEASURED_RANGE,
    binding_constraint,
    sampled_grid,
    sla_checks,
    throughput_grid,
)
from tests.planner.builders import scenario, seed_curves


def test_the_last_grid_point_binds_on_the_cap_text_or_the_measured_range() -> None:
    fit = fit_curve(seed_curves()[0])
    grid = throughput_grid(fit, 50.0)
    assert grid[-1] == 50.0
    z = Draws(samples=1).normals("seed")
    checks = sla_checks(sampled_grid(scenario(sla={"min_stream_tok_s": 1}), fit, grid, z))
    last = grid.size - 1
    memory = "memory (KV cache for 50 streams of 1000+500 tokens)"
    assert binding_constraint(checks, (0, last), grid.size, memory) == memory
    assert binding_constraint(checks, (0, last), grid.size) == MEASURED_RANGE


def test_a_target_failing_just_above_c_star_is_the_binding_one() -> None:
    fit = fit_curve(seed_curves()[0])
    grid = throughput_grid(fit)
    z = Draws(samples=1).normals("seed")
    checks = sla_checks(sampled_grid(scenario(sla={"min_stream_tok_s": 40}), fit, grid, z))
    index = int(np.flatnonzero(checks[0].holds()[0])[-1])
    assert index < grid.size - 1
    binding = binding_constraint(checks, (0, index), grid.size, "ignored cap")
    assert binding == "stream speed >= 40 tok/s"


def _mean_ttft_fit() -> CurveFit:
    # SYNTHETIC run whose TTFT is stated as a mean only (vllm bench serve's mean_ttft_ms).
    key = CurveKey("vllm", None, "meta-llama/Llama-3.1-8B", "bf16", "H100", 1, 1, 1000, 500)
    points = tuple(
        CurvePoint(c, output_tok_s=90.0 * c / (1 + c / 40), mean_ttft_ms=40.0 + 3 * c)
        for c in (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
    )
    return fit_curve(LoadCurve(key, points, None, "measured", None, None, None, 1, ()))


def test_a_mean_ttft_answers_a_p50_target_with_a_caveat() -> None:
    fit = _mean_ttft_fit()
    assert fit.ttft_p50_stat == "mean" and fit.ttft_p50 is not None
    grid = throughput_grid(fit)
    z = Draws(samples=1).normals("seed")
    (check,) = sla_checks(sampled_grid(scenario(sla={"ttft_p50_ms": 100}), fit, grid, z))
    assert check.values is not None and check.why_unverifiable is None
    assert any("mean values" in flag for flag in check.flags)


def test_a_mean_ttft_never_answers_a_p99_target() -> None:
    fit = _mean_ttft_fit()
    grid = throughput_grid(fit)
    z = Draws(samples=1).normals("seed")
    (check,) = sla_checks(sampled_grid(scenario(sla={"ttft_p99_ms": 100}), fit, grid, z))
    assert check.values is None
    assert check.why_unverifiable == "only mean values were measured, not p99"


def _unstated_ttft_fit() -> CurveFit:
    # SYNTHETIC run whose TTFT statistic is not stated (the silicon sample's "unspecified").
    key = CurveKey("vllm", None, "meta-llama/Llama-3.1-8B", "bf16", "H100", 1, 1, 1000, 500)
    points = tuple(
        CurvePoint(
            c, output_tok_s=90.0 * c / (1 + c / 40), ttft_ms=40.0 + 3 * c, tpot_ms=20 + 0.1 * c
        )
        for c in (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
    )
    return fit_curve(LoadCurve(key, points, None, "measured", None, None, None, 1, ()))


def test_an_unstated_ttft_answers_one_target_kind_never_both() -> None:
    # Issue 15 item 5: one series of unstated statistic was used as both p50 and p99.
    fit = _unstated_ttft_fit()
    grid = throughput_grid(fit)
    z = Draws(samples=1).normals("seed")
    both = scenario(sla={"ttft_p50_ms": 80, "ttft_p99_ms": 100})  # p50 tighter: not implied
    checks = {c.target.field: c for c in sla_checks(sampled_grid(both, fit, grid, z))}
    assert checks["ttft_p50_ms"].values is not None
    assert any("did not state" in flag for flag in checks["ttft_p50_ms"].flags)
    assert checks["ttft_p99_ms"].values is None
    assert "never two statistics at once" in (checks["ttft_p99_ms"].why_unverifiable or "")
    (alone,) = sla_checks(sampled_grid(scenario(sla={"ttft_p99_ms": 100}), fit, grid, z))
    assert alone.values is not None
    assert any("did not state" in flag for flag in alone.flags)


def test_an_unstated_ttft_answering_the_p50_never_feeds_an_e2e_p99_estimate() -> None:
    fit = _unstated_ttft_fit()
    grid = throughput_grid(fit)
    z = Draws(samples=1).normals("seed")
    both = scenario(sla={"ttft_p50_ms": 100, "e2e_p99_ms": 60_000})
    checks = {c.target.field: c for c in sla_checks(sampled_grid(both, fit, grid, z))}
    assert checks["ttft_p50_ms"].values is not None
    assert checks["e2e_p99_ms"].values is None
    (alone,) = sla_checks(sampled_grid(scenario(sla={"e2e_p99_ms": 60_000}), fit, grid, z))
    assert alone.values is not None  # without a p50 target the unstated TTFT stands for p99
