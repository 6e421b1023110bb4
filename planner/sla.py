"""SLA targets checked over a concurrency grid, on the conservative side of every fitted band,
and the streams-per-replica caps (the scenario's, KV-cache memory) that end the grid.

A target the curve never measured cannot be verified; it is never silently passed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from planner.curves import LoadCurve
from planner.families import Array
from planner.fit import CurveFit, FitResult, series, series_attr
from planner.projection import PROJECTED
from planner.scenario import Scenario
from planner.selection import Candidate
from planner.sla_targets import SLA_TARGET_BY_FIELD, CheckKind, SlaTarget
from planner.workload_adjust import ADJUSTED

MEASURED_RANGE = "measured range"
# Curves that are estimates (cross-GPU projection, workload adjustment), not measurements.
ESTIMATED_PROVENANCE = frozenset({PROJECTED, ADJUSTED})


@dataclass(frozen=True, slots=True)
class SlaCheck:
    """One SLA target evaluated over the concurrency grid (values None: cannot verify)."""

    target: SlaTarget
    text: str
    limit: float
    values: Array | None
    why_unverifiable: str | None
    flags: tuple[str, ...]

    @property
    def name(self) -> str:
        """The target's scenario field, e.g. 'ttft_p99_ms'."""
        return self.target.field

    def holds(self) -> Array:
        """Per grid point: the target holds (False where the value is unknown)."""
        if self.values is None:
            return np.zeros(0, dtype=bool)
        with np.errstate(invalid="ignore"):
            ok = self.values <= self.limit if self.target.upper else self.values >= self.limit
        return np.asarray(ok & np.isfinite(self.values), dtype=bool)


@dataclass(frozen=True, slots=True)
class _Grid:
    """What every check of one option reads: the scenario, the fit, the grid and T's lower band."""

    scenario: Scenario
    fit: CurveFit
    grid: Array
    t_lo: Array


def target_text(name: str, limit: float) -> str:
    """Human text of an SLA target, e.g. 'TTFT p99 <= 300 ms'."""
    return SLA_TARGET_BY_FIELD[name].text(limit)


def throughput_grid(fit: CurveFit, cap: float | None = None) -> tuple[Array, Array]:
    """Concurrencies to search (fine grid inside the measured range, at most `cap`) and T's
    lower band there."""
    c, t = series(fit.curve.points, "output_tok_s")
    if cap is not None:
        c, t = c[c <= cap], t[c <= cap]
    if c.size == 0:
        return c, t
    if fit.throughput is None:
        return c, t  # too few points to fit: only the measured levels can be trusted
    low, high = float(c.min()), float(c.max())
    if cap is not None:
        high = cap
    step = 0.5 if high - low < 32 else 1.0
    grid = np.unique(np.concatenate([np.arange(math.ceil(low), high + 1e-9, step), [low, high]]))
    grid = grid[(grid >= low) & (grid <= high)]
    return grid, fit.throughput.eval_band(grid)[0]


def sla_checks(scenario: Scenario, fit: CurveFit, grid: Array, t_lo: Array) -> list[SlaCheck]:
    """Every SLA target of the scenario evaluated over the grid."""
    at = _Grid(scenario, fit, grid, t_lo)
    return [
        _check(at, SLA_TARGET_BY_FIELD[name], limit)
        for name, limit in scenario.sla.targets().items()
    ]


def _check(at: _Grid, target: SlaTarget, limit: float) -> SlaCheck:
    """One target over the grid, the way its registry row says it is checked."""
    if target.check is CheckKind.STREAM_SPEED:
        return _stream_check(at, target, limit)
    if target.check is CheckKind.E2E:
        return _e2e_check(at, target, limit)
    if target.fit_slot is None:
        raise ValueError(f"SLA target {target.field!r} is a latency check without a fit_slot")
    return _latency_check(at, target, limit, (target.fit_slot, target.statistic))


def _stream_check(at: _Grid, target: SlaTarget, limit: float) -> SlaCheck:
    """Slowest user's speed: 1000 / TPOT p99 (upper band) where measured, and never above the
    mean per-stream speed T(c)/c (lower band)."""
    fit, grid, text = at.fit, at.grid, target.text(limit)
    mean_speed = at.t_lo / np.where(grid > 0, grid, np.nan)
    if fit.tpot_stat == "p99":
        slowest = 1000.0 / _upper(fit.tpot, fit, series_attr("tpot", "p99"), grid)
        return SlaCheck(target, text, limit, np.fmin(mean_speed, slowest), None, ())
    flag = (
        f"{text} checked on the mean per-stream speed T(c)/c: no TPOT p99 was measured, so "
        "the slowest user may read slower"
    )
    return SlaCheck(target, text, limit, mean_speed, None, (flag,))


def _latency_check(at: _Grid, target: SlaTarget, limit: float, series: tuple[str, str]) -> SlaCheck:
    """`target` checked on one fitted latency series: (CurveFit slot, wanted statistic)."""
    fit, text = at.fit, target.text(limit)
    slot, wanted = series
    stat = {"ttft_p50": fit.ttft_p50_stat, "ttft_p99": fit.ttft_p99_stat, "tpot": fit.tpot_stat}[
        slot
    ]
    if stat is None:
        return SlaCheck(target, text, limit, None, "the curve has no such measurement", ())
    if stat not in (wanted, "unstated"):
        why = f"only {stat} values were measured, not {wanted}"
        return SlaCheck(target, text, limit, None, why, ())
    flags: tuple[str, ...] = ()
    if stat == "unstated":
        flags = (f"{text} checked against values whose statistic the source did not state",)
    result = {"ttft_p50": fit.ttft_p50, "ttft_p99": fit.ttft_p99, "tpot": fit.tpot}[slot]
    attr = series_attr(slot, stat)
    values = _upper(result, fit, attr, at.grid)
    return SlaCheck(target, text, limit, values, None, flags)


def _e2e_check(at: _Grid, target: SlaTarget, limit: float) -> SlaCheck:
    fit, text = at.fit, target.text(limit)
    if any(point.p99_e2e_ms is not None for point in fit.curve.points):
        values = _upper(fit.e2e_p99, fit, "p99_e2e_ms", at.grid)
        return SlaCheck(target, text, limit, values, None, ())
    ttft = _latency_check(at, target, limit, ("ttft_p99", "p99"))
    tpot = _latency_check(at, target, limit, ("tpot", "p99"))
    if ttft.values is None or tpot.values is None:
        why = "no e2e p99, and TTFT p99 or TPOT p99 to estimate it from, was measured"
        return SlaCheck(target, text, limit, None, why, ())
    estimate = ttft.values + (at.scenario.workload.osl - 1) * tpot.values
    flag = f"{text} estimated as TTFT p99 + (OSL - 1) x TPOT p99 (no e2e p99 measured)"
    return SlaCheck(target, text, limit, estimate, None, (flag, *ttft.flags, *tpot.flags))


def _upper(result: FitResult | None, fit: CurveFit, attr: str | None, grid: Array) -> Array:
    """Upper band of a latency over the grid, unknown (NaN) outside the range that series was
    measured over; measured values at exact levels when not fitted."""
    if result is not None:
        upper = result.eval_band(grid)[1]
        inside = (grid >= result.x_min - 1e-9) & (grid <= result.x_max + 1e-9)
        return np.where(inside, upper, np.nan)
    measured: dict[float, float] = {}
    if attr is not None:
        xs, ys = series(fit.curve.points, attr)
        measured = dict(zip(xs.tolist(), ys.tolist(), strict=True))
    return np.array([measured.get(float(c), np.nan) for c in grid], dtype=np.float64)


def never_holds_text(check: SlaCheck, grid: Array) -> str:
    """Why a target fails everywhere, with its best conservative value."""
    values = check.values if check.values is not None else np.zeros(0)
    finite = np.isfinite(values)
    if not finite.any():
        return f"{check.text} cannot be checked at any measured concurrency"
    best_index = int(np.nanargmin(values) if check.target.upper else np.nanargmax(values))
    unit = check.target.unit
    return (
        f"{check.text} fails at every measured concurrency (best {values[best_index]:,.1f} "
        f"{unit} on the conservative side, at {grid[best_index]:g} streams)"
    )


def binding_constraint(
    checks: list[SlaCheck], index: int, size: int, cap_text: str | None = None
) -> str:
    """The target that fails just above c* ('measured range' when c* is the top of the data,
    `cap_text` when a streams-per-replica cap (scenario or memory) stopped the search)."""
    if index == size - 1:
        return MEASURED_RANGE if cap_text is None else cap_text
    failing = [_why_fails(c, index) for c in checks if not c.holds()[index + 1]]
    return " and ".join(failing) if failing else MEASURED_RANGE


def _why_fails(check: SlaCheck, index: int) -> str:
    """The target, or that its metric was not measured beyond the chosen concurrency."""
    if check.values is not None and not np.isfinite(check.values[index + 1]):
        return f"{check.target.label} not measured above this concurrency"
    return check.text


def stream_cap(scenario: Scenario, candidate: Candidate) -> tuple[float | None, str | None]:
    """The tightest streams-per-replica cap that cuts into the measured range (the scenario's
    max_streams_per_replica or, where measurements do not cover it, the KV-cache estimate),
    and how to name it."""
    workload = scenario.workload
    limits: list[tuple[float, str]] = []
    cap = scenario.options.max_streams_per_replica
    if cap is not None:
        limits.append((float(cap), f"max {cap} streams per replica"))
    memory = candidate.max_streams_memory
    if memory is not None and _memory_estimate_applies(scenario, candidate.curve):
        text = f"memory (KV cache for {memory} streams of {workload.isl}+{workload.osl} tokens)"
        limits.append((float(memory), text))
    top = max(candidate.curve.concurrencies())
    cutting = [limit for limit in limits if limit[0] < top]
    if not cutting:
        return None, None
    return min(cutting, key=lambda limit: limit[0])


def _memory_estimate_applies(scenario: Scenario, curve: LoadCurve) -> bool:
    """The KV-cache estimate caps streams only where no measurement covers the scenario: on
    projected or workload-adjusted curves, or curves measured with fewer tokens per stream.
    A level measured at the scenario's length or longer ran those streams (any queueing is in
    its numbers), so an estimate never overrides it."""
    if curve.provenance in ESTIMATED_PROVENANCE:
        return True
    isl, osl = curve.key.isl, curve.key.osl
    if isl is None or osl is None:
        return False
    return isl + osl < scenario.workload.isl + scenario.workload.osl
