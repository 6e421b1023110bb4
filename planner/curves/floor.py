"""A measured curve as a bound on a projection: a GPU with at least every resource of another
never serves the same deployment with less throughput or more latency (planner.physics.
dominance), so a projection onto it is floored by the other's measurements, its points and
every error draw the plan sizes on (planner.sizing.sla).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from planner.curves.load import LATENCY_ATTRS, CurvePoint, LoadCurve

Array = npt.NDArray[np.float64]
_LATENCIES = frozenset(attr for stats in LATENCY_ATTRS.values() for attr in stats.values())
_BOUNDED = ("output_tok_s", *sorted(_LATENCIES))


def floor_values(floor: Sequence[CurvePoint], attr: str, loads: Array) -> Array:
    """The bound's `attr` at each load: log-log interpolation between its measured levels, nan
    outside them (no bound is claimed where the bound itself was not measured)."""
    pairs = sorted(
        (p.concurrency, value)
        for p in floor
        if (value := getattr(p, attr, None)) is not None and value > 0 and p.concurrency > 0
    )
    out = np.full(loads.shape, np.nan)
    if not pairs:
        return out
    xs = np.log([c for c, _ in pairs])
    ys = np.log([v for _, v in pairs])
    with np.errstate(divide="ignore", invalid="ignore"):
        at = np.log(loads)
    inside = (at >= xs[0] - 1e-9) & (at <= xs[-1] + 1e-9)
    out[inside] = np.exp(np.interp(at[inside], xs, ys))
    return out


def bounded(values: Array, floor: Array, attr: str) -> Array:
    """`values` kept on the right side of the bound: throughput never below it, a latency never
    above it (nan bound: no change)."""
    if attr == "output_tok_s":
        return np.where(np.isnan(floor), values, np.fmax(values, floor))
    if attr in _LATENCIES:
        return np.where(np.isnan(floor), values, np.fmin(values, floor))
    return values


def floored(curve: LoadCurve, floor: LoadCurve) -> LoadCurve:
    """`curve` (a projection) never behind `floor` (a measured curve of a GPU it dominates), at
    its points and in the draws of its plan; the flag names the bound when it moved a point."""
    loads = np.array(curve.concurrencies(), dtype=np.float64)
    moved = False
    points = list(curve.points)
    for attr in _BOUNDED:
        bound = floor_values(floor.points, attr, loads)
        for i, point in enumerate(points):
            value = getattr(point, attr)
            if value is None or np.isnan(bound[i]):
                continue
            kept = float(bounded(np.array([value]), bound[i : i + 1], attr)[0])
            if kept != value:
                points[i] = replace(point, **{attr: kept})
                moved = True
    flag = (
        f"never behind the measured {floor.key.gpu} curve of the same deployment (a GPU with "
        "at least its bandwidth, FLOPS and memory)"
    )
    flags = (*curve.flags, flag) if moved else curve.flags
    return replace(curve, points=tuple(points), floor=floor.points, flags=flags)
