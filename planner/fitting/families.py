"""Curve families: throughput T(c) and latency y(c) vs concurrency, with Jacobians and starts.

Throughput: the step-time law c/(a + b c), its c^g extension, a sharper saturation knee, a hard
concurrency cap (max batch) and a saturating exponential. Latency: linear, power, an open-loop
queueing blow-up and a closed-loop queue past a batch cap; TPOT also a line that flattens at a
batch cap. Each family knows its parameter range.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
Model = Callable[..., Array]


@dataclass(frozen=True, slots=True)
class Family:
    """A model family: function, Jacobian, start values and physical parameter range."""

    name: str
    param_names: tuple[str, ...]
    func: Model
    jac: Model
    init: Callable[[Array, Array], Array | None]
    valid: Callable[[Array, float], bool]


def _interpolated(c: Array, *knots: float) -> Array:
    """Piecewise-linear in log c through (c_i, y_i) knots (first half c, second half y); flat
    outside them."""
    n = len(knots) // 2
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(np.maximum(np.asarray(c, dtype=np.float64), 1e-12))
    return np.asarray(np.interp(logs, np.log(np.asarray(knots[:n])), knots[n:]), dtype=np.float64)


def _interpolated_jac(c: Array, *knots: float) -> Array:
    """No fitted parameters: the knots are the measurements, so no parameter spread."""
    return np.zeros((len(np.atleast_1d(c)), len(knots)), dtype=np.float64)


def _columns(*columns: Array) -> Array:
    """Jacobian (n, p) from its columns (np.stack is several times slower on tiny arrays)."""
    return np.array(columns, dtype=np.float64).T


def _step(c: Array, a: float, b: float) -> Array:
    return c / (a + b * c)


def _step_jac(c: Array, a: float, b: float) -> Array:
    d = a + b * c
    return _columns(-c / d**2, -(c**2) / d**2)


def _step_power(c: Array, a: float, b: float, g: float) -> Array:
    return c / (a + b * c**g)


def _step_power_jac(c: Array, a: float, b: float, g: float) -> Array:
    cg = c**g
    d2 = (a + b * cg) ** 2
    return _columns(-c / d2, -c * cg / d2, -c * b * cg * np.log(c) / d2)


def _saturating(c: Array, t_max: float, c0: float) -> Array:
    return t_max * (1.0 - np.exp(-c / c0))


def _saturating_jac(c: Array, t_max: float, c0: float) -> Array:
    e = np.exp(-c / c0)
    return _columns(1.0 - e, -t_max * e * c / c0**2)


def _knee(c: Array, a: float, b: float, n: float) -> Array:
    # Smooth min of the single-stream line c/a and the ceiling 1/b; n = 1 is the step-time law.
    scale: Array = (a**n + (b * c) ** n) ** (1.0 / n)
    return c / scale


def _knee_jac(c: Array, a: float, b: float, n: float) -> Array:
    bc = b * c
    u = a**n + bc**n
    t = c * u ** (-1.0 / n)
    common = -c * u ** (-1.0 / n - 1.0)
    d_n = t * (np.log(u) / n**2 - (a**n * np.log(a) + bc**n * np.log(bc)) / (n * u))
    return _columns(common * a ** (n - 1.0), common * c * bc ** (n - 1.0), d_n)


def _cap(c: Array, a: float, b: float, c_cap: float) -> Array:
    # The engine batches at most c_cap streams and queues the rest: throughput is flat beyond.
    return _step(np.minimum(c, c_cap), a, b)


def _cap_jac(c: Array, a: float, b: float, c_cap: float) -> Array:
    capped = c >= c_cap
    eff = np.minimum(c, c_cap)
    d = a + b * eff
    return _columns(-eff / d**2, -(eff**2) / d**2, np.where(capped, a / d**2, 0.0))


def _linear(c: Array, y0: float, k: float) -> Array:
    return y0 + k * c


def _linear_jac(c: Array, y0: float, k: float) -> Array:
    return _columns(np.ones_like(c), c)


def _power(c: Array, y0: float, k: float, g: float) -> Array:
    return y0 + k * c**g


def _power_jac(c: Array, y0: float, k: float, g: float) -> Array:
    cg = c**g
    return _columns(np.ones_like(c), cg, k * cg * np.log(c))


def _queueing(c: Array, y0: float, k: float, inv_c_sat: float) -> Array:
    # Past saturation (c >= 1/inv_c_sat) the queue grows without bound: inf, not a negative time.
    d = 1.0 - inv_c_sat * c
    return np.where(d > 0, y0 + k * c / np.where(d > 0, d, 1.0), np.inf)


def _queueing_jac(c: Array, y0: float, k: float, inv_c_sat: float) -> Array:
    d = 1.0 - inv_c_sat * c
    return _columns(np.ones_like(c), c / d, k * c**2 / d**2)


def _queue_cap(c: Array, y0: float, k: float, w: float, c_cap: float) -> Array:
    # Closed loop past a batch cap: each stream beyond c_cap waits for a slot, so the wait grows
    # linearly with c (about (c - c_cap) x request time / c_cap) and never flattens.
    return y0 + k * c + w * np.maximum(c - c_cap, 0.0)


def _queue_cap_jac(c: Array, y0: float, k: float, w: float, c_cap: float) -> Array:
    over = c > c_cap
    return _columns(np.ones_like(c), c, np.where(over, c - c_cap, 0.0), np.where(over, -w, 0.0))


def _linear_cap(c: Array, y0: float, k: float, c_cap: float) -> Array:
    # TPOT of an engine that batches at most c_cap streams: the step stops growing at the cap
    # (the rest wait for a slot, which is TTFT, not TPOT).
    return y0 + k * np.minimum(c, c_cap)


def _linear_cap_jac(c: Array, y0: float, k: float, c_cap: float) -> Array:
    capped = c >= c_cap
    return _columns(np.ones_like(c), np.minimum(c, c_cap), np.where(capped, k, 0.0))


def _weighted_fit(design: Array, y: Array) -> tuple[Array, float]:
    """Coefficients minimising relative residuals (weights 1/y) and their sum of squares."""
    scaled = design / y[:, None]
    coef, *_ = np.linalg.lstsq(scaled, np.ones_like(y), rcond=None)
    return np.asarray(coef, dtype=np.float64), float(np.sum((scaled @ coef - 1.0) ** 2))


def _cap_candidates(c: Array, above: int) -> Array:
    """Trial caps midway (geometrically) between measured levels, with at least two levels
    below and `above` levels above."""
    levels = np.unique(c)
    return np.sqrt(levels[1 : len(levels) - above] * levels[2 : len(levels) - above + 1])


def _weighted_line(x: Array, y: Array) -> tuple[float, float]:
    """Intercept and slope minimising relative residuals (weights 1/y)."""
    (intercept, slope), _ = _weighted_fit(np.stack([np.ones_like(x), x], axis=1), y)
    return float(intercept), float(slope)


def _step_init(c: Array, t: Array) -> Array | None:
    # c/T = a + b c is linear: its relative-residual line is the start point.
    a, b = _weighted_line(c, c / t)
    if a <= 0:
        a = float(np.min(c / t))
    return np.array([a, max(b, 1e-12)])


def _step_power_init(c: Array, t: Array) -> Array | None:
    start = _step_init(c, t)
    return None if start is None else np.array([start[0], start[1], 1.0])


def _saturating_init(c: Array, t: Array) -> Array | None:
    t_max = float(np.max(t)) * 1.2
    ratio = np.clip(t / t_max, 1e-6, 1 - 1e-6)
    c0 = float(np.median(-c / np.log1p(-ratio)))
    return np.array([t_max, max(c0, 1e-6)])


def _knee_init(c: Array, t: Array) -> Array | None:
    start = _step_init(c, t)
    return None if start is None else np.array([start[0], start[1], 2.0])


def _cap_init(c: Array, t: Array) -> Array | None:
    """Best step-time line below each trial cap, with the capped levels at its value."""
    best: tuple[float, Array] | None = None
    for c_cap in _cap_candidates(c, above=1):
        below = c < c_cap
        start = _step_init(c[below], t[below])
        if start is None:
            continue
        params = np.array([start[0], start[1], c_cap])
        with np.errstate(all="ignore"):
            sse = float(np.sum((_cap(c, *params) / t - 1.0) ** 2))
        if best is None or sse < best[0]:
            best = (sse, params)
    return None if best is None else best[1]


def _linear_init(c: Array, y: Array) -> Array | None:
    return np.array(_weighted_line(c, y))


def _power_init(c: Array, y: Array) -> Array | None:
    y0, k = _weighted_line(c, y)
    return np.array([max(y0, 0.5 * float(np.min(y))), max(k, 1e-9), 1.0])


def _queueing_init(c: Array, y: Array) -> Array | None:
    inv_c_sat = 0.5 / float(np.max(c))
    y0, k = _weighted_line(c / (1.0 - inv_c_sat * c), y)
    return np.array([y0, max(k, 1e-9), inv_c_sat])


def _queue_cap_init(c: Array, y: Array) -> Array | None:
    """Exact relative least squares for y0, k, w at each trial cap; the best is the start."""
    best: tuple[float, Array] | None = None
    for c_cap in _cap_candidates(c, above=2):
        design = np.stack([np.ones_like(c), c, np.maximum(c - c_cap, 0.0)], axis=1)
        coef, sse = _weighted_fit(design, y)
        if best is None or sse < best[0]:
            best = (sse, np.array([max(coef[0], 0.0), max(coef[1], 0.0), coef[2], c_cap]))
    return None if best is None else best[1]


def _linear_cap_init(c: Array, y: Array) -> Array | None:
    """Exact relative least squares for y0, k at each trial cap (two levels or more above it)."""
    best: tuple[float, Array] | None = None
    for c_cap in _cap_candidates(c, above=2):
        design = np.stack([np.ones_like(c), np.minimum(c, c_cap)], axis=1)
        coef, sse = _weighted_fit(design, y)
        if best is None or sse < best[0]:
            best = (sse, np.array([max(coef[0], 0.0), max(coef[1], 1e-9), c_cap]))
    return None if best is None else best[1]


def _positive_params(params: Array, x_max: float) -> bool:
    return bool(params[0] > 0 and params[1] >= 0)


def _step_power_valid(params: Array, x_max: float) -> bool:
    return _positive_params(params, x_max) and 0.2 <= params[2] <= 4.0


def _knee_valid(params: Array, x_max: float) -> bool:
    return bool(params[0] > 0 and params[1] > 0 and 0.5 <= params[2] <= 8.0)


def _cap_valid(params: Array, x_max: float) -> bool:
    return _positive_params(params, x_max) and 0 < params[2] < x_max


def _saturating_valid(params: Array, x_max: float) -> bool:
    return bool(params[0] > 0 and params[1] > 0)


def _linear_valid(params: Array, x_max: float) -> bool:
    return bool(params[0] + min(params[1], 0.0) * x_max > 0)


def _power_valid(params: Array, x_max: float) -> bool:
    return bool(params[0] >= 0 and params[1] >= 0 and 0.1 <= params[2] <= 8.0)


def _queueing_valid(params: Array, x_max: float) -> bool:
    return bool(params[0] >= 0 and params[1] >= 0 and 0 <= params[2] * x_max < 0.999)


def _queue_cap_valid(params: Array, x_max: float) -> bool:
    y0, k, w, c_cap = params
    return bool(y0 >= 0 and k >= 0 and w > 0 and 0 < c_cap < x_max)


def _linear_cap_valid(params: Array, x_max: float) -> bool:
    y0, k, c_cap = params
    return bool(y0 >= 0 and k > 0 and 0 < c_cap < x_max)


THROUGHPUT_FAMILIES: tuple[str, ...] = (
    "step-time",
    "saturating",
    "step-time-power",
    "step-time-knee",
    "step-time-cap",
)
LATENCY_FAMILIES: tuple[str, ...] = ("linear", "power", "queueing", "queue-cap")
# TPOT may also flatten at the engine's batch cap; TTFT never does (past the cap it queues).
TPOT_FAMILIES: tuple[str, ...] = (*LATENCY_FAMILIES, "linear-cap")
# The fallback when no family's parameters are identifiable
# (planner.fitting.family_fit.interpolation).
INTERPOLATED = "interpolated"
FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        Family("step-time", ("a", "b"), _step, _step_jac, _step_init, _positive_params),
        Family(
            "step-time-power",
            ("a", "b", "g"),
            _step_power,
            _step_power_jac,
            _step_power_init,
            _step_power_valid,
        ),
        Family(
            "saturating",
            ("t_max", "c0"),
            _saturating,
            _saturating_jac,
            _saturating_init,
            _saturating_valid,
        ),
        Family("step-time-knee", ("a", "b", "n"), _knee, _knee_jac, _knee_init, _knee_valid),
        Family("step-time-cap", ("a", "b", "c_cap"), _cap, _cap_jac, _cap_init, _cap_valid),
        Family("linear", ("y0", "k"), _linear, _linear_jac, _linear_init, _linear_valid),
        Family("power", ("y0", "k", "g"), _power, _power_jac, _power_init, _power_valid),
        Family(
            "queueing",
            ("y0", "k", "inv_c_sat"),
            _queueing,
            _queueing_jac,
            _queueing_init,
            _queueing_valid,
        ),
        Family(
            INTERPOLATED,
            (),
            _interpolated,
            _interpolated_jac,
            lambda c, y: None,
            lambda params, x_max: True,
        ),
        Family(
            "linear-cap",
            ("y0", "k", "c_cap"),
            _linear_cap,
            _linear_cap_jac,
            _linear_cap_init,
            _linear_cap_valid,
        ),
        Family(
            "queue-cap",
            ("y0", "k", "w", "c_cap"),
            _queue_cap,
            _queue_cap_jac,
            _queue_cap_init,
            _queue_cap_valid,
        ),
    )
}


def family_formula(name: str) -> str:
    """The formula of a family, for reports."""
    return {
        "step-time": "T(c) = c / (a + b c)",
        "step-time-power": "T(c) = c / (a + b c^g)",
        "step-time-knee": "T(c) = c / (a^n + (b c)^n)^(1/n)",
        "step-time-cap": "T(c) = m / (a + b m), m = min(c, c_cap)",
        "saturating": "T(c) = t_max (1 - exp(-c / c0))",
        "linear": "y(c) = y0 + k c",
        "power": "y(c) = y0 + k c^g",
        "queueing": "y(c) = y0 + k c / (1 - c * inv_c_sat)",
        "queue-cap": "y(c) = y0 + k c + w max(c - c_cap, 0)",
        "linear-cap": "y(c) = y0 + k min(c, c_cap)",
        INTERPOLATED: "monotone interpolation of the measured points in log c, flat outside",
    }[name]
