"""Shared throughput shape: what sibling curves of one deployment family say a smooth law misses.

Some engines bend away from every smooth throughput law at the same concurrencies on every curve
(vLLM on H200 in the silicon sample sags about 9% at 32 streams and overshoots 5-7% at 64, at
TP 1-4 with ISL/OSL 1024/1024 and 1024/8192). A curve's own fit cannot learn that from its own
points without memorising them, but its siblings — curves of the same model, engine, engine
version, GPU, precision and ISL/OSL (the batch mix behind the bend) — can: the shape is the
per-concurrency median of their measured / fitted output tok/s.
A curve is corrected only by the shape of its siblings (never its own residuals), at the
concurrencies at least MIN_SHAPE_CURVES of them measured, interpolated in log concurrency between
those and 1.0 outside them; the correction is an estimate and says so in the curve's flags.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from planner.curves.load import LoadCurve
from planner.fitting.families import Array
from planner.fitting.fit import CurveFit, fit_curve, fit_throughput, shape_factor
from planner.fitting.series import series
from planner.physics.projection import PROJECTED

# A median of three ratios ignores one odd sibling entirely; the median of two is their mean, so
# one odd curve would set half the correction. Three is also what the silicon sample's smallest
# families (4 curves, TP 1-8, per engine x GPU x workload) leave when one curve is held out.
MIN_SHAPE_CURVES = 3
# Siblings a plan fits for a group's shape (the newest runs). On the 10,000-run bench store (up to
# 190 repeat runs per group) it left both docs/scenarios plans' options and costs unchanged and
# moved no shape factor by more than 2e-6, and cut the first plan's fitting from ~2.7 s to ~0.4 s.
MAX_SHAPE_SIBLINGS = 24

# Model, engine, engine version, GPU, precision, ISL, OSL.
GroupKey = tuple[str, str, str | None, str | None, str | None, int | None, int | None]


@dataclass(frozen=True, slots=True)
class Shape:
    """Median measured / fitted output tok/s per concurrency over a group's curves."""

    group: GroupKey
    concurrencies: tuple[float, ...]
    factors: tuple[float, ...]
    curves: tuple[int, ...]  # curves behind each factor

    def factor(self, x: Array | Sequence[float]) -> Array:
        """Correction at x: log-c interpolation between the shared concurrencies, 1.0 outside."""
        return shape_factor(self.pairs(), x)

    def pairs(self) -> tuple[tuple[float, float], ...]:
        """(concurrency, factor) pairs, the form FitResult.shape stores."""
        return tuple(zip(self.concurrencies, self.factors, strict=True))

    def text(self) -> str:
        """One line for flags, e.g. 'x0.917 at 32 streams (3 curves), ...'."""
        return ", ".join(
            f"x{f:.3f} at {c:g} streams ({n} curves)"
            for c, f, n in zip(self.concurrencies, self.factors, self.curves, strict=True)
        )


def group_key(curve: LoadCurve) -> GroupKey:
    """The family a curve shares its shape with: model, engine, engine version, GPU, precision
    and workload (ISL/OSL)."""
    key = curve.key
    return (key.model_id, key.engine, key.engine_version, key.gpu, key.precision, key.isl, key.osl)


def shared_shapes(
    fits: Sequence[CurveFit], min_curves: int = MIN_SHAPE_CURVES
) -> dict[GroupKey, Shape]:
    """Per group, the median measured / fitted output tok/s at each concurrency that at least
    `min_curves` of its curves measured; groups with no such concurrency are left out."""
    members: dict[GroupKey, list[_Member]] = defaultdict(list)
    for fit in fits:
        members[group_key(fit.curve)].append(_member(fit))
    shapes = {group: _median_shape(group, rows, min_curves) for group, rows in members.items()}
    return {group: shape for group, shape in shapes.items() if shape is not None}


def shape_for(
    curve: LoadCurve, fits: Sequence[CurveFit], min_curves: int = MIN_SHAPE_CURVES
) -> Shape | None:
    """The shape of `curve`'s siblings in `fits` — never `curve` itself or another curve of the
    same run — or None: no siblings share enough concurrencies, or the curve is projected (its
    points come from another GPU, so that GPU's siblings would describe it)."""
    group = group_key(curve)
    rows = [_member(f) for f in fits if group_key(f.curve) == group]
    return _sibling_shape(curve, rows, min_curves)


def apply_shape(fit: CurveFit, shape: Shape | None) -> CurveFit:
    """`fit` with its throughput corrected by `shape` (replacing any earlier correction) and a
    flag saying so; unchanged without a shape or a throughput fit."""
    if shape is None or fit.throughput is None:
        return fit
    flag = (
        f"output tok/s smoothed to the shape its related curves share ({_group_text(shape)}): "
        f"{shape.text()}; estimated from their measured / fitted median, 1.0 outside"
    )
    return replace(
        fit,
        throughput=replace(fit.throughput, shape=shape.pairs()),
        flags=(*fit.flags, flag),
    )


def shaped_fitter(
    curves: Sequence[LoadCurve], targets: Sequence[LoadCurve]
) -> Callable[[LoadCurve], CurveFit]:
    """fit_curve plus each curve's sibling shape, for `targets`; the siblings are the curves and
    targets (a workload-adjusted target has only other targets at its ISL/OSL) of the targets'
    groups, whose throughput alone is fitted for the shapes (cached by planner.fitting.fit),
    once."""
    wanted = {group_key(t) for t in targets}
    members: dict[GroupKey, list[_Member]] = defaultdict(list)
    pool = dict.fromkeys([*_newest_siblings(curves, wanted), *targets])
    for curve in pool:
        throughput = fit_throughput(*series(curve.points, "output_tok_s"))
        members[group_key(curve)].append(_member(CurveFit(curve, throughput, None, None, None)))

    def fitter(curve: LoadCurve) -> CurveFit:
        shape = _sibling_shape(curve, members.get(group_key(curve), []), MIN_SHAPE_CURVES)
        return apply_shape(fit_curve(curve), shape)

    return fitter


def _newest_siblings(curves: Sequence[LoadCurve], wanted: set[GroupKey]) -> list[LoadCurve]:
    """The curves of the wanted groups, at most MAX_SHAPE_SIBLINGS per group (the newest runs)."""
    by_group: dict[GroupKey, list[LoadCurve]] = defaultdict(list)
    for curve in curves:
        if (group := group_key(curve)) in wanted:
            by_group[group].append(curve)
    kept: list[LoadCurve] = []
    for group_curves in by_group.values():
        newest = sorted(group_curves, key=lambda c: -1 if c.run_id is None else c.run_id)
        kept.extend(newest[-MAX_SHAPE_SIBLINGS:])
    return kept


@dataclass(frozen=True, slots=True)
class _Member:
    """One curve of a group and its measured / fitted output tok/s per concurrency."""

    curve: LoadCurve
    ratios: dict[float, float]


def _member(fit: CurveFit) -> _Member:
    """Measured / fitted output tok/s at each measured level of a fitted curve (its plain fit)."""
    if fit.throughput is None:
        return _Member(fit.curve, {})
    c, t = series(fit.curve.points, "output_tok_s")
    fitted = replace(fit.throughput, shape=()).eval(c)
    ok = np.isfinite(fitted) & (fitted > 0) & (t > 0)
    ratios = dict(zip(c[ok].tolist(), (t[ok] / fitted[ok]).tolist(), strict=True))
    return _Member(fit.curve, ratios)


def _sibling_shape(curve: LoadCurve, rows: Sequence[_Member], min_curves: int) -> Shape | None:
    if curve.provenance == PROJECTED:
        return None
    siblings = [row for row in rows if not _same_source(row.curve, curve)]
    return _median_shape(group_key(curve), siblings, min_curves)


def _median_shape(group: GroupKey, rows: Sequence[_Member], min_curves: int) -> Shape | None:
    by_c: dict[float, list[float]] = defaultdict(list)
    for row in rows:
        for c, ratio in row.ratios.items():
            by_c[c].append(ratio)
    kept = sorted((c, vs) for c, vs in by_c.items() if len(vs) >= min_curves)
    if not kept:
        return None
    return Shape(
        group,
        tuple(c for c, _ in kept),
        tuple(float(np.median(vs)) for _, vs in kept),
        tuple(len(vs) for _, vs in kept),
    )


def _same_source(a: LoadCurve, b: LoadCurve) -> bool:
    """The same curve, or two curves of one run (an adjusted curve and its source)."""
    return a == b or (a.run_id is not None and a.run_id == b.run_id)


def _group_text(shape: Shape) -> str:
    _, engine, version, gpu, precision, isl, osl = shape.group
    workload = f"ISL/OSL {isl or '?'}/{osl or '?'}"
    return " ".join(p for p in (engine, version, "on", gpu or "GPU?", precision, workload) if p)
