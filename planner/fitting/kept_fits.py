"""A series' chosen fit kept beyond the process (planner.fitting.kept): a new `capplan plan` or a
freshly started app reads the fit of a curve it has seen instead of fitting every family again with
leave-one-out refits (about a third of a cold plan's time, and the optimiser's import).

Only what planner.fitting.fit's `_fit_series` returns is kept: a fit without shape correction,
knee or ceiling (those are applied after, from the curve). A kept value is checked field by field
against what `fit_to_json` writes; anything else is fitted again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from planner.fitting.families import FAMILIES
from planner.fitting.kept import FITS, finite_reals, kept, key_of

if TYPE_CHECKING:
    from planner.fitting.fit import FitResult

__all__ = ["fit_from_json", "fit_key", "fit_to_json", "kept_fit"]

_FIELDS = frozenset(
    {
        "family",
        "param_names",
        "params",
        "stderr",
        "covariance",
        "n_points",
        "rmse_rel",
        "r_squared",
        "loo_mape_pct",
        "x_min",
        "x_max",
        "chosen_reason",
    }
)
MAX_REASON = 4000
# A kept "no usable fit" (the series had too few points or no family converged).
_NONE: dict[str, object] = {"none": True}

Series = tuple[float, ...]


def fit_key(xs: Series, ys: Series, names: tuple[str, ...]) -> str:
    """What a series' fit is a function of, besides the planner's code: the cleaned points and
    the families tried."""
    return key_of(f"{xs!r}\n{ys!r}\n{names!r}")


def kept_fit(
    xs: Series,
    ys: Series,
    names: tuple[str, ...],
    fit: Callable[[Series, Series, tuple[str, ...]], FitResult | None],
) -> FitResult | None:
    """`fit(xs, ys, names)`, read from where fits are kept when it was made before (and kept
    there when it was not)."""
    store = kept(FITS)
    if store is None:
        return fit(xs, ys, names)
    key = fit_key(xs, ys, names)
    value = store.get(key)
    if value == _NONE:
        return None
    made = fit_from_json(value, len(xs))
    if made is not None:
        return made
    made = fit(xs, ys, names)
    store.put(key, _NONE if made is None else fit_to_json(made))
    return made


def fit_to_json(fit: FitResult) -> dict[str, object]:
    """A series' fit as plain JSON values."""
    if fit.shape or fit.past is not None or fit.ceiling is not None:
        raise ValueError("only a series' own fit is kept (no shape, knee or ceiling)")
    return {
        "family": fit.family,
        "param_names": list(fit.param_names),
        "params": list(fit.params),
        "stderr": list(fit.stderr),
        "covariance": [list(row) for row in fit.covariance],
        "n_points": fit.n_points,
        "rmse_rel": fit.rmse_rel,
        "r_squared": fit.r_squared,
        "loo_mape_pct": fit.loo_mape_pct,
        "x_min": fit.x_min,
        "x_max": fit.x_max,
        "chosen_reason": fit.chosen_reason,
    }


def fit_from_json(value: object, n_points: int) -> FitResult | None:
    """A kept fit of a series of `n_points` back, or None for anything that is not exactly what
    fit_to_json writes (a damaged or foreign file is fitted again)."""
    from planner.fitting.fit import FitResult  # noqa: PLC0415 (fit.py imports this module)

    if not isinstance(value, dict) or not _well_formed(value, n_points):
        return None
    return FitResult(
        family=value["family"],
        param_names=tuple(value["param_names"]),
        params=tuple(float(v) for v in value["params"]),
        stderr=tuple(float(v) for v in value["stderr"]),
        covariance=tuple(tuple(float(v) for v in row) for row in value["covariance"]),
        n_points=n_points,
        rmse_rel=float(value["rmse_rel"]),
        r_squared=float(value["r_squared"]),
        loo_mape_pct=None if value["loo_mape_pct"] is None else float(value["loo_mape_pct"]),
        x_min=float(value["x_min"]),
        x_max=float(value["x_max"]),
        chosen_reason=value["chosen_reason"],
    )


def _well_formed(value: dict[str, object], n_points: int) -> bool:
    if set(value) != _FIELDS:
        return False
    family = FAMILIES.get(value["family"]) if isinstance(value["family"], str) else None
    names, params, cov = value["param_names"], value["params"], value["covariance"]
    if family is None or not isinstance(names, list) or tuple(names) != family.param_names:
        return False
    width = len(params) if isinstance(params, list) else -1
    loo = value["loo_mape_pct"]
    reason = value["chosen_reason"]
    return (
        width > 0
        and finite_reals(params)
        and finite_reals(value["stderr"], width)
        and isinstance(cov, list)
        and len(cov) == width
        and all(finite_reals(row, width) for row in cov)
        and type(value["n_points"]) is int
        and value["n_points"] == n_points
        and finite_reals([value["rmse_rel"], value["r_squared"], value["x_min"], value["x_max"]])
        and (loo is None or finite_reals([loo]))
        and isinstance(reason, str)
        and len(reason) <= MAX_REASON
    )
