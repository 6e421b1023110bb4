"""Curve fits for throughput and latency vs concurrency: FitResult (values and bands at any
concurrency), the cached fit of one series, and CurveFit, the fits behind one curve.

A family is chosen by leave-one-out (held-out) error, not R^2 (planner/fitting/family_fit.py); bands
combine the parameter covariance (delta method) with the held-out error. Predictions at given
concurrencies, with reads outside the data marked, are in planner/fitting/predict.py.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from planner.curves.load import LoadCurve
from planner.fitting.families import (
    FAMILIES,
    INTERPOLATED,
    LATENCY_FAMILIES,
    THROUGHPUT_FAMILIES,
    TPOT_FAMILIES,
    Array,
)
from planner.fitting.family_fit import (
    MIN_FIT_POINTS,
    Candidate,
    choose,
    clean_series,
    fit_candidates,
    interpolation,
    min_points,
    refit_family,
    unidentifiable,
)
from planner.fitting.kept_fits import kept_fit
from planner.fitting.series import SERIES, SERIES_TEXT, pick_series, series, series_attr

UNIDENTIFIABLE = "no family's parameters are identifiable"
# Mean absolute error of a normal variable is sigma * sqrt(2/pi): turns LOO MAPE into a sigma.
MAPE_TO_SIGMA = math.sqrt(math.pi / 2)
# Relative sigma per doubling of c outside the measured range (bench/bench_knee.py, next level up).
EXTRAPOLATION_REL_PER_DOUBLING = 0.07
_Z95, Z80 = 1.96, 1.2816  # every band capplan shows is an 80% band (10th to 90th percentile)


def shape_factor(pairs: Sequence[tuple[float, float]], x: Array | Sequence[float]) -> Array:
    """Correction factors at x from (concurrency, factor) pairs: log-c interpolation between
    them, 1.0 outside them and everywhere when there are none."""
    xs = np.asarray(x, dtype=np.float64)
    if not pairs:
        return np.ones_like(xs)
    cs = np.log(np.array([c for c, _ in pairs], dtype=np.float64))
    fs = np.array([f for _, f in pairs], dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(np.where(xs > 0, xs, np.nan))
    inside = np.isfinite(logs) & (logs >= cs[0] - 1e-12) & (logs <= cs[-1] + 1e-12)
    return np.where(inside, np.interp(np.nan_to_num(logs, nan=cs[0]), cs, fs), 1.0)


@dataclass(frozen=True, slots=True)
class FitResult:
    """A fitted family: parameters, standard errors, covariance, quality and held-out error."""

    family: str
    param_names: tuple[str, ...]
    params: tuple[float, ...]
    stderr: tuple[float, ...]
    covariance: tuple[tuple[float, ...], ...]
    n_points: int
    rmse_rel: float
    r_squared: float
    loo_mape_pct: float | None
    x_min: float
    x_max: float
    chosen_reason: str
    # Multiplicative correction as (concurrency, factor) pairs (planner.fitting.shapes: the shared
    # shape of sibling curves); empty: none. Applied to values and bands alike.
    shape: tuple[tuple[float, float], ...] = ()
    # Past the knee (planner.fitting.knee): (start concurrency, units per extra stream). Beyond
    # start: the fit at start plus that slope (0: flat; TTFT: the queueing wait); None: none.
    past: tuple[float, float] | None = None
    # An offline (max-throughput) measurement no value may pass (throughput fits only); None: none.
    ceiling: float | None = None

    def eval(self, x: Array | Sequence[float]) -> Array:
        """Fitted values at x (inf at or past a queueing family's saturation, c >= 1/inv_c_sat),
        times the shape correction where there is one; past the knee, its line."""
        xs = np.asarray(x, dtype=np.float64)
        at = self._knee_x(xs)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            y = FAMILIES[self.family].func(at, *self.params) * shape_factor(self.shape, at)
        if self.past is not None:
            y = y + self.past[1] * np.maximum(xs - self.past[0], 0.0)
        if self.ceiling is not None:
            y = np.minimum(y, self.ceiling)
        return np.asarray(y, dtype=np.float64)

    def _knee_x(self, xs: Array) -> Array:
        """Where the family is read: x, or the knee's start beyond it."""
        return xs if self.past is None else np.minimum(xs, self.past[0])

    def eval_band(self, x: Array | Sequence[float], z: float = Z80) -> tuple[Array, Array]:
        """The 80% band: the fit times exp(-+z x rel_spread), the lognormal error the plan
        draws from (planner.sizing.draws); never negative, never clipped to 0."""
        xs = np.asarray(x, dtype=np.float64)
        y = self.eval(xs)
        rel = self.rel_spread(xs)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            lo = np.where(np.isfinite(y), y * np.exp(-z * rel), y)
            hi = np.where(np.isfinite(y), y * np.exp(z * rel), y)
        return lo, hi

    def rel_spread(self, x: Array | Sequence[float]) -> Array:
        """Relative sigma of the true value at x: the delta-method parameter spread and the
        held-out error, over the fitted value (the spread `eval_band` widens by z)."""
        xs = np.asarray(x, dtype=np.float64)
        y = self.eval(xs)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            doublings = np.log2(np.maximum(xs / self.x_max, self.x_min / np.maximum(xs, 1e-12)))
            outside = EXTRAPOLATION_REL_PER_DOUBLING * np.maximum(doublings, 0.0)
            queue = self._queue_rel(xs, y)
            rel = np.sqrt(
                self._param_var(xs) / y**2 + self.noise_rel() ** 2 + outside**2 + queue**2
            )
        return np.asarray(np.where(np.isfinite(rel), rel, self.noise_rel()), dtype=np.float64)

    def _queue_rel(self, xs: Array, y: Array) -> Array:
        """Past the knee: a sigma putting the unqueued family at the 95% band's edge."""
        if self.past is None or self.past[1] <= 0:
            return np.zeros_like(xs)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            unqueued = FAMILIES[self.family].func(xs, *self.params)
            unqueued = np.where(np.isfinite(unqueued) & (unqueued > 0), unqueued, y)
            rel = np.abs(np.log(y / unqueued)) / _Z95
        return np.asarray(np.where(xs > self.past[0], np.nan_to_num(rel), 0.0), dtype=np.float64)

    def _param_var(self, xs: Array) -> Array:
        """Variance of the fitted value from the parameter covariance (delta method)."""
        xs = self._knee_x(xs)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            factor = shape_factor(self.shape, xs)
            jac = FAMILIES[self.family].jac(xs, *self.params) * factor[:, None]
            cov = np.asarray(self.covariance, dtype=np.float64)
            var = np.einsum("ij,jk,ik->i", jac, cov, jac)
        return np.asarray(np.maximum(var, 0.0), dtype=np.float64)

    def noise_rel(self) -> float:
        """Relative sigma of a held-out point: from LOO MAPE, else the residual sigma."""
        if self.loo_mape_pct is not None:
            return MAPE_TO_SIGMA * self.loo_mape_pct / 100.0
        dof = max(self.n_points - len(self.params), 1)
        return self.rmse_rel * math.sqrt(self.n_points / dof)

    def inside(self, x: float) -> bool:
        """True when x lies within the measured range."""
        return self.x_min - 1e-9 <= x <= self.x_max + 1e-9

    def summary(self) -> dict[str, float | str | None]:
        """JSON-friendly summary: family, parameters with standard errors, fit quality."""
        out: dict[str, float | str | None] = {
            "family": self.family,
            "n_points": float(self.n_points),
            "rmse_rel": self.rmse_rel,
            "r_squared": self.r_squared,
            "loo_mape_pct": self.loo_mape_pct,
            "x_min": self.x_min,
            "x_max": self.x_max,
            "chosen_reason": self.chosen_reason,
            "shape": ", ".join(f"x{f:.3f} at {c:g}" for c, f in self.shape) or None,
        }
        for name, value, err in zip(self.param_names, self.params, self.stderr, strict=True):
            out[f"param_{name}"] = value
            out[f"stderr_{name}"] = err if math.isfinite(err) else None
        return out


@dataclass(frozen=True, slots=True)
class CurveFit:
    """The fits behind one curve; *_stat says which series fed each latency fit."""

    curve: LoadCurve
    throughput: FitResult | None
    ttft_p50: FitResult | None
    ttft_p99: FitResult | None
    tpot: FitResult | None
    e2e_p99: FitResult | None = None
    ttft_p50_stat: str | None = None
    ttft_p99_stat: str | None = None
    tpot_stat: str | None = None
    flags: tuple[str, ...] = field(default=())


def fit_throughput(c: Sequence[float] | Array, t: Sequence[float] | Array) -> FitResult | None:
    """Fit output tok/s vs concurrency; None with fewer than 3 usable points or no usable family."""
    return _fit(c, t, THROUGHPUT_FAMILIES)


def fit_latency(c: Sequence[float] | Array, y: Sequence[float] | Array) -> FitResult | None:
    """Fit a latency (TTFT or TPOT, ms) vs concurrency; None when too few points or no fit."""
    return _fit(c, y, LATENCY_FAMILIES)


def fit_tpot(c: Sequence[float] | Array, y: Sequence[float] | Array) -> FitResult | None:
    """Fit TPOT (ms) vs concurrency: the latency families and a line that flattens at a cap."""
    return _fit(c, y, TPOT_FAMILIES)


def _fit(
    c: Sequence[float] | Array, y: Sequence[float] | Array, names: tuple[str, ...]
) -> FitResult | None:
    x_arr, y_arr = clean_series(c, y)
    return _fit_series(tuple(x_arr.tolist()), tuple(y_arr.tolist()), names)


@functools.lru_cache(maxsize=8192)
def _fit_series(
    xs: tuple[float, ...], ys: tuple[float, ...], names: tuple[str, ...]
) -> FitResult | None:
    """The chosen fit of one cleaned series; cached (pure, results frozen), so re-planning the
    same curves — every slider move — refits nothing; kept beyond the process where fits are
    (planner.fitting.kept_fits)."""
    return kept_fit(xs, ys, names, _fitted_series)


def _fitted_series(
    xs: tuple[float, ...], ys: tuple[float, ...], names: tuple[str, ...]
) -> FitResult | None:
    x_arr = np.asarray(xs, dtype=np.float64)
    y_arr = np.asarray(ys, dtype=np.float64)
    if len(np.unique(x_arr)) < MIN_FIT_POINTS:
        return None
    candidates = fit_candidates(x_arr, y_arr, names)
    if not candidates:
        return None
    problems = {id(c): unidentifiable(c, x_arr, y_arr) for c in candidates}
    sane = [c for c in candidates if problems[id(c)] is None]
    if not sane:
        found = "; ".join(problem for problem in problems.values() if problem)
        reason = (
            f"{UNIDENTIFIABLE}: {found}; monotone interpolation of the measured points, "
            "band from its held-out error"
        )
        return _result(interpolation(x_arr, y_arr), x_arr, y_arr, reason)
    chosen, reason = choose(sane, len(x_arr))
    rejected = [problem for problem in problems.values() if problem]
    if rejected:
        reason = f"{reason}; not identifiable, never chosen: {'; '.join(rejected)}"
    return _result(chosen, x_arr, y_arr, reason)


def clear_fit_cache() -> None:
    """Forget every cached fit (benchmarks time cold plans with it)."""
    _fit_series.cache_clear()


def refit_like(
    c: Sequence[float] | Array, y: Sequence[float] | Array, like: FitResult
) -> FitResult | None:
    """Refit `like`'s family to new values, keeping its held-out error (no family selection, no
    leave-one-out refits): the cheap refit a bootstrap sample needs. None when it fails."""
    x_arr, y_arr = clean_series(c, y)
    family = FAMILIES[like.family]
    if len(np.unique(x_arr)) < MIN_FIT_POINTS or len(x_arr) < min_points(family):
        return None
    if family.name == INTERPOLATED:
        return _result(interpolation(x_arr, y_arr), x_arr, y_arr, like.chosen_reason)
    kept = refit_family(family, x_arr, y_arr, like.loo_mape_pct)
    if kept is None:
        return None
    reason = f"{like.family} refitted (family, held-out error and shape correction kept)"
    return replace(_result(kept, x_arr, y_arr, reason), shape=like.shape)


def _result(chosen: Candidate, x: Array, y: Array, reason: str) -> FitResult:
    fitted = chosen.family.func(x, *chosen.params)
    ss_res = float(np.sum((fitted - y) ** 2))
    ss_tot = float(np.sum((y - np.mean(y)) ** 2))
    r_squared = 1.0 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0)
    loo = chosen.loo_mape_pct
    return FitResult(
        family=chosen.family.name,
        param_names=chosen.family.param_names,
        params=tuple(float(v) for v in chosen.params),
        stderr=tuple(float(v) for v in np.sqrt(np.maximum(np.diag(chosen.covariance), 0.0))),
        covariance=tuple(tuple(float(v) for v in row) for row in chosen.covariance),
        n_points=len(x),
        rmse_rel=float(np.sqrt(np.mean((fitted / y - 1.0) ** 2))),
        r_squared=r_squared,
        loo_mape_pct=loo if loo is not None and math.isfinite(loo) else None,
        x_min=float(np.min(x)),
        x_max=float(np.max(x)),
        chosen_reason=reason,
    )


def fit_curve(curve: LoadCurve, *, like: CurveFit | None = None) -> CurveFit:
    """Fit throughput, TTFT p50/p99, TPOT and e2e p99 of a curve (each None when not fittable).

    With `like` (a fit of the same deployment), each series is refitted with the family `like`
    chose and keeps its held-out error (refit_like): fast, for bootstrap samples.
    """
    c, t = series(curve.points, "output_tok_s")
    fits: dict[str, FitResult | None] = {}
    stats: dict[str, str | None] = {}
    cache: dict[str, FitResult | None] = {}
    flags: list[str] = []
    for slot in SERIES:
        stat = pick_series(curve.points, slot)
        stats[slot] = stat
        attr = series_attr(slot, stat)
        if attr is None:
            fits[slot] = None
            continue
        if like is not None:
            fits[slot] = _refit_slot(curve, attr, getattr(like, slot))
        else:
            if attr not in cache:
                fitter = fit_tpot if slot == "tpot" else fit_latency
                cache[attr] = fitter(*series(curve.points, attr))
            fits[slot] = cache[attr]
        if stat != SERIES[slot][0][0]:
            flags.append(f"{SERIES_TEXT[slot]} fitted to values whose statistic is {stat}")
    if like is None:
        throughput = fit_throughput(c, t)
    else:
        throughput = _refit_slot(curve, "output_tok_s", like.throughput)
    throughput = _capped(throughput, curve, flags)
    named = [("output tok/s", throughput), *((SERIES_TEXT[slot], fits[slot]) for slot in SERIES)]
    flags.extend(
        f"{text}: {fit.chosen_reason}"
        for text, fit in named
        if fit is not None and fit.family == INTERPOLATED
    )
    return CurveFit(
        curve=curve,
        throughput=throughput,
        ttft_p50=fits["ttft_p50"],
        ttft_p99=fits["ttft_p99"],
        tpot=fits["tpot"],
        e2e_p99=fits["e2e_p99"],
        ttft_p50_stat=stats["ttft_p50"],
        ttft_p99_stat=stats["ttft_p99"],
        tpot_stat=stats["tpot"],
        flags=tuple(flags),
    )


def _capped(result: FitResult | None, curve: LoadCurve, flags: list[str]) -> FitResult | None:
    """The throughput fit bounded by the run's offline (max-throughput) measurement; a measured
    level above it is flagged (the two measurements disagree)."""
    ceiling = curve.ceiling_output_tok_s
    if result is None or ceiling is None:
        return result
    above = [p for p in curve.points if (p.output_tok_s or 0.0) > ceiling]
    if above:
        worst = max(above, key=lambda p: p.output_tok_s or 0.0)
        flags.append(
            f"concurrency {worst.concurrency:g} measured {worst.output_tok_s:,.0f} output tok/s, "
            f"above the offline (max-throughput) {ceiling:,.0f}: the two measurements disagree"
        )
    if float(result.eval([result.x_max])[0]) > ceiling:
        flags.append(f"output tok/s fit capped at the offline maximum, {ceiling:,.0f} tok/s")
    return replace(result, ceiling=ceiling)


def _refit_slot(curve: LoadCurve, attr: str, like: FitResult | None) -> FitResult | None:
    if like is None:
        return None
    return refit_like(*series(curve.points, attr), like)
