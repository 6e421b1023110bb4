"""SLA targets checked over a concurrency grid in every error sample of the fits
(planner.sizing.draws: row 0 the fitted curve, then one row per sample), and the streams-per-replica
caps (the scenario's, KV-cache memory) that end the grid.

A target the curve never measured cannot be verified; it is never silently passed.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from planner.curves.floor import bounded, floor_values
from planner.curves.load import LoadCurve
from planner.fitting.families import Array
from planner.fitting.fit import CurveFit, FitResult
from planner.fitting.series import series, series_attr
from planner.inputs.scenario import Scenario
from planner.inputs.sla_targets import SLA_TARGET_BY_FIELD, CheckKind, SlaTarget
from planner.physics.projection import PROJECTED
from planner.physics.workload_adjust import ADJUSTED
from planner.sizing.draws import SLOTS, derived_sigma
from planner.sizing.selection import Candidate
from planner.sizing.sla_series import (
    STAT_ORDER,
    SeriesChoice,
    bound_flag,
    choose_series,
    implied_targets,
)

MEASURED_RANGE = "measured range"
# Curves that are estimates (cross-GPU projection, workload adjustment), not measurements.
ESTIMATED_PROVENANCE = frozenset({PROJECTED, ADJUSTED})


@dataclass(frozen=True, slots=True)
class SlaCheck:
    """One SLA target evaluated over the grid in every sample: values[row, grid index]
    (None: cannot verify)."""

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
        """Per sample and grid point: the target holds (False where the value is unknown)."""
        if self.values is None:
            return np.zeros((0, 0), dtype=bool)
        with np.errstate(invalid="ignore"):
            ok = self.values <= self.limit if self.target.upper else self.values >= self.limit
        return np.asarray(ok & np.isfinite(self.values), dtype=bool)


@dataclass(frozen=True, slots=True)
class SampledGrid:
    """What every check of one option reads: the scenario, the fit, the grid, the error draws
    (planner.sizing.draws.Draws.normals: row 0 zeros) and the output tok/s they give, t[row, i]."""

    scenario: Scenario
    fit: CurveFit
    grid: Array
    z: Array
    t: Array

    def values(self, slot: str, result: FitResult | None, attr: str | None) -> Array:
        """One series in every sample over the grid: the fit times exp(sigma z), unknown (NaN)
        outside the range it was measured over; the measured values at exact levels (moved only
        by a derived curve's estimate error) where there is no fit."""
        return sampled_series(self.fit, self.grid, self.z, (slot, result, attr))


def sampled_series(
    fit: CurveFit, grid: Array, z: Array, series_of: tuple[str, FitResult | None, str | None]
) -> Array:
    """See SampledGrid.values; `series_of` is (slot in planner.sizing.draws.SLOTS, fit, attribute).
    Cached by value (read-only result): a re-plan that moves demand, budget or a price, and
    every side of the sensitivity view, draws the same series again."""
    slot, result, attr = series_of
    measured: tuple[tuple[float, ...], tuple[float, ...]] = ((), ())
    if result is None and attr is not None:
        xs, ys = series(fit.curve.points, attr)
        measured = (tuple(xs.tolist()), tuple(ys.tolist()))
    column = z[:, SLOTS.index(slot)]
    derived = derived_sigma(fit.curve, slot)
    key = _SeriesKey(result, measured, derived, grid.tobytes(), column.tobytes())
    values = _sampled(key)
    if not fit.curve.floor or attr is None:
        return values
    bound = floor_values(fit.curve.floor, attr, grid)
    if np.isnan(bound).all():
        return values
    kept = bounded(values, bound[None, :], attr)
    kept.flags.writeable = False
    return kept


@dataclass(frozen=True, slots=True)
class _SeriesKey:
    """What one sampled series is a function of (arrays as bytes, so it hashes)."""

    result: FitResult | None
    measured: tuple[tuple[float, ...], tuple[float, ...]]  # (c, value) where there is no fit
    derived: float
    grid: bytes
    z: bytes


@functools.lru_cache(maxsize=2048)
def _sampled(key: _SeriesKey) -> Array:
    grid = np.frombuffer(key.grid, dtype=np.float64)
    column = np.frombuffer(key.z, dtype=np.float64)[:, None]
    result = key.result
    if result is not None:
        central = result.eval(grid)
        rel = np.sqrt(result.rel_spread(grid) ** 2 + key.derived**2)
        inside = (grid >= result.x_min - 1e-9) & (grid <= result.x_max + 1e-9)
        central = np.where(inside, central, np.nan)
    else:
        measured = dict(zip(*key.measured, strict=True))
        central = np.array([measured.get(float(c), np.nan) for c in grid], dtype=np.float64)
        rel = np.full(grid.size, key.derived)
    with np.errstate(over="ignore", invalid="ignore"):
        values = np.asarray(central[None, :] * np.exp(column * rel[None, :]), dtype=np.float64)
    values.flags.writeable = False
    return values


def target_text(name: str, limit: float) -> str:
    """Human text of an SLA target, e.g. 'TTFT p99 <= 300 ms'."""
    return SLA_TARGET_BY_FIELD[name].text(limit)


def throughput_grid(fit: CurveFit, cap: float | None = None) -> Array:
    """Concurrencies to search: a fine grid inside the measured range, at most `cap`."""
    c, _ = series(fit.curve.points, "output_tok_s")
    if cap is not None:
        c = c[c <= cap]
    if c.size == 0 or fit.throughput is None:
        return c  # too few points to fit: only the measured levels can be trusted
    low, high = float(c.min()), float(c.max())
    if cap is not None:
        high = cap
    step = 0.5 if high - low < 32 else 1.0
    grid = np.unique(np.concatenate([np.arange(math.ceil(low), high + 1e-9, step), [low, high]]))
    return grid[(grid >= low) & (grid <= high)]


def sampled_grid(scenario: Scenario, fit: CurveFit, grid: Array, z: Array) -> SampledGrid:
    """The grid with the output tok/s of every error sample."""
    t = sampled_series(fit, grid, z, ("throughput", fit.throughput, "output_tok_s"))
    return SampledGrid(scenario, fit, grid, z, t)


def sla_checks(at: SampledGrid) -> list[SlaCheck]:
    """Every SLA target of the scenario evaluated over the grid in every sample."""
    targets = at.scenario.sla.targets()
    implied = implied_targets(targets)
    checks = [
        _check(at, SLA_TARGET_BY_FIELD[name], limit)
        for name, limit in targets.items()
        if name not in implied
    ]
    return [_with_implied(check, implied, targets) for check in checks]


def _with_implied(check: SlaCheck, implied: dict[str, str], targets: dict[str, float]) -> SlaCheck:
    """The check with a note of each target it implies (those are not checked on their own)."""
    notes = tuple(
        f"{SLA_TARGET_BY_FIELD[name].text(targets[name])} holds wherever {check.text} does "
        "(a lower percentile of the same requests)"
        for name, by in implied.items()
        if by == check.name
    )
    return replace(check, flags=(*check.flags, *notes)) if notes else check


def _check(at: SampledGrid, target: SlaTarget, limit: float) -> SlaCheck:
    """One target over the grid, the way its registry row says it is checked."""
    if target.check is CheckKind.STREAM_SPEED:
        return _stream_check(at, target, limit)
    if target.check is CheckKind.E2E:
        return _e2e_check(at, target, limit)
    return _latency_check(at, target, limit, (target.metric, target.statistic))


def _stream_check(at: SampledGrid, target: SlaTarget, limit: float) -> SlaCheck:
    """Slowest user's speed: 1000 / TPOT p99 where measured, and never above the mean
    per-stream speed T(c)/c."""
    fit, grid, text = at.fit, at.grid, target.text(limit)
    mean_speed = at.t / np.where(grid > 0, grid, np.nan)[None, :]
    if fit.tpot_stat == "p99":
        slowest = 1000.0 / at.values("tpot", fit.tpot, series_attr("tpot", "p99"))
        return SlaCheck(target, text, limit, np.fmin(mean_speed, slowest), None, ())
    flag = (
        f"{text} checked on the mean per-stream speed T(c)/c: no TPOT p99 was measured, so "
        "the slowest user may read slower"
    )
    return SlaCheck(target, text, limit, mean_speed, None, (flag,))


def _latency_check(
    at: SampledGrid, target: SlaTarget, limit: float, read: tuple[str, str], text: str = ""
) -> SlaCheck:
    """`target` checked on one measured latency series: read = (metric, wanted statistic);
    `text` names it in flags (default: the target's own text)."""
    said = target.text(limit)
    metric, wanted = read
    choice = _reading(at, metric, wanted)
    if isinstance(choice, str):
        return SlaCheck(target, said, limit, None, choice, ())
    flag = bound_flag(text or said, wanted, choice.stat)
    values = at.values(choice.slot, choice.result, choice.attr)
    return SlaCheck(target, said, limit, values, None, (flag,) if flag else ())


def _reading(at: SampledGrid, metric: str, wanted: str) -> SeriesChoice | str:
    """The series a target reads: values of unstated statistic answer one statistic of a metric,
    the scenario's lowest; a higher target then reads the next series (a p99 as its bound)."""
    choice = choose_series(at.fit, metric, wanted)
    if (
        isinstance(choice, str)
        or choice.stat != "unstated"
        or not _lower_reads_unstated(at, metric, wanted)
    ):
        return choice
    other = choose_series(at.fit, metric, wanted, skip_unstated=True)
    if isinstance(other, str):
        return (
            f"the {metric.upper()} values' statistic is not stated: they answer the scenario's "
            f"lowest {metric.upper()} target (with a caveat), never two statistics at once"
        )
    return other


def _lower_reads_unstated(at: SampledGrid, metric: str, wanted: str) -> bool:
    """Whether a target of `metric` at a lower statistic than `wanted` reads unstated values."""
    rank = STAT_ORDER.index(wanted)
    targets = at.scenario.sla.targets()
    implied = implied_targets(targets)
    for name in targets:
        target = SLA_TARGET_BY_FIELD[name]
        if name in implied:
            continue
        if target.metric == metric and target.statistic in STAT_ORDER[:rank]:
            lower = choose_series(at.fit, metric, target.statistic)
            if not isinstance(lower, str) and lower.stat == "unstated":
                return True
    return False


def _e2e_check(at: SampledGrid, target: SlaTarget, limit: float) -> SlaCheck:
    """e2e at the target's statistic where measured (or a higher one, as a bound), else
    estimated as TTFT + (OSL - 1) x TPOT at that statistic."""
    text, wanted = target.text(limit), target.statistic
    measured = choose_series(at.fit, "e2e", wanted)
    if not isinstance(measured, str):
        flag = bound_flag(text, wanted, measured.stat)
        values = at.values(measured.slot, measured.result, measured.attr)
        return SlaCheck(target, text, limit, values, None, (flag,) if flag else ())
    parts = {m: f"the {m.upper()} part of {text}" for m in ("ttft", "tpot")}
    ttft = _latency_check(at, target, limit, ("ttft", wanted), parts["ttft"])
    tpot = _latency_check(at, target, limit, ("tpot", wanted), parts["tpot"])
    if ttft.values is None or tpot.values is None:
        why = (
            f"no e2e {wanted}, and TTFT {wanted} or TPOT {wanted} to estimate it from, was measured"
        )
        return SlaCheck(target, text, limit, None, why, ())
    estimate = ttft.values + (at.scenario.workload.osl - 1) * tpot.values
    read = {m: _reading(at, m, wanted) for m in ("ttft", "tpot")}
    stats = {m: c.stat if not isinstance(c, str) else wanted for m, c in read.items()}
    named = {m: "of unstated statistic" if st == "unstated" else st for m, st in stats.items()}
    flag = (
        f"{text} estimated from TTFT {named['ttft']} and TPOT {named['tpot']} (no e2e {wanted} "
        "measured): TTFT + (OSL - 1) x TPOT"
    )
    return SlaCheck(target, text, limit, estimate, None, (flag, *ttft.flags, *tpot.flags))


def never_holds_text(check: SlaCheck, grid: Array, row: int = 0) -> str:
    """Why a target fails everywhere in sample `row` (0: the fitted curve), with its best
    value there."""
    values = check.values[row] if check.values is not None else np.zeros(0)
    finite = np.isfinite(values)
    if not finite.any():
        return f"{check.text} cannot be checked at any measured concurrency"
    best_index = int(np.nanargmin(values) if check.target.upper else np.nanargmax(values))
    unit = check.target.unit
    return (
        f"{check.text} fails at every measured concurrency (best {values[best_index]:,.1f} "
        f"{unit} {'on the fitted curve' if row == 0 else 'in that sample'}, at "
        f"{grid[best_index]:g} streams)"
    )


def binding_constraint(
    checks: list[SlaCheck], at: tuple[int, int], size: int, cap_text: str | None = None
) -> str:
    """The target that fails just above c* in sample at = (row, grid index) ('measured range'
    when c* is the top of the data, `cap_text` when a streams-per-replica cap (scenario or
    memory) stopped the search)."""
    row, index = at
    if index == size - 1:
        return MEASURED_RANGE if cap_text is None else cap_text
    failing = [_why_fails(c, row, index) for c in checks if not c.holds()[row, index + 1]]
    return " and ".join(failing) if failing else MEASURED_RANGE


def _why_fails(check: SlaCheck, row: int, index: int) -> str:
    """The target, or that its metric was not measured beyond the chosen concurrency."""
    if check.values is not None and not np.isfinite(check.values[row, index + 1]):
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
