"""Past the measured levels, the serving model answers: inside a deployment's measured range the
fits interpolate; above its top level (or below its first) each value is the serving model's,
calibrated on the deployment, times the model's miss at the nearest measured level, a miss that
fades with the distance from it (so a model that runs 10% slow at the top level is corrected
there and trusted more the further the answer reaches).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from planner.engine.model import CONCURRENCY, EngineModel, EnginePrediction, Metric, Query
from planner.engine.reach_errors import levels_up_error
from planner.fitting.fit import CurveFit
from planner.fitting.predict import Prediction
from planner.fitting.series import series, series_attr

SERVING_MODEL_BEYOND = "serving model"
# Octaves of concurrency over which half of the model's measured miss still applies.
FADE_OCTAVES = 4.0


@dataclass(frozen=True, slots=True)
class _Series:
    """One predicted series: the Prediction fields it fills and the model metric and tail."""

    slot: str  # CurveFit slot (output tok/s: "throughput")
    fields: tuple[str, str, str]  # centre, low, high
    metric: str  # EnginePrediction attribute
    tail: str  # Metric attribute for the centre: "mean", "p50" or "p99"


_TOK = ("output_tok_s", "output_tok_s_lo", "output_tok_s_hi")
_SERIES = (
    _Series("throughput", _TOK, "output_tok_s", "mean"),
    _Series("ttft_p50", ("p50_ttft_ms", "p50_ttft_ms_lo", "p50_ttft_ms_hi"), "ttft_ms", "p50"),
    _Series("ttft_p99", ("p99_ttft_ms", "p99_ttft_ms_lo", "p99_ttft_ms_hi"), "ttft_ms", "p99"),
    _Series("tpot", ("tpot_ms", "tpot_ms_lo", "tpot_ms_hi"), "tpot_ms", "mean"),
)


def beyond_measured(
    predictions: Sequence[Prediction], fit: CurveFit, model: EngineModel | str
) -> tuple[list[Prediction], list[str]]:
    """The predictions with every value outside the measured concurrencies read from the
    serving model (corrected by its fading miss), and a note saying which; unchanged when there
    is no model, no stated workload or nothing outside."""
    curve = fit.curve
    measured = curve.concurrencies()
    outside = [
        p for p in predictions if measured and not measured[0] <= p.concurrency <= measured[-1]
    ]
    if not outside or isinstance(model, str) or not curve.key.isl or not curve.key.osl:
        return list(predictions), []
    loads = tuple(sorted({*measured, *(p.concurrency for p in outside)}))
    found = model.predict(Query(CONCURRENCY, loads, curve.key.isl, curve.key.osl))
    at = {load: i for i, load in enumerate(loads)}
    replaced = _rising({p.concurrency: _replaced(p, fit, found, at) for p in outside}, fit)
    where = ", ".join(f"{c:g}" for c in replaced)
    note = (
        f"at concurrency {where}, outside the measured {measured[0]:g}-{measured[-1]:g}: the "
        f"serving model's values ({model.spec.physics}; calibrated on "
        f"{model.calibration.levels} level(s)), corrected by its miss at the nearest measured "
        "level, fading with distance"
    )
    return [replaced.get(p.concurrency, p) for p in predictions], [note]


def _rising(answers: dict[float, Prediction], fit: CurveFit) -> dict[float, Prediction]:
    """Answers outside the measured levels in line with them: above the top level never below
    its values (the measured one and the fits' reading) nor below a lower answer, below the
    first level never above its values (throughput, TTFT and TPOT only grow with load)."""
    points = fit.curve.points
    out = dict(answers)
    above = sorted(c for c in answers if c > points[-1].concurrency)
    below = sorted((c for c in answers if c < points[0].concurrency), reverse=True)
    _bounded(out, above, _edge(fit, points[-1].concurrency, max), rising=True)
    _bounded(out, below, _edge(fit, points[0].concurrency, min), rising=False)
    return out


def _edge(fit: CurveFit, load: float, pick: Callable[[float, float], float]) -> dict[str, float]:
    """Each series' value at a measured edge level: measured and fitted, the bound of the two."""
    point = next(p for p in fit.curve.points if p.concurrency == load)
    found: dict[str, float] = {}
    for item in _SERIES:
        stat = None if item.slot == "throughput" else getattr(fit, f"{item.slot}_stat", None)
        attr = "output_tok_s" if item.slot == "throughput" else series_attr(item.slot, stat)
        value = getattr(point, attr) if attr else None
        fitted = getattr(fit, item.slot)
        read = float(fitted.eval(np.array([load]))[0]) if fitted is not None else math.nan
        values = [v for v in (value, read) if v is not None and math.isfinite(v)]
        if values:
            found[item.fields[0]] = pick(values[0], values[-1])
    return found


def _bounded(
    out: dict[float, Prediction], loads: list[float], bound: dict[str, float], *, rising: bool
) -> None:
    """Walk away from the measured edge keeping each centre on its side of the last one."""
    for load in loads:
        changes: dict[str, float] = {}
        for item in _SERIES:
            centre, low, high = item.fields
            value = getattr(out[load], centre)
            if value is None:
                continue
            edge = bound.get(centre, value)
            wrong = value < edge if rising else value > edge
            if wrong:
                changes[centre] = edge
                side = high if rising else low
                old = getattr(out[load], side)
                changes[side] = (max if rising else min)(old if old is not None else edge, edge)
            bound[centre] = (max if rising else min)(edge, value)
        if changes:
            out[load] = replace(out[load], **changes)  # type: ignore[arg-type]


def _replaced(
    p: Prediction, fit: CurveFit, found: EnginePrediction, at: dict[float, int]
) -> Prediction:
    changes: dict[str, float | None] = {}
    for item in _SERIES:
        metric: Metric = getattr(found, item.metric)
        centre = getattr(metric, item.tail)
        miss = _miss(fit, item, centre, at, p.concurrency)
        value = centre[at[p.concurrency]]
        if not math.isfinite(value) or miss is None:
            continue
        scale = value * math.exp(miss)
        band = 1.0 + _band_pct(fit, item, p.concurrency) / 100.0
        changes[item.fields[0]] = scale
        changes[item.fields[1]] = scale / band
        changes[item.fields[2]] = scale * band
    if not changes:
        return p
    output = changes.get("output_tok_s", p.output_tok_s)
    stream = None if output is None or p.concurrency <= 0 else output / p.concurrency
    return replace(p, **changes, stream_tok_s=stream, basis=SERVING_MODEL_BEYOND)  # type: ignore[arg-type]


def _band_pct(fit: CurveFit, item: _Series, load: float) -> float:
    """The 80% error of an answer this far past the measured levels (planner.engine.
    reach_errors: the validation's next level and two levels up, growing past them)."""
    measured = fit.curve.concurrencies()
    nearest = min(measured, key=lambda c: abs(math.log(c / load)))
    error = levels_up_error(abs(math.log2(load / nearest)))
    return error.slot_band80_pct(item.slot) or error.slot_pct(item.slot)


def _miss(
    fit: CurveFit, item: _Series, centre: tuple[float, ...], at: dict[float, int], load: float
) -> float | None:
    """log(measured / model) at the measured level nearest `load`, faded by the distance;
    None when the series was never measured (the model's value is then taken as it is: 0)."""
    stat = {"throughput": None}.get(item.slot, getattr(fit, f"{item.slot}_stat", None))
    attr = "output_tok_s" if item.slot == "throughput" else series_attr(item.slot, stat)
    if attr is None:
        return 0.0
    xs, ys = series(fit.curve.points, attr)
    if xs.size == 0:
        return 0.0
    nearest = int(np.argmin(np.abs(np.log(xs / load))))
    model_value = centre[at[float(xs[nearest])]]
    if not (math.isfinite(model_value) and model_value > 0 and ys[nearest] > 0):
        return 0.0
    octaves = abs(math.log2(load / float(xs[nearest])))
    return math.log(float(ys[nearest]) / model_value) * FADE_OCTAVES / (FADE_OCTAVES + octaves)
