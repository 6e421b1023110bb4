"""Plotly figures of fitted curves (pure: planner objects in, figures out; no streamlit here).

Each curve gets its measured points as markers, the fitted line over its measured range, the band
as a filled area, and dashed segments where the shared axis runs past what that curve measured.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from planner.analysis.sensitivity import SensitivityRow
from planner.analysis.uncertainty import PlanRanges
from planner.fitting.fit import CurveFit, FitResult
from planner.physics.roofline import PhysicsCheck
from reports import figures
from reports.client_compare import ClientComparison
from reports.names import curve_name, option_name, provenance_word
from workflows.curves import series, series_attr

GRID_POINTS = 80
PALETTE = figures.PALETTE
Array = NDArray[np.float64]
EXTRAPOLATED_DASH = "dash"
# Per-stream reading speed is T(c)/c: the same fit and band, divided by the concurrency.
Transform = Callable[[Array, Array], Array]


@dataclass(frozen=True, slots=True)
class _Series:
    """One measured series of one curve and the fit drawn through it."""

    name: str
    color: str
    fit: FitResult | None
    xs: Array
    ys: Array
    symbol: str = "circle"
    width: float = 2.0
    kind: str = "measured"  # what the points are: measured, published, projected, adjusted


def _identity(_x: Array, y: Array) -> Array:
    return y


def _per_stream(x: Array, y: Array) -> Array:
    return y / x


def throughput_figure(fits: Sequence[CurveFit]) -> go.Figure:
    """Aggregate output tok/s vs concurrency, one colour per engine x GPU x TP curve."""
    grid = concurrency_grid(fits)
    figure = _figure("Output throughput", "output tok/s (all streams)")
    for index, fit in enumerate(fits):
        xs, ys = series(fit.curve.points, "output_tok_s")
        spec = _Series(_label(fit), _color(index), fit.throughput, xs, ys, kind=_kind(fit))
        _add_series(figure, spec, grid, _identity)
    return figures.escaped_labels(figure)


def ttft_figure(fits: Sequence[CurveFit]) -> go.Figure:
    """TTFT p50 (circles) and p99 (diamonds, thin) vs concurrency, log scale."""
    grid = concurrency_grid(fits)
    figure = _figure("Time to first token", "TTFT (ms)")
    figure.update_yaxes(type="log")
    for index, fit in enumerate(fits):
        slots = (
            ("ttft_p50", fit.ttft_p50_stat, fit.ttft_p50, "circle", 2.0),
            ("ttft_p99", fit.ttft_p99_stat, fit.ttft_p99, "diamond", 1.2),
        )
        drawn: set[str] = set()
        for slot, stat, result, symbol, width in slots:
            attr = series_attr(slot, stat)
            # Both slots fall back to the same unstated series: draw it once.
            if attr is None or attr in drawn:
                continue
            drawn.add(attr)
            xs, ys = series(fit.curve.points, attr)
            name = f"{_label(fit)} · TTFT {_stat_text(stat)}"
            spec = _Series(name, _color(index), result, xs, ys, symbol, width, _kind(fit))
            _add_series(figure, spec, grid, _identity)
    return figures.escaped_labels(figure)


def stream_speed_figure(fits: Sequence[CurveFit]) -> go.Figure:
    """Per-stream tok/s (what one user reads): T(c)/c, plus 1000/TPOT where TPOT was measured."""
    grid = concurrency_grid(fits)
    figure = _figure("Per-stream speed", "tok/s per stream")
    for index, fit in enumerate(fits):
        xs, ys = series(fit.curve.points, "output_tok_s")
        name = f"{_label(fit)} · T(c)/c"
        spec = _Series(name, _color(index), fit.throughput, xs, ys, kind=_kind(fit))
        _add_series(figure, spec, grid, _per_stream)
        tpot_x, tpot_ms = _tpot_points(fit)
        if tpot_x.size:
            figure.add_trace(
                go.Scatter(
                    x=tpot_x,
                    y=1000.0 / tpot_ms,
                    mode="markers",
                    legendgroup=_label(fit),
                    name=f"{_label(fit)} · 1000/TPOT {_kind(fit)}",
                    marker={"color": _color(index), "symbol": "x", "size": 9},
                    hovertemplate="c=%{x:g}<br>%{y:.1f} tok/s per stream (1000/TPOT, "
                    + _kind(fit)
                    + ")",
                )
            )
    return figures.escaped_labels(figure)


def ceiling_share_figure(checks: Sequence[tuple[CurveFit, PhysicsCheck]]) -> go.Figure:
    """Each measured point's output tok/s as % of its physical ceiling; above 100% is impossible."""
    figure = _figure("Measured throughput as % of the physical ceiling", "% of ceiling")
    figure.add_hline(y=100, line_dash="dot", annotation_text="ceiling (no real run is above it)")
    for index, (fit, check) in enumerate(checks):
        points = [p for p in check.points if p.output_pct_of_ceiling is not None]
        if not points:
            continue
        figure.add_trace(
            go.Scatter(
                x=[p.concurrency for p in points],
                y=[p.output_pct_of_ceiling for p in points],
                mode="lines+markers",
                name=_label(fit),
                marker={"color": _color(index)},
                hovertemplate="c=%{x:g}<br>%{y:.0f}% of the ceiling",
            )
        )
    return figures.escaped_labels(figure)


COST_RANGE_TITLE = (
    "Monthly cost per option: P50 (dot), P10-P90 (bar) and the planned cost (diamond)"
)


LOG_SPREAD = 10.0  # costs further apart than this share a log axis


def cost_range_figure(ranges: PlanRanges) -> go.Figure:
    """Monthly cost per option over the resampled plans: the P50 as a dot with a P10-P90 bar,
    and the cost the plan itself states as a diamond."""
    sized = [o for o in ranges.options if o.total_monthly_cost_usd is not None]
    figure = go.Figure()
    figure.update_layout(
        title=COST_RANGE_TITLE,
        xaxis_title="$ per month",
        margin={"l": 10, "r": 10, "t": 50, "b": 40},
        height=max(260, 40 * len(sized) + 120),
    )
    names = [option_name(o.key) for o in sized]
    costs = [o.total_monthly_cost_usd for o in sized]
    # An infinite percentile means that share of samples misses the SLA: the bar stops at P50.
    p50 = [c.p50 for c in costs if c is not None]
    p10 = [c.p10 if math.isfinite(c.p10) else c.p50 for c in costs if c is not None]
    p90 = [c.p90 if math.isfinite(c.p90) else c.p50 for c in costs if c is not None]
    figure.add_trace(
        go.Scatter(
            x=p50,
            y=names,
            mode="markers",
            name="P50 with its P10-P90 range",
            marker={"size": 10, "color": PALETTE[0]},
            error_x={
                "type": "data",
                "symmetric": False,
                "array": [hi - mid for hi, mid in zip(p90, p50, strict=True)],
                "arrayminus": [mid - lo for mid, lo in zip(p50, p10, strict=True)],
            },
            customdata=[[lo, hi, o.pick_share] for lo, hi, o in zip(p10, p90, sized, strict=True)],
            hovertemplate=(
                "P10 $%{customdata[0]:,.0f} · P50 $%{x:,.0f} · P90 $%{customdata[1]:,.0f}"
                "<br>the pick, or tied with it, in %{customdata[2]:.0%} of samples<extra></extra>"
            ),
        )
    )
    planned = [(o.point_total_monthly_cost_usd, n) for o, n in zip(sized, names, strict=True)]
    shown = [(x, n) for x, n in planned if x is not None]
    figure.add_trace(
        go.Scatter(
            x=[x for x, _ in shown],
            y=[n for _, n in shown],
            mode="markers",
            name="planned (the plan's own cost)",
            marker={"size": 11, "symbol": "diamond-open", "color": PALETTE[1]},
            hovertemplate="planned $%{x:,.0f}<extra></extra>",
        )
    )
    figure.update_yaxes(autorange="reversed")
    figure.update_layout(legend={"orientation": "h", "y": -0.25})
    drawn = [x for x in (*p10, *p90, *(x for x, _ in shown)) if x > 0]
    if drawn and max(drawn) > LOG_SPREAD * min(drawn):
        # One costly option would squeeze the rest into a corner: equal ratios, equal widths.
        figure.update_xaxes(type="log", title_text="$ per month (log scale)")
    return figures.escaped_labels(figure)


def tornado_figure(rows: Sequence[SensitivityRow]) -> go.Figure:
    """Which input moves the recommended option's monthly cost most (input down / up)."""
    shown = [r for r in rows if r.low_change_pct is not None or r.high_change_pct is not None]
    figure = go.Figure()
    figure.update_layout(
        title="What moves the answer: cost change of the recommended option",
        barmode="overlay",
        xaxis_title="% change in monthly cost",
        margin={"l": 10, "r": 10, "t": 50, "b": 40},
        height=max(260, 32 * len(shown) + 120),
    )
    labels = [f"{r.label}{' (choice flips)' if r.flips else ''}" for r in shown]
    for side, values, color in (
        ("input down", [r.low_change_pct for r in shown], PALETTE[0]),
        ("input up", [r.high_change_pct for r in shown], PALETTE[1]),
    ):
        figure.add_trace(
            go.Bar(
                x=[v if v is not None and math.isfinite(v) else None for v in values],
                y=labels,
                orientation="h",
                name=side,
                marker={"color": color},
                hovertemplate="%{y}: %{x:+.1f}%<extra>" + side + "</extra>",
            )
        )
    figure.update_yaxes(autorange="reversed")
    return figures.escaped_labels(figure)


def concurrency_grid(fits: Sequence[CurveFit]) -> Array:
    """Shared x grid: log-spaced over every curve's measured concurrencies, plus those points."""
    measured = [c for fit in fits for c in fit.curve.concurrencies() if c > 0]
    if not measured:
        return np.array([], dtype=np.float64)
    low, high = min(measured), max(measured)
    spaced = np.geomspace(low, high, GRID_POINTS) if high > low else np.array([low])
    return np.unique(np.concatenate([spaced, np.asarray(measured, dtype=np.float64)]))


def _figure(title: str, y_title: str) -> go.Figure:
    made = figures.figure(title, "concurrency (streams in flight)", y_title, figures.SCREEN_LAYOUT)
    made.update_xaxes(type="log")
    return made


def _add_series(
    figure: go.Figure,
    spec: _Series,
    grid: Array,
    transform: Transform,
) -> None:
    if spec.fit is not None:
        _add_fit(figure, spec, spec.fit, grid, transform)
    figure.add_trace(
        go.Scatter(
            x=spec.xs,
            y=transform(spec.xs, spec.ys),
            mode="markers",
            name=f"{spec.name} {spec.kind}",
            legendgroup=spec.name,
            showlegend=spec.fit is None,
            marker={"color": spec.color, "symbol": spec.symbol, "size": 8},
            hovertemplate="c=%{x:g}<br>%{y:,.1f} (" + spec.kind + ")",
        )
    )


def _add_fit(
    figure: go.Figure, spec: _Series, fit: FitResult, grid: Array, transform: Transform
) -> None:
    inside = np.unique(np.clip(grid, fit.x_min, fit.x_max))
    lo, hi = fit.eval_band(inside)
    figure.add_trace(
        go.Scatter(
            x=np.concatenate([inside, inside[::-1]]),
            y=_finite(np.concatenate([transform(inside, hi), transform(inside, lo)[::-1]])),
            fill="toself",
            fillcolor=figures.translucent(spec.color),
            line={"width": 0},
            mode="lines",
            name=f"{spec.name} band",
            legendgroup=spec.name,
            showlegend=False,
            hoverinfo="skip",
        )
    )
    figure.add_trace(
        go.Scatter(
            x=inside,
            y=_finite(transform(inside, fit.eval(inside))),
            mode="lines",
            name=f"{spec.name} fit ({fit.family})",
            legendgroup=spec.name,
            line={"color": spec.color, "width": spec.width},
            hovertemplate="c=%{x:.1f}<br>%{y:,.1f} (fitted)",
        )
    )
    below = np.append(grid[grid < fit.x_min], fit.x_min)
    above = np.insert(grid[grid > fit.x_max], 0, fit.x_max)
    for segment in (below, above):
        if segment.size < 2:
            continue
        figure.add_trace(
            go.Scatter(
                x=segment,
                y=_finite(transform(segment, fit.eval(segment))),
                mode="lines",
                name=f"{spec.name} extrapolated",
                legendgroup=spec.name,
                showlegend=False,
                line={"color": spec.color, "width": spec.width, "dash": EXTRAPOLATED_DASH},
                hovertemplate="c=%{x:.1f}<br>%{y:,.1f} (EXTRAPOLATED)",
            )
        )


def _tpot_points(fit: CurveFit) -> tuple[Array, Array]:
    # The median TPOT is what a typical user sees; the unstated statistic is the fallback.
    for attr in ("p50_tpot_ms", "tpot_ms"):
        xs, ys = series(fit.curve.points, attr)
        keep = ys > 0
        if keep.any():
            return xs[keep], ys[keep]
    return np.array([], dtype=np.float64), np.array([], dtype=np.float64)


def _finite(values: Array) -> list[float | None]:
    # A queueing fit is infinite past saturation; plotly draws a gap for None.
    return [float(v) if np.isfinite(v) else None for v in values]


def _label(fit: CurveFit) -> str:
    run = f"run {fit.curve.run_id} · " if fit.curve.run_id is not None else ""
    return f"{run}{curve_name(fit.curve)}"


def _kind(fit: CurveFit) -> str:
    """What the curve's points are, for the legend: only a measurement is called measured."""
    return provenance_word(fit.curve.provenance)


def _stat_text(stat: str | None) -> str:
    return "(statistic not stated)" if stat in (None, "unstated") else stat


def _color(index: int) -> str:
    return str(PALETTE[index % len(PALETTE)])


def client_comparison_figure(comparison: ClientComparison) -> go.Figure:
    """Output tok/s vs concurrency of one deployment and workload, one trace per tool."""
    figure = _figure(f"Compare the clients: {comparison.title()}", "output tok/s (all streams)")
    for index, trace in enumerate(comparison.traces):
        points = [p for p in trace.points if p.output_tok_s is not None]
        figure.add_trace(
            go.Scatter(
                x=[p.concurrency for p in points],
                y=[p.output_tok_s for p in points],
                mode="lines+markers",
                name=trace.client or trace.tool,
                line={"color": _color(index)},
            )
        )
    return figure
