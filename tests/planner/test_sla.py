"""SLA checks: what binds c* when the search stops at a cap or at the top of the data."""

from __future__ import annotations

import numpy as np

from planner.fit import fit_curve
from planner.sla import MEASURED_RANGE, binding_constraint, sla_checks, throughput_grid

from .builders import scenario, seed_curves


def test_the_last_grid_point_binds_on_the_cap_text_or_the_measured_range() -> None:
    fit = fit_curve(seed_curves()[0])
    grid, t_lo = throughput_grid(fit, 50.0)
    assert grid[-1] == 50.0
    checks = sla_checks(scenario(sla={"min_stream_tok_s": 1}), fit, grid, t_lo)
    last = grid.size - 1
    memory = "memory (KV cache for 50 streams of 1000+500 tokens)"
    assert binding_constraint(checks, last, grid.size, memory) == memory
    assert binding_constraint(checks, last, grid.size) == MEASURED_RANGE


def test_a_target_failing_just_above_c_star_is_the_binding_one() -> None:
    fit = fit_curve(seed_curves()[0])
    grid, t_lo = throughput_grid(fit)
    checks = sla_checks(scenario(sla={"min_stream_tok_s": 40}), fit, grid, t_lo)
    index = int(np.flatnonzero(checks[0].holds())[-1])
    assert index < grid.size - 1
    assert binding_constraint(checks, index, grid.size, "ignored cap") == "stream speed >= 40 tok/s"
