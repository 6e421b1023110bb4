"""Per reach (and bucket), method and split: n, MAPE and median signed error per metric, the
worst point with its deployment, band and stated-error coverage, refusals, unknowns and
invariant breaks."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from bench.validation.product import METRICS
from bench.validation.score import CaseResult, Scored

Group = tuple[str, str, str, str]  # (reach, bucket, split, method); bucket "" = the whole reach


@dataclass(frozen=True, slots=True)
class MetricStats:
    """One metric's figures in a group."""

    n: int
    unknown: int
    mape_pct: float | None
    median_signed_pct: float | None
    worst_pct: float | None
    worst_deployment: str | None
    in_band_pct: float | None  # share of points with a band whose truth is inside it
    in_stated_pct: float | None  # share of points inside the error the product states


@dataclass(slots=True)
class GroupStats:
    """Every figure of one group."""

    metrics: dict[str, MetricStats] = field(default_factory=dict)
    cases: int = 0
    refused: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    breaks: Counter[str] = field(default_factory=Counter)


def _share(flags: Sequence[bool | None]) -> float | None:
    known = [f for f in flags if f is not None]
    return 100.0 * sum(known) / len(known) if known else None


def metric_stats(points: Sequence[Scored]) -> MetricStats:
    """The figures of one metric's points."""
    known = [p for p in points if p.signed_pct is not None]
    signed = np.array([p.signed_pct for p in known], dtype=float)
    if not known:
        return MetricStats(0, len(points), None, None, None, None, None, None)
    worst = known[int(np.argmax(np.abs(signed)))]
    return MetricStats(
        n=len(known),
        unknown=len(points) - len(known),
        mape_pct=float(np.mean(np.abs(signed))),
        median_signed_pct=float(np.median(signed)),
        worst_pct=worst.signed_pct,
        worst_deployment=f"{worst.deployment} @ c={worst.concurrency:g}",
        in_band_pct=_share([p.in_band for p in known]),
        in_stated_pct=_share([p.in_stated for p in known]),
    )


def _groups(result: CaseResult, method: str) -> Iterator[Group]:
    case = result.case
    for reach in case.reaches:
        yield reach, "", case.split, method
        if case.bucket:
            yield reach, case.bucket, case.split, method


def summarise(results: Sequence[CaseResult]) -> dict[Group, GroupStats]:
    """Every group's figures, keyed (reach, bucket, split, method)."""
    points: dict[Group, list[Scored]] = defaultdict(list)
    stats: dict[Group, GroupStats] = defaultdict(GroupStats)
    for result in results:
        methods = {p.method for p in result.scored} | {m for m, _ in result.refused}
        for method in methods:
            for group in _groups(result, method):
                stats[group].cases += 1
        for scored in result.scored:
            for group in _groups(result, scored.method):
                points[group].append(scored)
        for method, why in result.refused:
            for group in _groups(result, method):
                stats[group].refused += 1
                stats[group].reasons[_reason(why)] += 1
        for method, kind in result.breaks:
            for group in _groups(result, method):
                stats[group].breaks[kind] += 1
    for group, found in points.items():
        for metric in METRICS:
            stats[group].metrics[metric] = metric_stats([p for p in found if p.metric == metric])
    return dict(stats)


def _reason(why: str) -> str:
    """A refusal's message without the parts that name the case (its class of reason)."""
    return why.split(":", 2)[0] + (": " + why.split(":", 2)[1][:80] if ":" in why else "")
