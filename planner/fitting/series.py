"""Which measured series of a curve feeds each fit slot: the statistic wanted first (a p99 for
TTFT p99), then the fallbacks a source may only have (an unstated statistic, a mean), and the
values of one CurvePoint attribute as arrays.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from planner.curves.load import CurvePoint
from planner.fitting.families import Array
from planner.fitting.family_fit import MIN_FIT_POINTS

__all__ = ["SERIES", "SERIES_TEXT", "pick_series", "series", "series_attr"]

SERIES: dict[str, tuple[tuple[str, str], ...]] = {
    # A mean TTFT may answer for the median (flagged below), never for the p99.
    "ttft_p50": (("p50", "p50_ttft_ms"), ("unstated", "ttft_ms"), ("mean", "mean_ttft_ms")),
    "ttft_p99": (("p99", "p99_ttft_ms"), ("unstated", "ttft_ms")),
    "tpot": (("p99", "p99_tpot_ms"), ("unstated", "tpot_ms"), ("p50", "p50_tpot_ms")),
    "e2e_p99": (("p99", "p99_e2e_ms"),),
}
SERIES_TEXT = {
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
    return next((attr for s, attr in SERIES[slot] if s == stat), None)


def pick_series(points: Sequence[CurvePoint], slot: str) -> str | None:
    """The statistic to fit: the stated one when it has enough points, else the fallbacks."""
    options = SERIES[slot]
    counts = [(stat, len(series(points, attr)[0])) for stat, attr in options]
    enough = next((stat for stat, count in counts if count >= MIN_FIT_POINTS), None)
    return enough or next((stat for stat, count in counts if count > 0), None)
