"""Scoring one case: per point and metric the signed error of the product's answer and of the
baselines (the source's numbers copied, bandwidth-ratio scaling, AIConfigurator's estimate),
whether the truth lies in the answer's band and inside the error it states, refusals, unknowns
and the physical invariants an answer breaks."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from bench.validation.cases import GENERATION, SAME_GEN, Case, finite
from bench.validation.data import AicKey, Gpus, aic_key
from bench.validation.product import ANSWERS, METRICS, Answer, methods_for
from planner.curves.load import CurvePoint, LoadCurve
from planner.fitting.predict import Prediction
from planner.physics.roofline import Ceilings, curve_ceilings

COPY = "copy source"
BANDWIDTH = "bandwidth ratio"
AIC = "AIConfigurator 0.12"
TOLERANCE = 0.01  # an invariant breaks by more than 1%, not by rounding
BREAKS = ("tok/s falls below KV capacity", "TTFT falls as load rises", "outside own band",
          "above roofline", "less on a bigger GPU")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Scored:
    """One point and metric of one method: the truth and the guess (None: unknown)."""

    method: str
    metric: str
    deployment: str
    concurrency: float
    truth: float
    guess: float | None
    in_band: bool | None = None  # None: the answer gives no band there
    in_stated: bool | None = None  # None: the answer states no error

    @property
    def signed_pct(self) -> float | None:
        """100 * (guess - truth) / truth."""
        return None if self.guess is None else 100.0 * (self.guess - self.truth) / self.truth


@dataclass(frozen=True, slots=True)
class CaseResult:
    """Everything one case adds to its reach's figures."""

    case: Case
    scored: tuple[Scored, ...]
    refused: tuple[tuple[str, str], ...]  # (method, why)
    breaks: tuple[tuple[str, str], ...]  # (method, which invariant)


def truth_of(point: CurvePoint, metric: str) -> float | None:
    """The measured value of a metric (TTFT and TPOT: p50, else the unstated statistic)."""
    if metric == "output_tok_s":
        return point.output_tok_s
    stat = metric.removesuffix("_ms")
    for attr in (f"p50_{stat}_ms", f"{stat}_ms", f"mean_{stat}_ms"):
        value = getattr(point, attr)
        if value is not None:
            return float(value)
    return None


def guess_of(p: Prediction, metric: str) -> tuple[float | None, float | None, float | None]:
    """(value, low, high) of a prediction's metric."""
    if metric == "output_tok_s":
        return p.output_tok_s, p.output_tok_s_lo, p.output_tok_s_hi
    if metric == "ttft_ms":
        return p.p50_ttft_ms, p.p50_ttft_ms_lo, p.p50_ttft_ms_hi
    return p.tpot_ms, p.tpot_ms_lo, p.tpot_ms_hi


def nearest(curve: LoadCurve, concurrency: float) -> CurvePoint:
    """The curve's level nearest `concurrency` (in ratio; the lower on a tie)."""

    def distance(point: CurvePoint) -> tuple[float, float]:
        low, high = sorted((point.concurrency, concurrency))
        return high / low, point.concurrency

    return min(curve.points, key=distance)


def _answer_points(case: Case, method: str, answer: Answer) -> Iterator[Scored]:
    by_c = {p.concurrency: p for p in answer.predictions}
    for point in case.target.points:
        if point.concurrency not in case.levels or point.concurrency not in by_c:
            continue
        for metric in METRICS:
            truth = truth_of(point, metric)
            if not finite(truth) or not truth:
                continue
            value, lo, hi = guess_of(by_c[point.concurrency], metric)
            guess = value if finite(value) else None
            band = None if guess is None or lo is None or hi is None else lo <= truth <= hi
            stated = answer.stated_pct.get(metric)
            inside = None if guess is None or stated is None else (
                abs(guess - truth) <= stated / 100.0 * truth)  # fmt: skip
            yield Scored(method, metric, _name(case), point.concurrency, truth, guess, band, inside)


def _name(case: Case) -> str:
    return f"{case.target.key.model} {case.target.label_text()}"


def baseline_points(case: Case, aic: dict[tuple[AicKey, str], float]) -> Iterator[Scored]:
    """The source's numbers copied (nearest stored level), scaled by the bandwidth ratio (GPU
    reaches) and AIConfigurator's own estimate where its file has the row."""
    source = case.store[0]
    for point in case.target.points:
        if point.concurrency not in case.levels:
            continue
        copied = nearest(source, point.concurrency)
        for metric in METRICS:
            truth = truth_of(point, metric)
            if not finite(truth) or not truth:
                continue
            value = truth_of(copied, metric)
            yield Scored(COPY, metric, _name(case), point.concurrency, truth, value)
            ratio = case.bandwidth_ratio
            if ratio and value is not None:
                scaled = value * ratio if metric == "output_tok_s" else value / ratio
                yield Scored(BANDWIDTH, metric, _name(case), point.concurrency, truth, scaled)
            estimate = aic.get((aic_key(case.target, point.concurrency), metric))
            if estimate is not None:
                yield Scored(AIC, metric, _name(case), point.concurrency, truth, estimate)


def invariant_breaks(case: Case, answer: Answer, gpus: Gpus) -> list[str]:
    """Which physical invariants the answer breaks along its read levels (one entry a break)."""
    preds = sorted(answer.predictions, key=lambda p: p.concurrency)
    ceil = curve_ceilings(case.target)
    isl, osl = case.target.key.isl or 0, case.target.key.osl or 0
    streams = ceil.streams_for(isl, osl) if isinstance(ceil, Ceilings) else None
    found: list[str] = []
    for a, b in itertools.pairwise(preds):
        if _falls(a.output_tok_s, b.output_tok_s) and (streams is None or b.concurrency <= streams):
            found.append(BREAKS[0])
        if _falls(a.p50_ttft_ms, b.p50_ttft_ms):
            found.append(BREAKS[1])
    found.extend(BREAKS[2] for p in preds for metric in METRICS if _outside_band(p, metric))
    if isinstance(ceil, Ceilings):
        found.extend(BREAKS[3] for p in preds if _above_roofline(p, ceil, isl, osl))
    return found + _bigger_gpu_breaks(case, preds, gpus)


def _outside_band(p: Prediction, metric: str) -> bool:
    value, lo, hi = guess_of(p, metric)
    if value is None or lo is None or hi is None or not finite(value):
        return False
    return not lo * (1 - TOLERANCE) <= value <= hi * (1 + TOLERANCE)


def _above_roofline(p: Prediction, ceil: Ceilings, isl: int, osl: int) -> bool:
    bound = ceil.max_output_tok_s(p.concurrency, isl, osl)
    return p.output_tok_s is not None and finite(bound) and p.output_tok_s > (1 + TOLERANCE) * bound


def _falls(before: float | None, after: float | None) -> bool:
    return finite(before) and finite(after) and (after or 0.0) < (1 - TOLERANCE) * (before or 0.0)


def _bigger_gpu_breaks(case: Case, preds: list[Prediction], gpus: Gpus) -> list[str]:
    """Less tok/s projected onto a GPU with at least as much of every resource."""
    if case.reaches[0] not in (SAME_GEN, GENERATION) or case.project_to is None:
        return []
    source = case.store[0]
    if not gpus.dominates(case.project_to, source.key.gpu or ""):
        return []
    measured = {p.concurrency: p.output_tok_s for p in source.points}
    return [
        BREAKS[4]
        for p in preds
        if finite(measured.get(p.concurrency)) and _falls(measured[p.concurrency], p.output_tok_s)
    ]


def score_case(case: Case, gpus: Gpus, aic: dict[tuple[AicKey, str], float]) -> CaseResult:
    """Every method's answer to a case, scored, with the baselines beside."""
    scored: list[Scored] = list(baseline_points(case, aic))
    refused: list[tuple[str, str]] = []
    breaks: list[tuple[str, str]] = []
    for method in methods_for(case):
        answer = ANSWERS[method](case)
        if isinstance(answer, str):
            refused.append((method, answer))
            continue
        scored.extend(_answer_points(case, method, answer))
        breaks.extend((method, kind) for kind in invariant_breaks(case, answer, gpus))
    return CaseResult(case, tuple(scored), tuple(refused), tuple(breaks))
