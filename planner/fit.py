"""Curve families for throughput and latency vs concurrency, fitted with relative residuals.

A family is chosen by leave-one-out (held-out) error, not R^2; bands combine the parameter
covariance (delta method) with the held-out error, and reads outside the data are marked.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.optimize import leastsq

from planner.curves import CurvePoint, LoadCurve
from planner.families import (
    FAMILIES,
    LATENCY_FAMILIES,
    THROUGHPUT_FAMILIES,
    Array,
    Family,
)

# A simpler family is kept unless a richer one cuts the held-out error by a third: on synthetic
# step-time data with 2% noise, a 3-parameter family beats it by chance by up to 1.3x (99th pct),
# while real power-law shapes beat it by 2x or more (tests/planner/test_fit.py).
SIMPLER_TOLERANCE = 1.5
# Mean absolute error of a normal variable is sigma * sqrt(2/pi): turns LOO MAPE into a sigma.
MAPE_TO_SIGMA = math.sqrt(math.pi / 2)
MIN_FIT_POINTS = 3


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
    # Multiplicative correction as (concurrency, factor) pairs (planner.shapes: the shared shape
    # of sibling curves); empty: none. Applied to values and bands alike.
    shape: tuple[tuple[float, float], ...] = ()

    def eval(self, x: Array | Sequence[float]) -> Array:
        """Fitted values at x (inf at or past a queueing family's saturation, c >= 1/inv_c_sat),
        times the shape correction where there is one."""
        xs = np.asarray(x, dtype=np.float64)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            return FAMILIES[self.family].func(xs, *self.params) * shape_factor(self.shape, xs)

    def eval_band(self, x: Array | Sequence[float], z: float = 1.96) -> tuple[Array, Array]:
        """Lower and upper band: delta-method parameter spread widened by the held-out error
        (scaled by the shape correction, as the values are)."""
        xs = np.asarray(x, dtype=np.float64)
        y = self.eval(xs)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            factor = shape_factor(self.shape, xs)
            jac = FAMILIES[self.family].jac(xs, *self.params) * factor[:, None]
            cov = np.asarray(self.covariance, dtype=np.float64)
            param_var = np.einsum("ij,jk,ik->i", jac, cov, jac)
            spread = np.sqrt(np.maximum(param_var, 0.0) + (self.noise_rel() * y) ** 2)
            lo = np.where(np.isfinite(y), np.maximum(y - z * spread, 0.0), y)
            hi = np.where(np.isfinite(y), y + z * spread, y)
        return lo, hi

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


@dataclass(frozen=True, slots=True)
class Prediction:
    """Fitted values at one concurrency with their bands; None where nothing can be said."""

    concurrency: float
    output_tok_s: float | None
    output_tok_s_lo: float | None
    output_tok_s_hi: float | None
    p50_ttft_ms: float | None
    p50_ttft_ms_lo: float | None
    p50_ttft_ms_hi: float | None
    p99_ttft_ms: float | None
    p99_ttft_ms_lo: float | None
    p99_ttft_ms_hi: float | None
    tpot_ms: float | None
    tpot_ms_lo: float | None
    tpot_ms_hi: float | None
    stream_tok_s: float | None
    extrapolated: bool


# --- fitting --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Candidate:
    family: Family
    params: Array
    covariance: Array
    loo_mape_pct: float | None  # None: too few points for held-out folds; inf: a fold failed


def fit_throughput(c: Sequence[float] | Array, t: Sequence[float] | Array) -> FitResult | None:
    """Fit output tok/s vs concurrency; None with fewer than 3 usable points or no usable family."""
    return _fit(c, t, THROUGHPUT_FAMILIES)


def fit_latency(c: Sequence[float] | Array, y: Sequence[float] | Array) -> FitResult | None:
    """Fit a latency (TTFT or TPOT, ms) vs concurrency; None when too few points or no fit."""
    return _fit(c, y, LATENCY_FAMILIES)


def _fit(
    c: Sequence[float] | Array, y: Sequence[float] | Array, names: tuple[str, ...]
) -> FitResult | None:
    x_arr, y_arr = _clean(c, y)
    return _fit_series(tuple(x_arr.tolist()), tuple(y_arr.tolist()), names)


@functools.lru_cache(maxsize=8192)
def _fit_series(
    xs: tuple[float, ...], ys: tuple[float, ...], names: tuple[str, ...]
) -> FitResult | None:
    """The chosen fit of one cleaned series; cached (pure, results frozen), so re-planning the
    same curves — every slider move — refits nothing."""
    x_arr = np.asarray(xs, dtype=np.float64)
    y_arr = np.asarray(ys, dtype=np.float64)
    if len(np.unique(x_arr)) < MIN_FIT_POINTS:
        return None
    candidates: list[_Candidate] = []
    for name in names:
        family = FAMILIES[name]
        if len(x_arr) < _min_points(family):
            continue
        if family.name == "linear":
            candidate = _fit_linear(family, x_arr, y_arr)
        else:
            candidate = _fit_nonlinear(family, x_arr, y_arr)
        if candidate is not None:
            candidates.append(candidate)
    if not candidates:
        return None
    chosen, reason = _choose(candidates, len(x_arr))
    return _result(chosen, x_arr, y_arr, reason)


def clear_fit_cache() -> None:
    """Forget every cached fit (benchmarks time cold plans with it)."""
    _fit_series.cache_clear()


def refit_like(
    c: Sequence[float] | Array, y: Sequence[float] | Array, like: FitResult
) -> FitResult | None:
    """Refit `like`'s family to new values, keeping its held-out error (no family selection, no
    leave-one-out refits): the cheap refit a bootstrap sample needs. None when it fails."""
    x_arr, y_arr = _clean(c, y)
    family = FAMILIES[like.family]
    if len(np.unique(x_arr)) < MIN_FIT_POINTS or len(x_arr) < _min_points(family):
        return None
    if family.name == "linear":
        candidate = _fit_linear(family, x_arr, y_arr)
    else:
        fitted = _fit_family(family, x_arr, y_arr)
        candidate = None if fitted is None else _Candidate(family, *fitted, like.loo_mape_pct)
    if candidate is None:
        return None
    kept = replace(candidate, loo_mape_pct=like.loo_mape_pct)
    reason = f"{like.family} refitted (family, held-out error and shape correction kept)"
    return replace(_result(kept, x_arr, y_arr, reason), shape=like.shape)


def _min_points(family: Family) -> int:
    """Points a family needs: two-parameter laws one more than their parameters; richer ones
    two more, so every held-out fold still over-determines them (no unvalidated rich fits)."""
    n_params = len(family.param_names)
    return n_params + 1 if n_params <= 2 else n_params + 2


def _clean(c: Sequence[float] | Array, y: Sequence[float] | Array) -> tuple[Array, Array]:
    x_arr = np.asarray(c, dtype=np.float64)
    y_arr = np.asarray(y, dtype=np.float64)
    keep = np.isfinite(x_arr) & np.isfinite(y_arr) & (x_arr > 0) & (y_arr > 0)
    order = np.argsort(x_arr[keep], kind="stable")
    return x_arr[keep][order], y_arr[keep][order]


def _fit_nonlinear(family: Family, x: Array, y: Array) -> _Candidate | None:
    fitted = _fit_family(family, x, y)
    if fitted is None:
        return None
    return _Candidate(family, fitted[0], fitted[1], _loo_mape_pct(family, x, y, fitted[0]))


def _fit_linear(family: Family, x: Array, y: Array) -> _Candidate | None:
    """Exact weighted least squares; held-out errors from the hat matrix (no refits needed)."""
    design = np.stack([np.ones_like(x), x], axis=1) / y[:, None]
    gram = design.T @ design
    if np.linalg.cond(gram) > 1e12:
        return None  # the same case curve_fit reports as OptimizeWarning: unusable
    gram_inv = np.linalg.inv(gram)
    params = gram_inv @ design.T @ np.ones_like(y)
    residuals = 1.0 - design @ params
    n = len(x)
    cov = gram_inv * float(residuals @ residuals) / (n - 2)
    if not _usable(family, params, x):
        return None
    loo: float | None = None
    if n - 1 > 2:
        leverage = np.einsum("ij,jk,ik->i", design, gram_inv, design)
        loo = 100.0 * float(np.mean(np.abs(residuals) / np.maximum(1.0 - leverage, 1e-12)))
    return _Candidate(family, params, cov, loo)


def _fit_family(family: Family, x: Array, y: Array) -> tuple[Array, Array] | None:
    """Full fit (relative residuals, Levenberg-Marquardt as curve_fit's method="lm") with the
    parameter covariance; None when it fails, the covariance cannot be estimated, or the
    parameters are unphysical."""
    start = family.init(x, y)
    if start is None or not np.all(np.isfinite(start)):
        return None
    params, cov_x, status = _least_squares(family, x, y, start, maxfev=4000, tol=1.49012e-8)
    dof = len(x) - len(params)
    if status not in (1, 2, 3, 4) or cov_x is None or dof <= 0 or not _usable(family, params, x):
        return None
    with np.errstate(all="ignore"):
        residual_var = float(np.sum((family.func(x, *params) / y - 1.0) ** 2)) / dof
    cov = np.asarray(cov_x, dtype=np.float64) * residual_var  # as curve_fit, absolute_sigma=False
    return (params, cov) if np.all(np.isfinite(cov)) else None


def _least_squares(
    family: Family, x: Array, y: Array, start: Array, *, maxfev: int, tol: float
) -> tuple[Array, Array | None, int]:
    """leastsq on relative residuals: (params, cov_x or None, status). full_output makes it
    report non-convergence in the status instead of warning (warning filters are
    process-global and not thread-safe under Streamlit)."""

    def residuals(params: Array) -> Array:
        return family.func(x, *params) / y - 1.0

    def jacobian(params: Array) -> Array:
        return family.jac(x, *params) / y[:, None]

    with np.errstate(all="ignore"):
        params, cov_x, _, _, status = leastsq(
            residuals, start, Dfun=jacobian, maxfev=maxfev, ftol=tol, xtol=tol, full_output=True
        )
    return np.asarray(params, dtype=np.float64), cov_x, int(status)


def _usable(family: Family, params: Array, x: Array) -> bool:
    if not np.all(np.isfinite(params)) or not family.valid(params, float(np.max(x))):
        return False
    with np.errstate(all="ignore"):
        fitted = family.func(x, *params)
    return bool(np.all(np.isfinite(fitted)) and np.all(fitted > 0))


def _refit(family: Family, x: Array, y: Array, start: Array) -> Array | None:
    """Quick refit for a held-out fold (same least squares as the full fit, looser limits)."""
    params, _, status = _least_squares(family, x, y, start, maxfev=400, tol=1e-7)
    if status not in (1, 2, 3, 4) or not _usable(family, params, x):
        return None
    return params


def _loo_mape_pct(family: Family, x: Array, y: Array, start: Array) -> float | None:
    """Mean absolute % error predicting each point from the others (inf if a fold fails)."""
    n = len(x)
    if n - 1 <= len(family.param_names):
        return None
    errors: list[float] = []
    for held_out in range(n):
        keep = np.arange(n) != held_out
        params = _refit(family, x[keep], y[keep], start)
        if params is None:
            return math.inf
        with np.errstate(all="ignore"):
            predicted = float(family.func(x[held_out : held_out + 1], *params)[0])
        if not math.isfinite(predicted):
            return math.inf
        errors.append(abs(predicted - y[held_out]) / y[held_out])
    return 100.0 * float(np.mean(errors))


def _choose(candidates: list[_Candidate], n_points: int) -> tuple[_Candidate, str]:
    """Simplest family within SIMPLER_TOLERANCE of the lowest held-out error."""
    scored = [c for c in candidates if c.loo_mape_pct is not None and math.isfinite(c.loo_mape_pct)]
    if not scored:
        simplest = min(candidates, key=lambda c: len(c.params))
        return simplest, (
            f"{n_points} points are too few for leave-one-out checks of any family; "
            f"kept the simplest eligible family ({simplest.family.name})"
        )
    best = min(c.loo_mape_pct or 0.0 for c in scored)
    chosen = next(c for c in scored if (c.loo_mape_pct or 0.0) <= best * SIMPLER_TOLERANCE)
    others = ", ".join(f"{c.family.name} {c.loo_mape_pct:.1f}%" for c in scored if c is not chosen)
    also = f"; others: {others}" if others else ""
    if (chosen.loo_mape_pct or 0.0) <= best:
        return chosen, f"lowest leave-one-out error ({chosen.loo_mape_pct:.1f}%){also}"
    return chosen, (
        f"simplest family within {SIMPLER_TOLERANCE - 1:.0%} of the lowest leave-one-out error "
        f"({chosen.loo_mape_pct:.1f}% vs {best:.1f}%){also}"
    )


def _result(chosen: _Candidate, x: Array, y: Array, reason: str) -> FitResult:
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


# --- curves and predictions -----------------------------------------------------------------

_SERIES: dict[str, tuple[tuple[str, str], ...]] = {
    "ttft_p50": (("p50", "p50_ttft_ms"), ("unstated", "ttft_ms")),
    "ttft_p99": (("p99", "p99_ttft_ms"), ("unstated", "ttft_ms")),
    "tpot": (("p99", "p99_tpot_ms"), ("unstated", "tpot_ms"), ("p50", "p50_tpot_ms")),
    "e2e_p99": (("p99", "p99_e2e_ms"),),
}
_SERIES_TEXT = {
    "ttft_p50": "TTFT p50",
    "ttft_p99": "TTFT p99",
    "tpot": "TPOT",
    "e2e_p99": "e2e p99",
}


def series(points: Sequence[CurvePoint], attr: str) -> tuple[Array, Array]:
    """Concurrencies and values of one CurvePoint attribute, skipping points that lack it."""
    pairs = [(p.concurrency, getattr(p, attr)) for p in points if getattr(p, attr) is not None]
    return (
        np.array([c for c, _ in pairs], dtype=np.float64),
        np.array([v for _, v in pairs], dtype=np.float64),
    )


def series_attr(slot: str, stat: str | None) -> str | None:
    """CurvePoint attribute behind a CurveFit slot ('ttft_p99', 'tpot', ...) and its stat."""
    return next((attr for s, attr in _SERIES[slot] if s == stat), None)


def _pick_series(points: Sequence[CurvePoint], slot: str) -> str | None:
    """The statistic to fit: the stated one when it has enough points, else the fallbacks."""
    options = _SERIES[slot]
    counts = [(stat, len(series(points, attr)[0])) for stat, attr in options]
    enough = next((stat for stat, count in counts if count >= MIN_FIT_POINTS), None)
    return enough or next((stat for stat, count in counts if count > 0), None)


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
    for slot in _SERIES:
        stat = _pick_series(curve.points, slot)
        stats[slot] = stat
        attr = series_attr(slot, stat)
        if attr is None:
            fits[slot] = None
            continue
        if like is not None:
            fits[slot] = _refit_slot(curve, attr, getattr(like, slot))
        else:
            if attr not in cache:
                cache[attr] = fit_latency(*series(curve.points, attr))
            fits[slot] = cache[attr]
        if stat != _SERIES[slot][0][0]:
            flags.append(f"{_SERIES_TEXT[slot]} fitted to values whose statistic is {stat}")
    if like is None:
        throughput = fit_throughput(c, t)
    else:
        throughput = _refit_slot(curve, "output_tok_s", like.throughput)
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


def _refit_slot(curve: LoadCurve, attr: str, like: FitResult | None) -> FitResult | None:
    if like is None:
        return None
    return refit_like(*series(curve.points, attr), like)


Triple = tuple[list[float | None], list[float | None], list[float | None]]


def _values(
    fit: FitResult | None, points: Sequence[CurvePoint], attr: str | None, xs: Array
) -> Triple:
    """Central, low and high values at xs: fitted, else the measured value at that exact c."""
    if fit is not None:
        lo, hi = fit.eval_band(xs)
        return _floats(fit.eval(xs)), _floats(lo), _floats(hi)
    measured: dict[float, float] = {}
    if attr is not None:
        measured = dict(zip(*(arr.tolist() for arr in series(points, attr)), strict=True))
    exact = [measured.get(float(x)) for x in xs]
    return exact, list(exact), list(exact)


def _floats(arr: Array) -> list[float | None]:
    # A queueing family past saturation evaluates to inf; JSON has no inf, so it reads None.
    return [float(v) if math.isfinite(v) else None for v in arr.tolist()]


def predict(fit: CurveFit, concurrencies: Sequence[float]) -> list[Prediction]:
    """Fitted throughput and latencies with bands; extrapolated marks reads outside the data."""
    xs = np.asarray(concurrencies, dtype=np.float64)
    points = fit.curve.points
    t = _values(fit.throughput, points, "output_tok_s", xs)
    p50 = _values(fit.ttft_p50, points, series_attr("ttft_p50", fit.ttft_p50_stat), xs)
    p99 = _values(fit.ttft_p99, points, series_attr("ttft_p99", fit.ttft_p99_stat), xs)
    tpot = _values(fit.tpot, points, series_attr("tpot", fit.tpot_stat), xs)
    ranges = [r for r in (fit.throughput, fit.ttft_p50, fit.ttft_p99, fit.tpot) if r is not None]
    measured = fit.curve.concurrencies()
    out: list[Prediction] = []
    for i, x in enumerate(xs.tolist()):
        out.append(
            Prediction(
                concurrency=x,
                output_tok_s=t[0][i],
                output_tok_s_lo=t[1][i],
                output_tok_s_hi=t[2][i],
                p50_ttft_ms=p50[0][i],
                p50_ttft_ms_lo=p50[1][i],
                p50_ttft_ms_hi=p50[2][i],
                p99_ttft_ms=p99[0][i],
                p99_ttft_ms_lo=p99[1][i],
                p99_ttft_ms_hi=p99[2][i],
                tpot_ms=tpot[0][i],
                tpot_ms_lo=tpot[1][i],
                tpot_ms_hi=tpot[2][i],
                stream_tok_s=_per_stream(t[0][i], x),
                # Outside the levels, or outside the range any fitted series was measured over.
                extrapolated=not measured
                or x < measured[0]
                or x > measured[-1]
                or any(not r.inside(x) for r in ranges),
            )
        )
    return out


def _per_stream(total: float | None, concurrency: float) -> float | None:
    return None if total is None or concurrency <= 0 else total / concurrency
