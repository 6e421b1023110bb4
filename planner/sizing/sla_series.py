"""Which measured latency series answers an SLA target stated at a statistic (p50, p90, p99,
mean): the same statistic where measured; values whose statistic the source left unstated (with
a caveat); a mean for a median (with a caveat); else a higher percentile, read as an upper bound
(a p90 is at most the p99), so a looser target never allows fewer streams than a tighter one on
the same data. A lower statistic never answers a higher one: a p50 says nothing about a p99.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from planner.curves.load import LATENCY_ATTRS, LoadCurve
from planner.fitting.family_fit import MIN_FIT_POINTS
from planner.fitting.fit import CurveFit, FitResult, fit_latency, fit_tpot
from planner.fitting.series import series, series_attr
from planner.inputs.sla_targets import SLA_TARGET_BY_FIELD

# Per target statistic: the measured statistics that may answer it, most faithful first.
READS: dict[str, tuple[str, ...]] = {
    "p50": ("p50", "unstated", "mean", "p90", "p99"),
    "p90": ("p90", "unstated", "p99"),
    "p99": ("p99", "unstated"),
    "mean": ("mean", "unstated", "p99"),
}
# Lowest first: values of unstated statistic answer the lowest target of a metric, only it.
STAT_ORDER = ("p50", "mean", "p90", "p99")
_NAMES = {"p50": "median", "p90": "p90", "p99": "p99", "mean": "mean"}
# Why a higher statistic bounds the wanted one from above.
_BOUND_WHY = {
    "p50": "the median is at most the {stat}",
    "p90": "the p90 is at most the {stat}",
    "mean": "the mean is below the {stat} unless the slowest requests are extreme",
}


# A percentile never exceeds a higher one of the same requests: a p99 target at a limit no looser
# than a p50's (or p90's) already holds that target wherever it holds.
_IMPLIED_BY = {"p50": ("p90", "p99"), "p90": ("p99",)}


def implied_targets(targets: Mapping[str, float]) -> dict[str, str]:
    """Targets another one of the scenario already implies (a TTFT p50 <= 2000 ms beside a TTFT
    p99 <= 1000 ms): field -> the implying field. They need no series of their own."""
    out: dict[str, str] = {}
    for name, limit in targets.items():
        target = SLA_TARGET_BY_FIELD[name]
        for other, other_limit in targets.items():
            tighter = SLA_TARGET_BY_FIELD[other]
            if (
                target.upper
                and tighter.metric == target.metric
                and tighter.check is target.check
                and tighter.statistic in _IMPLIED_BY.get(target.statistic, ())
                and other_limit <= limit
            ):
                out[name] = other
                break
    return out


@dataclass(frozen=True, slots=True)
class SeriesChoice:
    """The series that answers a target: CurvePoint attribute, its statistic, its fit (None:
    too few levels, read at the measured levels only) and the error-draw column (draws.SLOTS)."""

    attr: str
    stat: str
    result: FitResult | None
    slot: str


def choose_series(
    fit: CurveFit, metric: str, wanted: str, *, skip_unstated: bool = False
) -> SeriesChoice | str:
    """The series of `metric` (ttft, tpot, e2e) that answers a `wanted` statistic, or why none
    does; `skip_unstated`: values of unstated statistic answer another target."""
    attrs = LATENCY_ATTRS[metric]
    readable = (
        stat
        for stat in READS[wanted]
        if stat in attrs and not (skip_unstated and stat == "unstated")
    )
    counts = {stat: len(series(fit.curve.points, attrs[stat])[0]) for stat in readable}
    enough = next((stat for stat, count in counts.items() if count >= MIN_FIT_POINTS), None)
    stat = enough or next((stat for stat, count in counts.items() if count > 0), None)
    if stat is None:
        measured = [s for s, attr in attrs.items() if series(fit.curve.points, attr)[0].size]
        if skip_unstated:
            measured = [s for s in measured if s != "unstated"]
        if measured:
            return f"only {' and '.join(measured)} values were measured, not {wanted}"
        return "the curve has no such measurement"
    attr = attrs[stat]
    return SeriesChoice(attr, stat, _fitted(fit, metric, attr), _slot(metric, stat))


def bound_flag(text: str, wanted: str, stat: str) -> str | None:
    """The caveat of reading `stat` values for a `wanted` target (None: the same statistic)."""
    if stat == wanted:
        return None
    if stat == "unstated":
        return f"{text} checked against values whose statistic the source did not state"
    if stat == "mean":
        return f"{text} checked against mean values: the median may differ from the mean"
    return f"{text} checked against {stat} values ({_BOUND_WHY[wanted].format(stat=stat)})"


def stat_name(stat: str) -> str:
    """'median' for p50, else the statistic as written."""
    return _NAMES.get(stat, stat)


def _slot(metric: str, stat: str) -> str:
    """The error-draw column of a series: one per fitted CurveFit slot (unstated values draw
    with the median's, so targets of one limit at two statistics read the same draw)."""
    if metric == "ttft":
        return "ttft_p99" if stat in ("p90", "p99") else "ttft_p50"
    return "tpot" if metric == "tpot" else "e2e_p99"


def _fitted(fit: CurveFit, metric: str, attr: str) -> FitResult | None:
    """The fit of one series: the CurveFit's own where it fitted that series, else fitted here
    (cached by the values: planner.fitting.fit)."""
    own = {
        "ttft_p50": (fit.ttft_p50, fit.ttft_p50_stat),
        "ttft_p99": (fit.ttft_p99, fit.ttft_p99_stat),
        "tpot": (fit.tpot, fit.tpot_stat),
        "e2e_p99": (fit.e2e_p99, "p99" if fit.e2e_p99 is not None else None),
    }
    for slot, (result, stat) in own.items():
        if slot.startswith(metric) and stat is not None and series_attr(slot, stat) == attr:
            return result
    return _fit_series(fit.curve, metric, attr)


def _fit_series(curve: LoadCurve, metric: str, attr: str) -> FitResult | None:
    fitter = fit_tpot if metric == "tpot" else fit_latency
    return fitter(*series(curve.points, attr))
