"""The plan's one uncertainty model: how far each fitted value may be from the truth.

Each option draws `samples` sets of errors, one standard normal per fitted series (throughput,
TTFT p50/p99, TPOT, e2e p99): in a sample the true curve is the fit times exp(sigma(c) * z),
sigma(c) the relative spread at c (held-out error and parameter spread, FitResult.rel_spread;
for a projected or workload-adjusted curve also the validated error of that estimate). The whole
curve moves together (its error is systematic: a fleet runs at one operating point).
planner.sizing.size sizes every sample and the plan's fleet is the sample at the scenario's sizing
confidence; the ranges (planner.analysis.uncertainty) and the sensitivity view read the same
samples, so every number a plan shows comes from this one model.
"""

from __future__ import annotations

import functools
import math
import zlib
from dataclasses import dataclass

import numpy as np

from errors import PlanningError
from planner.curves.load import LoadCurve
from planner.fitting.families import Array
from planner.fitting.fit import MAPE_TO_SIGMA, Z80
from planner.physics.projection import PROJECTED
from planner.physics.workload_adjust import ADJUSTED

# 400 samples put the 90% quantile within about +-1.5 percentage points of probability
# (binomial standard error sqrt(q(1-q)/n)); drawing and sizing them costs a few ms per option.
SAMPLES = 400
# The fitted series an option draws an error for, in the order of the columns of `normals`.
SLOTS = ("throughput", "ttft_p50", "ttft_p99", "tpot", "e2e_p99")
# Validated error of curves the planner derives rather than measures (MAPE %,
# docs/benchmarks.md): the cross-GPU projection (bench/bench_projection.py, TPOT 5.4-6.1%) and
# the workload adjustment within its 2x limit (bench/bench_workload_adjust.py, worst bucket
# 15-16% for tok/s and TPOT).
DERIVED_MAPE_PCT = {PROJECTED: 6.1, ADJUSTED: 16.0}
METHOD = (
    "each option's fitted curves are drawn {samples} times with errors the size of their "
    "held-out (leave-one-out) error and parameter spread, one lognormal draw per metric for the "
    "whole curve (a projected or workload-adjusted curve also takes the validated error of that "
    "estimate); every draw is sized and priced like the plan, the plan's fleet is the draw at "
    "the sizing confidence, and P10/P50/P90 (P50: the expected fleet) and how often the pick "
    "changes are read from the same draws"
)


@dataclass(frozen=True, slots=True)
class Draws:
    """How many error samples a plan draws per option, from which seed, at what scale
    (noise_scale 0: every sample is the fitted curve itself)."""

    samples: int = SAMPLES
    seed: int = 0
    noise_scale: float = 1.0

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise PlanningError(f"samples must be at least 1, got {self.samples!r}")
        if not (math.isfinite(self.noise_scale) and self.noise_scale >= 0):
            raise PlanningError(
                "noise_scale must be a finite number >= 0 (1 = the fits' own held-out error), "
                f"got {self.noise_scale!r}"
            )

    def normals(self, name: str) -> Array:
        """(samples + 1, len(SLOTS)) standard normals times noise_scale for the option called
        `name`; row 0 is zeros (the fitted curve). The same name and seed give the same draws,
        so a re-plan with one input moved compares like with like."""
        return _normals(self.samples, self.seed, self.noise_scale, name)


@functools.lru_cache(maxsize=1024)
def _normals(samples: int, seed: int, scale: float, name: str) -> Array:
    """Draws.normals, cached (every re-plan of a session draws the same), read-only."""
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    z = np.vstack([np.zeros((1, len(SLOTS))), rng.standard_normal((samples, len(SLOTS))) * scale])
    z.flags.writeable = False
    return z


def derived_sigma(curve: LoadCurve, slot: str) -> float:
    """Relative sigma of a derived curve's estimate error for one fitted series: its own
    validated error where it carries one, else its provenance's (0 for a measured curve)."""
    if curve.basis_error is not None:
        band = curve.basis_error.slot_band80_pct(slot)
        if band is not None:  # the error 80% of validated answers stayed within
            return math.log1p(band / 100.0) / Z80
        mape: float | None = curve.basis_error.slot_pct(slot)
    else:
        mape = DERIVED_MAPE_PCT.get(curve.provenance)
    return 0.0 if mape is None else MAPE_TO_SIGMA * mape / 100.0


def quantile_index(capacity: Array, confidence: float) -> int:
    """Index of the sample at the `confidence` quantile of the fleet: the largest per-replica
    capacity that at least that share of the samples reach (0: the SLA is missed). A fleet
    only grows as capacity falls, so this sample's fleet is the `confidence` quantile of the
    samples' fleets, whatever the demand."""
    order = np.argsort(-capacity, kind="stable")
    rank = max(math.ceil(confidence * capacity.size - 1e-9) - 1, 0)
    return int(order[rank])
