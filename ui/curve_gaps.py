"""What the Curves page cannot fit, drawn and said (issue 32 item 5): request-rate levels by their
offered rate, the one point of a one-level run with why it has no curve, and why a curve has no
physics ceiling to draw against (pure: fits in, figures and sentences out; no streamlit here)."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from planner.curves.load import CurvePoint
from planner.fitting.fit import CurveFit
from planner.physics.roofline import PhysicsCheck
from reports import figures
from reports.names import curve_name

RATE_X_TITLE = "offered request rate (requests/s)"
RATE_NOTE = (
    "Request-rate (open-loop) levels, drawn by the rate the client offered, point to point, never "
    "fitted: a fitted curve is closed-loop, by concurrency, and the planner reads rate levels "
    "through its serving model. For a fitted curve, measure at fixed concurrencies (vllm bench "
    "serve --max-concurrency N, e.g. 1, 4, 16, 64)."
)
# The latency series a rate level may carry, the median first (the unstated one as a fallback).
_TTFT_ATTRS = (("p50_ttft_ms", "TTFT p50"), ("p99_ttft_ms", "TTFT p99"), ("ttft_ms", "TTFT"))


def concurrency_fits(fits: Sequence[CurveFit]) -> list[CurveFit]:
    """The fits with concurrency levels: what the concurrency charts can draw."""
    return [fit for fit in fits if fit.curve.points]


def rate_fits(fits: Sequence[CurveFit]) -> list[CurveFit]:
    """The fits with request-rate levels: what the by-rate charts draw."""
    return [fit for fit in fits if fit.curve.rate_points]


def unfitted_notes(fits: Sequence[CurveFit]) -> list[str]:
    """One sentence per curve whose points are drawn without a fitted line, saying why."""
    notes = []
    for fit in fits:
        points = fit.curve.points
        if not points or fit.throughput is not None:
            continue
        levels = ", ".join(f"{point.concurrency:g}" for point in points)
        run = f"run {fit.curve.run_id}"
        if len(points) == 1:
            notes.append(
                f"{run} measured one concurrency level ({levels}): its point is drawn, but a "
                "curve needs two or more levels. Measure a few more concurrencies (e.g. 1, 4, "
                "16, 64) to draw its curve and plan on it."
            )
        else:
            notes.append(
                f"{run}: no curve could be fitted through its levels ({levels}); its points are "
                "drawn (its flags below say why)."
            )
    return notes


def no_ceiling_notes(checks: Sequence[tuple[CurveFit, PhysicsCheck]]) -> list[str]:
    """Why a shown curve has no point on the ceiling chart (its notes: an unknown model...)."""
    notes = []
    for fit, check in checks:
        if any(point.output_pct_of_ceiling is not None for point in check.points):
            continue
        why = "; ".join(check.notes) or "no measured throughput to compare"
        notes.append(f"run {fit.curve.run_id}: no physics ceiling to draw against: {why}")
    return notes


def rate_throughput_figure(fits: Sequence[CurveFit]) -> go.Figure:
    """Output tok/s of each run's request-rate levels by offered rate (no fit)."""
    figure = figures.figure(
        "Output throughput by offered request rate",
        RATE_X_TITLE,
        "output tok/s (all streams)",
        figures.SCREEN_LAYOUT,
    )
    for index, fit in enumerate(fits):
        _add(figure, fit, index, ("output_tok_s", "output tok/s"))
    return figures.escaped_labels(figure)


def rate_ttft_figure(fits: Sequence[CurveFit]) -> go.Figure:
    """TTFT of each run's request-rate levels by offered rate, log scale (no fit)."""
    figure = figures.figure(
        "Time to first token by offered request rate",
        RATE_X_TITLE,
        "TTFT (ms)",
        figures.SCREEN_LAYOUT,
    )
    figure.update_yaxes(type="log")
    for index, fit in enumerate(fits):
        for series in _TTFT_ATTRS[:2] if _has(fit, "p50_ttft_ms") else _TTFT_ATTRS[2:]:
            _add(figure, fit, index, series)
    return figures.escaped_labels(figure)


def _has(fit: CurveFit, attr: str) -> bool:
    return any(getattr(point, attr) is not None for point in fit.curve.rate_points)


def _add(figure: go.Figure, fit: CurveFit, index: int, series: tuple[str, str]) -> None:
    attr, what = series
    points: list[CurvePoint] = [p for p in fit.curve.rate_points if getattr(p, attr) is not None]
    if not points:
        return
    run = f"run {fit.curve.run_id} · " if fit.curve.run_id is not None else ""
    figure.add_trace(
        go.Scatter(
            x=[point.concurrency for point in points],  # a rate level's rate, in requests/s
            y=[getattr(point, attr) for point in points],
            mode="lines+markers",
            name=f"{run}{curve_name(fit.curve)} · {what}",
            marker={"color": figures.PALETTE[index % len(figures.PALETTE)], "size": 8},
            hovertemplate="%{x:g} req/s<br>%{y:,.1f} (" + what + ")",
        )
    )
