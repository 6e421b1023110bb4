"""Predictions from a curve's fits: throughput, TTFT p50/p99 and TPOT with their bands at given
concurrencies (the measured value where a series has no fit), reads outside the data marked.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from planner.curves.load import BasisError, CurvePoint
from planner.fitting.families import Array
from planner.fitting.fit import CurveFit, FitResult
from planner.fitting.knee import knee_streams, past_knee
from planner.fitting.series import series, series_attr


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
    # Which statistic each latency series is (p50, p99, unstated, ...): CurveFit.*_stat.
    p50_ttft_stat: str | None = None
    p99_ttft_stat: str | None = None
    tpot_stat: str | None = None
    # Where the numbers come from: the curve's fits (or its exact levels), or the serving model
    # where no fit reads (planner.engine.fill).
    basis: str = "fit"


Triple = tuple[list[float | None], list[float | None], list[float | None]]


def _values(
    fit: FitResult | None, points: Sequence[CurvePoint], attr: str | None, xs: Array
) -> Triple:
    """Central, low and high values at xs: fitted with its band, else the measured value at that
    exact c with no band (None: a run too short to fit says nothing of its own spread, and a
    zero-width band would claim it knows)."""
    if fit is not None:
        lo, hi = fit.eval_band(xs)
        return _floats(fit.eval(xs)), _floats(lo), _floats(hi)
    measured: dict[float, float] = {}
    if attr is not None:
        measured = dict(zip(*(arr.tolist() for arr in series(points, attr)), strict=True))
    exact = [measured.get(float(x)) for x in xs]
    return exact, [None] * len(exact), [None] * len(exact)


def _floats(arr: Array) -> list[float | None]:
    # A queueing family past saturation evaluates to inf; JSON has no inf, so it reads None.
    return [float(v) if math.isfinite(v) else None for v in arr.tolist()]


def predict(
    fit: CurveFit, concurrencies: Sequence[float], streams: int | None = None
) -> list[Prediction]:
    """Fitted throughput and latencies with bands; extrapolated marks reads outside the data.
    Past the streams whose KV cache fits (`streams`, else the curve's own estimate) and the
    measured range, throughput and TPOT stay flat and TTFT queues (planner.fitting.knee)."""
    fit = past_knee(fit, streams if streams is not None else knee_streams(fit))
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
                p50_ttft_stat=fit.ttft_p50_stat,
                p99_ttft_stat=fit.ttft_p99_stat,
                tpot_stat=fit.tpot_stat,
            )
        )
    return out


def _per_stream(total: float | None, concurrency: float) -> float | None:
    return None if total is None or concurrency <= 0 else total / concurrency


_BANDED = (
    ("output_tok_s", "output_tok_s_lo", "output_tok_s_hi", "throughput"),
    ("p50_ttft_ms", "p50_ttft_ms_lo", "p50_ttft_ms_hi", "ttft_p50"),
    ("p99_ttft_ms", "p99_ttft_ms_lo", "p99_ttft_ms_hi", "ttft_p99"),
    ("tpot_ms", "tpot_ms_lo", "tpot_ms_hi", "tpot"),
)


def with_basis_band(
    predictions: Sequence[Prediction], error: BasisError | None
) -> list[Prediction]:
    """The predictions of a derived curve (projected, adjusted, physics-only) with its reach's
    validated error in their 80% bands, in quadrature with the fit's own spread."""
    if error is None:
        return list(predictions)
    out = []
    for p in predictions:
        changes: dict[str, float | None] = {}
        for centre, low, high, slot in _BANDED:
            value = getattr(p, centre)
            if value is None or value <= 0:
                continue
            band = error.slot_band80_pct(slot)
            derived = math.log1p(band / 100.0) if band is not None else 0.0
            own = _log_width(value, getattr(p, low), getattr(p, high))
            width = math.hypot(own, derived)
            changes[low], changes[high] = value * math.exp(-width), value * math.exp(width)
        out.append(replace(p, **changes))  # type: ignore[arg-type]
    return out


def _log_width(value: float, low: float | None, high: float | None) -> float:
    widths = [abs(math.log(v / value)) for v in (low, high) if v is not None and v > 0]
    return max(widths) if widths else 0.0
