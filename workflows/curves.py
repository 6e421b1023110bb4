"""What the shells show of measured curves: their fits (the Curves page, `capplan fit`), the
physics check of each, the workloads they share (runs within tokenisation rounding of each
other), the points a chart draws, and how an SLA target reads. The planner computes them; the
shells call them here (tests/test_layering.py)."""

from __future__ import annotations

from collections.abc import Sequence

from planner.curves.load import LoadCurve
from planner.curves.workload_groups import (
    NOT_STATED,
    TOLERANCE_TEXT,
    WorkloadGroup,
    curve_workloads,
    group_workloads,
)
from planner.fitting.fit import CurveFit, fit_curve
from planner.fitting.series import series, series_attr
from planner.physics.roofline import check_curve
from planner.sizing.sla import target_text

__all__ = [
    "NOT_STATED",
    "TOLERANCE_TEXT",
    "WorkloadGroup",
    "check_curve",
    "curve_workloads",
    "fit_curve",
    "fits_of",
    "group_workloads",
    "series",
    "series_attr",
    "target_text",
]


def fits_of(curves: Sequence[LoadCurve]) -> list[CurveFit]:
    """The fit of each curve, in order."""
    return [fit_curve(curve) for curve in curves]
