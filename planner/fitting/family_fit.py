"""Fitting one curve family to a cleaned series with relative residuals (Levenberg-Marquardt, or
exact weighted least squares for the linear law), its leave-one-out error, and the choice of the
simplest family within SIMPLER_TOLERANCE of the lowest held-out error. planner/fitting/fit.py turns
the chosen candidate into a FitResult.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from planner.fitting.families import FAMILIES, INTERPOLATED, Array, Family

# A simpler family is kept unless a richer one cuts the held-out error by a third: on synthetic
# step-time data with 2% noise, a 3-parameter family beats it by chance by up to 1.3x (99th pct),
# while real power-law shapes beat it by 2x or more (tests/planner/fitting/test_fit.py).
SIMPLER_TOLERANCE = 1.5
MIN_FIT_POINTS = 3
# Identifiability: a 3+ parameter family whose standard error exceeds this many times its
# parameter, whose parameter correlation matrix is this ill-conditioned, or whose 95% parameter
# band at a measured concurrency reaches further from the fit than BAND_BOUND x both the fitted
# value and the data's range has parameters the data do not determine.
REL_STDERR_BOUND = 10.0
CORRELATION_COND_BOUND = 1e10
BAND_BOUND = 3.0
_Z = 1.96


@dataclass(frozen=True, slots=True)
class Candidate:
    """One family fitted to a series: parameters, their covariance and the held-out error."""

    family: Family
    params: Array
    covariance: Array
    loo_mape_pct: float | None  # None: too few points for held-out folds; inf: a fold failed


def fit_candidates(x: Array, y: Array, names: tuple[str, ...]) -> list[Candidate]:
    """Every family of `names` with enough points that fits the cleaned series usably."""
    found: list[Candidate] = []
    for name in names:
        family = FAMILIES[name]
        if len(x) < min_points(family):
            continue
        if family.name == "linear":
            candidate = _fit_linear(family, x, y)
        else:
            candidate = _fit_nonlinear(family, x, y)
        if candidate is not None:
            found.append(candidate)
    return found


def refit_family(
    family: Family, x: Array, y: Array, loo_mape_pct: float | None
) -> Candidate | None:
    """`family` refitted to a cleaned series without held-out folds, carrying the given held-out
    error; None when the fit fails."""
    if family.name == "linear":
        candidate = _fit_linear(family, x, y)
    else:
        fitted = _fit_family(family, x, y)
        candidate = None if fitted is None else Candidate(family, *fitted, loo_mape_pct)
    if candidate is None:
        return None
    return replace(candidate, loo_mape_pct=loo_mape_pct)


def min_points(family: Family) -> int:
    """Points a family needs: two-parameter laws one more than their parameters; richer ones
    two more, so every held-out fold still over-determines them (no unvalidated rich fits)."""
    n_params = len(family.param_names)
    return n_params + 1 if n_params <= 2 else n_params + 2


def clean_series(c: Sequence[float] | Array, y: Sequence[float] | Array) -> tuple[Array, Array]:
    """The finite, positive (x, y) pairs of a series, sorted by x (stable)."""
    x_arr = np.asarray(c, dtype=np.float64)
    y_arr = np.asarray(y, dtype=np.float64)
    keep = np.isfinite(x_arr) & np.isfinite(y_arr) & (x_arr > 0) & (y_arr > 0)
    order = np.argsort(x_arr[keep], kind="stable")
    return x_arr[keep][order], y_arr[keep][order]


def unidentifiable(candidate: Candidate, x: Array, y: Array) -> str | None:
    """Why a fitted family's parameters are not determined by the data; None when they are."""
    name, params, cov = candidate.family.name, candidate.params, candidate.covariance
    if not np.all(np.isfinite(cov)):
        return f"{name}: covariance not finite"
    stderr = np.sqrt(np.maximum(np.diag(cov), 0.0))
    if len(params) >= 3:
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = stderr / np.abs(params)
        worst = int(np.nanargmax(np.where(np.isfinite(rel), rel, np.inf)))
        if not rel[worst] <= REL_STDERR_BOUND:
            param = candidate.family.param_names[worst]
            return f"{name}: standard error of {param} is {rel[worst]:.3g}x its value"
    if _correlation_cond(cov, stderr) > CORRELATION_COND_BOUND:
        return f"{name}: singular parameter covariance"
    return _band_problem(candidate, x, y)


def _correlation_cond(cov: Array, stderr: Array) -> float:
    """Condition number of the correlation matrix of the parameters with a spread (an exact fit
    has none: zero covariance is no sign of a singular one)."""
    spread = stderr > 0
    if np.count_nonzero(spread) < 2:
        return 1.0
    with np.errstate(all="ignore"):
        corr = cov[np.ix_(spread, spread)] / np.outer(stderr[spread], stderr[spread])
        return float(np.linalg.cond(corr)) if np.all(np.isfinite(corr)) else math.inf


def _band_problem(candidate: Candidate, x: Array, y: Array) -> str | None:
    """The band check: the parameter band at each measured concurrency against the data."""
    family, params = candidate.family, candidate.params
    with np.errstate(all="ignore"):
        fitted = family.func(x, *params)
        jac = family.jac(x, *params)
        half = _Z * np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", jac, candidate.covariance, jac), 0))
    limit = BAND_BOUND * np.maximum(fitted, np.max(y) - np.min(y))
    bad = ~(half <= limit)
    if not np.any(bad):
        return None
    at = int(np.argmax(bad))
    return (
        f"{family.name}: band {fitted[at] - half[at]:.3g}-{fitted[at] + half[at]:.3g} at "
        f"concurrency {x[at]:g} where the fit is {fitted[at]:.3g}"
    )


def interpolation(x: Array, y: Array) -> Candidate:
    """The fallback: monotone (non-decreasing) interpolation of the measured points in log c,
    its held-out error from predicting each interior point from its neighbours."""
    knots_y = np.maximum.accumulate(y)
    func = FAMILIES[INTERPOLATED].func
    errors: list[float] = []
    for held_out in range(1, len(x) - 1):
        keep = np.arange(len(x)) != held_out
        predicted = float(func(x[held_out : held_out + 1], *x[keep], *knots_y[keep])[0])
        errors.append(abs(predicted - y[held_out]) / y[held_out])
    params = np.concatenate([x, knots_y])
    loo = 100.0 * float(np.mean(errors)) if errors else None
    return Candidate(FAMILIES[INTERPOLATED], params, np.zeros((len(params), len(params))), loo)


def _fit_nonlinear(family: Family, x: Array, y: Array) -> Candidate | None:
    fitted = _fit_family(family, x, y)
    if fitted is None:
        return None
    return Candidate(family, fitted[0], fitted[1], _loo_mape_pct(family, x, y, fitted[0]))


def _fit_linear(family: Family, x: Array, y: Array) -> Candidate | None:
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
    return Candidate(family, params, cov, loo)


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

    # Imported here: a plan whose fits are all kept (planner.fitting.kept) loads no optimiser.
    from scipy.optimize import leastsq  # noqa: PLC0415

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


def choose(candidates: list[Candidate], n_points: int) -> tuple[Candidate, str]:
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
