"""P10/P50/P90 of each option's nodes, GPUs, replicas and monthly cost, from the fit uncertainty.

A parametric bootstrap over the candidates' curves: perturb the measurements by their held-out
error, plan again, and count how the answer moves (see `plan_ranges`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from errors import PlanningError
from planner.capacity import Plan, make_plan
from planner.curves import CurvePoint, LoadCurve, canonical_model
from planner.fit import MAPE_TO_SIGMA, CurveFit, FitResult, fit_curve, series_attr
from planner.options import Keyed, Option, OptionKey, RejectedOption, SizedOption
from planner.prices import PriceEntry
from planner.scenario import Scenario

# Each sample refits every sized option's curve with its own family (no family selection, no
# leave-one-out), about 1 ms per curve on 2 cores (bench/bench_uncertainty.py). The default
# sample count spends about REFIT_BUDGET refits per call (about 1 s): many samples for a few
# options, never fewer than MIN_SAMPLES.
REFIT_BUDGET = 1200
# Two options whose monthly costs differ by no more than this are tied (not a changed choice).
TIE_USD = 1.0
MIN_SAMPLES = 8
MAX_SAMPLES = 200
PERCENTILES = (10.0, 50.0, 90.0)
# Every CurvePoint attribute a plan can read; the order fixes the random stream (reproducible).
METRICS = (
    "output_tok_s",
    "p50_ttft_ms",
    "p99_ttft_ms",
    "ttft_ms",
    "p50_tpot_ms",
    "p99_tpot_ms",
    "tpot_ms",
    "p99_e2e_ms",
)
METHOD = (
    "parametric bootstrap: each sample replaces the candidates' measured values by their fit "
    "times lognormal noise whose sigma is the held-out (leave-one-out) error of that metric's fit, "
    "then sizes and prices every option again; a projected or workload-adjusted curve also "
    "takes one shared error draw per metric, sized by how far such estimates were off in "
    "validation; percentiles are over the samples where the option meets the SLA. The planned "
    "value can sit off P50: the plan sizes on the conservative side of each band and in whole "
    "nodes, so symmetric noise moves node counts unevenly"
)
# Validated error of curves the planner derives rather than measures (MAPE %, README): the
# cross-GPU projection (bench/bench_projection.py, TPOT 5.4-6.1%) and the workload adjustment
# within its 2x limit (bench/bench_workload_adjust.py, worst bucket 15-16% for tok/s and TPOT).
DERIVED_MAPE_PCT = {"projected": 6.1, "adjusted": 16.0}


@dataclass(frozen=True, slots=True)
class Percentiles:
    """P10, P50 and P90 of one quantity over the bootstrap samples (observed sample values)."""

    p10: float
    p50: float
    p90: float


@dataclass(frozen=True, slots=True)
class OptionRange(Keyed):
    """One option's point plan and its spread over the samples (None: never met the SLA)."""

    key: OptionKey
    point_nodes: int | None
    point_gpus: int | None
    point_replicas: int | None
    point_total_monthly_cost_usd: float | None
    nodes: Percentiles | None
    gpus: Percentiles | None
    replicas: Percentiles | None
    total_monthly_cost_usd: Percentiles | None
    sampled: bool  # False: rejected by the point plan, so not re-sampled (no range)
    feasible_share: float  # samples in which the option met the SLA
    win_share: float  # samples in which it was the recommended option
    noise_rel: tuple[tuple[str, float], ...]  # metric -> relative sigma used to perturb it

    @property
    def title(self) -> str:
        """The option's display name."""
        return self.key.title()


@dataclass(frozen=True, slots=True)
class PlanRanges:
    """Ranges per option (point plan order) and how stable the recommendation is."""

    samples: int
    seed: int
    noise_scale: float
    options: tuple[OptionRange, ...]
    point_choice: OptionKey | None
    choice_change_share: float  # samples whose recommendation differs from the point plan's
    no_choice_share: float  # samples in which nothing met the SLA (and budget)
    method: str
    flags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Sample:
    """What one bootstrap plan said, per option."""

    sized: dict[OptionKey, tuple[int, int, int, float]]  # nodes, GPUs, replicas, total cost
    choice: OptionKey | None
    # The choice and every option costing the same (within TIE_USD): a tie is not a change.
    winners: frozenset[OptionKey]


# Why a parametric bootstrap: the plan is a step function of the fits (whole replicas, whole
# nodes, an SLA-picked concurrency), so propagating parameter covariances analytically does not
# work; re-planning on perturbed data does, and needs only the public planner. The noise of each
# metric is its fit's held-out error (leave-one-out MAPE turned into a sigma), the honest size of
# the error on a point the fit has not seen. It is centred on the fitted value (the textbook
# parametric bootstrap): centred on the measured value, each sample would carry the measurement's
# own scatter plus the added noise, widening every refitted band and pushing node counts up (on
# agent-platform, vllm H200 TP 4: P50 7 nodes vs 5 planned). So `noise_scale=0` gives one value
# per option, the plan on the fitted curves. Only curves of the candidates' engine x GPU x TP x
# precision are perturbed; every other curve stays in each sample unchanged (selection depends on
# them: a measured curve blocks a projection), and each chosen curve is refitted with its own
# family (fit_curve(like=...)), which is what a sample costs. Values without a fit are kept as
# measured (said in `flags`).
def plan_ranges(
    scenario: Scenario,
    curves: Sequence[LoadCurve],
    prices: Sequence[PriceEntry],
    *,
    samples: int | None = None,
    seed: int = 0,
    noise_scale: float = 1.0,
) -> PlanRanges:
    """Node, GPU, replica and cost percentiles per option, and how often each option wins
    (the method is in the comment above). Options the point plan rejects are not re-sampled (no
    range, `sampled` False); `samples=None` picks `default_samples`; the same seed gives the
    same ranges."""
    point = make_plan(scenario, curves, prices)
    # Only the scenario model's curves can back an option (planner.selection drops the rest
    # first): drawing noise for the others would only shift the random stream.
    wanted = canonical_model(scenario.model)
    curves = [curve for curve in curves if canonical_model(curve.key.model) == wanted]
    sized = [o for o in point.options if _size(o) is not None]
    count = default_samples(len(sized)) if samples is None else samples
    _check(count, noise_scale)
    sigmas = {_group(o): _noise(o.fit, noise_scale) for o in sized}
    centres = _centres(sized)
    rng = np.random.default_rng(seed)
    likes = {_group(o): o.fit for o in sized}

    def refit(curve: LoadCurve) -> CurveFit:
        curve = _derived_error(curve, noise_scale, rng)
        like = likes.get(_curve_group(curve))
        return fit_curve(curve) if like is None else fit_curve(curve, like=like)

    drawn = [
        _sample(make_plan(scenario, _perturbed(curves, sigmas, centres, rng), prices, fitter=refit))
        for _ in range(count)
    ]
    point_choice = _choice_key(point)
    return PlanRanges(
        samples=count,
        seed=seed,
        noise_scale=noise_scale,
        options=tuple(_option_range(o, drawn, sigmas.get(_group(o))) for o in point.options),
        point_choice=point_choice,
        choice_change_share=_share(drawn, lambda s: point_choice not in s.winners),
        no_choice_share=_share(drawn, lambda s: s.choice is None),
        method=METHOD,
        flags=tuple(_flags(point.options, sigmas, {_curve_group(c) for c in curves})),
    )


def default_samples(sized_options: int) -> int:
    """Samples for about REFIT_BUDGET curve refits, within MIN_SAMPLES..MAX_SAMPLES."""
    per_sample = max(sized_options, 1)
    return min(max(REFIT_BUDGET // per_sample, MIN_SAMPLES), MAX_SAMPLES)


def _check(samples: int, noise_scale: float) -> None:
    if samples < 1:
        raise PlanningError(f"samples must be at least 1, got {samples!r}")
    if not (math.isfinite(noise_scale) and noise_scale >= 0):
        raise PlanningError(
            f"noise_scale must be a finite number >= 0 (1 = the fits' own held-out error), "
            f"got {noise_scale!r}"
        )


def _group(option: Option) -> OptionKey:
    return option.key


def _curve_group(curve: LoadCurve) -> OptionKey:
    return OptionKey.of_curve(curve)


def _fits_by_metric(fit: CurveFit) -> dict[str, FitResult]:
    """The fit made from each CurvePoint attribute."""
    slots: tuple[tuple[FitResult | None, str | None], ...] = (
        (fit.throughput, "output_tok_s"),
        (fit.ttft_p50, series_attr("ttft_p50", fit.ttft_p50_stat)),
        (fit.ttft_p99, series_attr("ttft_p99", fit.ttft_p99_stat)),
        (fit.tpot, series_attr("tpot", fit.tpot_stat)),
        (fit.e2e_p99, "p99_e2e_ms"),
    )
    return {attr: result for result, attr in slots if result and attr}


def _noise(fit: CurveFit, scale: float) -> dict[str, float]:
    """Relative sigma per CurvePoint attribute: the held-out error of the fit made from it."""
    return {attr: scale * result.noise_rel() for attr, result in _fits_by_metric(fit).items()}


def _perturbed(
    curves: Sequence[LoadCurve],
    sigmas: dict[OptionKey, dict[str, float]],
    centres: dict[int, tuple[CurvePoint, ...]],
    rng: np.random.Generator,
) -> list[LoadCurve]:
    """The candidates' groups perturbed around their centres (draws in input order)."""
    out = []
    for curve in curves:
        sigma = sigmas.get(_curve_group(curve))
        if sigma is None:
            out.append(curve)
            continue
        z = rng.standard_normal((len(curve.points), len(METRICS)))
        scale = np.array([sigma.get(metric, 0.0) for metric in METRICS])
        factors = np.exp(z * scale)
        centred = centres.get(id(curve), curve.points)
        points = tuple(_scaled(p, row) for p, row in zip(centred, factors.tolist(), strict=True))
        out.append(replace(curve, points=points))
    return out


def _centres(options: Sequence[Option]) -> dict[int, tuple[CurvePoint, ...]]:
    """Each sized option's own curve with every fitted value replaced by the fit (by curve id)."""
    out: dict[int, tuple[CurvePoint, ...]] = {}
    for option in options:
        fits = _fits_by_metric(option.fit)
        out[id(option.curve)] = tuple(_fitted(p, fits) for p in option.curve.points)
    return out


def _fitted(point: CurvePoint, fits: dict[str, FitResult]) -> CurvePoint:
    changes = {}
    for metric, result in fits.items():
        value = getattr(point, metric)
        fitted = float(result.eval([point.concurrency])[0]) if value is not None else math.nan
        if math.isfinite(fitted) and fitted > 0:
            changes[metric] = fitted
    return replace(point, **changes) if changes else point


def _derived_error(curve: LoadCurve, scale: float, rng: np.random.Generator) -> LoadCurve:
    """A projected or adjusted curve times one lognormal draw per metric (its estimate's error
    is systematic: the whole curve is off together); measured curves come back unchanged."""
    mape = DERIVED_MAPE_PCT.get(curve.provenance)
    if mape is None or scale == 0:
        return curve
    sigma = scale * MAPE_TO_SIGMA * mape / 100.0
    factors = np.exp(rng.standard_normal(len(METRICS)) * sigma).tolist()
    return replace(curve, points=tuple(_scaled(p, factors) for p in curve.points))


def _scaled(point: CurvePoint, factors: list[float]) -> CurvePoint:
    changes = {
        metric: value * factor
        for metric, factor in zip(METRICS, factors, strict=True)
        if (value := getattr(point, metric)) is not None and factor != 1.0
    }
    return replace(point, **changes) if changes else point


def _sample(plan: Plan) -> _Sample:
    sized = {o.key: size for o in plan.options if (size := _size(o)) is not None}
    choice = _choice_key(plan)
    if choice is None or choice not in sized:
        return _Sample(sized, choice, frozenset(() if choice is None else (choice,)))
    cost = sized[choice][3]
    tied = {key for key, size in sized.items() if abs(size[3] - cost) <= TIE_USD}
    return _Sample(sized, choice, frozenset(tied | {choice}))


def _size(option: Option) -> tuple[int, int, int, float] | None:
    """(nodes, GPUs, replicas, total cost) of an option that meets the SLA, else None."""
    if not isinstance(option, SizedOption):
        return None
    return option.nodes, option.gpus, option.replicas, option.total_monthly_cost_usd


def _choice_key(plan: Plan) -> OptionKey | None:
    choice = plan.recommendation.choice
    return choice.key if choice is not None else None


def _option_range(
    option: Option, drawn: list[_Sample], sigma: dict[str, float] | None
) -> OptionRange:
    key = option.key
    sigma = sigma or {}
    rows = [s.sized[key] for s in drawn if key in s.sized]
    columns = list(zip(*rows, strict=True)) if rows else [(), (), (), ()]
    size = _size(option)
    return OptionRange(
        key=key,
        point_nodes=size[0] if size else None,
        point_gpus=size[1] if size else None,
        point_replicas=size[2] if size else None,
        point_total_monthly_cost_usd=size[3] if size else None,
        nodes=_percentiles(columns[0]),
        gpus=_percentiles(columns[1]),
        replicas=_percentiles(columns[2]),
        total_monthly_cost_usd=_percentiles(columns[3]),
        sampled=size is not None,
        feasible_share=len(rows) / len(drawn),
        win_share=sum(1 / len(s.winners) for s in drawn if key in s.winners) / len(drawn),
        noise_rel=tuple((m, sigma[m]) for m in METRICS if m in sigma),
    )


def _reason(option: Option) -> str | None:
    return option.reason if isinstance(option, RejectedOption) else None


def _percentiles(values: Sequence[float]) -> Percentiles | None:
    """Observed sample values at P10/P50/P90 (a node count stays a whole number)."""
    if not values:
        return None
    p10, p50, p90 = np.percentile(
        np.asarray(values, dtype=np.float64), PERCENTILES, method="inverted_cdf"
    )
    return Percentiles(float(p10), float(p50), float(p90))


def _share(drawn: list[_Sample], test: Callable[[_Sample], bool]) -> float:
    return sum(1 for s in drawn if test(s)) / len(drawn)


def _flags(
    options: Sequence[Option], sigmas: dict[OptionKey, dict[str, float]], groups: set[OptionKey]
) -> list[str]:
    """Say which options or measured values were not perturbed, and why."""
    flags = []
    for option in options:
        if _group(option) not in sigmas:
            flags.append(
                f"{option.title()}: rejected by the point plan ({_reason(option)}), "
                "so not re-sampled"
            )
            continue
        if _group(option) not in groups:
            flags.append(
                f"{option.title()}: its curve is derived from other curves (no measured curve of "
                "its own), so its range shows no fit uncertainty"
            )
            continue
        sigma = sigmas[_group(option)]
        fixed = [
            metric
            for metric in METRICS
            if metric not in sigma
            and any(getattr(p, metric) is not None for p in option.curve.points)
        ]
        if fixed:
            flags.append(
                f"{option.title()}: {', '.join(fixed)} has no fit, so its measured values are "
                "used as they are (the range ignores their error)"
            )
    return flags
