"""Open-loop arrival times (poisson, gamma, constant; seeded, and cut at a timed level's
duration) and the RunFile's description of a workload."""

from __future__ import annotations

import numpy as np
import pytest

from measurements.probe.workloads import ArrivalProcess, WorkloadConfig, run_workload


def test_poisson_gamma_and_constant_arrivals() -> None:
    rng = np.random.default_rng(8)
    poisson = np.diff(ArrivalProcess(20.0).times_s(rng, count=20000))
    assert poisson.mean() == pytest.approx(0.05, rel=0.03)
    assert poisson.std() / poisson.mean() == pytest.approx(1.0, rel=0.05)  # exponential: CV 1
    bursty = np.diff(ArrivalProcess(20.0, "gamma", 0.25).times_s(rng, count=20000))
    assert bursty.mean() == pytest.approx(0.05, rel=0.05)
    assert bursty.std() / bursty.mean() == pytest.approx(2.0, rel=0.08)  # CV = 1/sqrt(shape)
    assert ArrivalProcess(4.0, "constant").times_s(rng, count=3) == [0.0, 0.25, 0.5]


def test_arrivals_are_seeded_and_timed_levels_stop_at_their_duration() -> None:
    def draw(seed: int) -> list[float]:
        return ArrivalProcess(50.0).times_s(np.random.default_rng(seed), duration_s=10)

    assert draw(1) == draw(1) and draw(1) != draw(2)
    times = draw(1)
    assert times[0] == 0.0 and max(times) < 10 and len(times) == pytest.approx(500, rel=0.15)


def test_run_workload_describes_distributions() -> None:
    config = WorkloadConfig(isl=128, osl=64, osl_distribution="normal", osl_stddev=8)
    workload = run_workload(config, ignore_eos=False)
    assert (workload.isl, workload.osl, workload.ignore_eos) == (128, 64, False)
    assert (workload.isl_distribution, workload.osl_distribution) == ("fixed", "normal(stddev=8)")
