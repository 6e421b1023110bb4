"""SLA checks: what binds c* when the search stops at a cap or at the top of the data."""

from __future__ import annotations

import numpy as np

from planner.draws import Draws
from planner.fit import fit_curve
from planner.sla import (
    MEASURED_RANGE,
    binding_constraint,
    sampled_grid,
    sla_checks,
    throughput_grid,
)

from .builders import scenario, seed_curves


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
