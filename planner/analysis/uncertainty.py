"""P10/P50/P90 of each option's nodes, GPUs, replicas and monthly cost, the expected cost, and
how often the recommendation changes, all read from the error samples every option was sized
over (planner.sizing.draws, planner.sizing.confidence): the same samples that put the plan's fleet
at its sizing confidence, so the headline sits at the quantile it names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from planner.analysis.capacity import Plan, make_plan
from planner.analysis.recommend import COST_TIE_PCT, recommend
from planner.curves.load import LoadCurve
from planner.fitting.fit import CurveFit, FitResult
from planner.fitting.series import series_attr
from planner.inputs.prices import PriceEntry
from planner.inputs.scenario import Scenario
from planner.sizing.confidence import Percentiles
from planner.sizing.draws import METHOD, SAMPLES, Draws
from planner.sizing.options import Keyed, Option, OptionKey, RejectedOption, SizedOption

# Two options whose monthly costs differ by no more than this are tied (not a changed choice).
TIE_USD = 1.0


@dataclass(frozen=True, slots=True)
class OptionRange(Keyed):
    """One option's planned fleet and its spread over the samples (None: never met the SLA;
    inf in a percentile: that share of the samples miss the SLA)."""

    key: OptionKey
    point_nodes: int | None
    point_gpus: int | None
    point_replicas: int | None
    point_total_monthly_cost_usd: float | None
    expected_total_monthly_cost_usd: float | None  # the median fleet's (planner.sizing.confidence)
    nodes: Percentiles | None
    gpus: Percentiles | None
    replicas: Percentiles | None
    total_monthly_cost_usd: Percentiles | None
    sampled: bool  # False: rejected by the plan at its confidence (no range)
    feasible_share: float  # samples in which the option met the SLA
    # Samples in which it is the pick or costs the same as the pick (for the plan's choice:
    # 1 - PlanRanges.choice_change_share; tied options each count the sample).
    pick_share: float
    noise_rel: tuple[tuple[str, float], ...]  # metric -> relative sigma of its held-out error

    @property
    def title(self) -> str:
        """The option's display name."""
        return self.key.title()


@dataclass(frozen=True, slots=True)
class PlanRanges:
    """Ranges per option (plan order) and how stable the recommendation is."""

    samples: int
    seed: int
    noise_scale: float
    confidence: float  # the plan's sizing confidence
    options: tuple[OptionRange, ...]
    point_choice: OptionKey | None
    choice_change_share: float  # samples whose recommendation differs from the plan's
    no_choice_share: float  # samples in which nothing met the SLA (and budget)
    method: str
    flags: tuple[str, ...]


def plan_ranges(
    scenario: Scenario,
    curves: Sequence[LoadCurve],
    prices: Sequence[PriceEntry],
    *,
    samples: int | None = None,
    seed: int = 0,
    noise_scale: float = 1.0,
) -> PlanRanges:
    """The ranges of the plan made with `samples` error samples (None: planner.sizing.draws.SAMPLES)
    from `seed`, the noise scaled by `noise_scale` (0: every sample is the fitted curve)."""
    draws = Draws(SAMPLES if samples is None else samples, seed, noise_scale)
    return ranges_of(make_plan(scenario, curves, prices, draws=draws))


def ranges_of(plan: Plan) -> PlanRanges:
    """The ranges of a plan from the samples its options were sized over (plan.draws): no
    re-plan, so cheap."""
    draws = plan.draws
    sized = [o for o in plan.options if isinstance(o, SizedOption)]
    choices = _sample_choices(plan, sized, draws.samples)
    point_choice = plan.recommendation.choice.key if plan.recommendation.choice else None
    return PlanRanges(
        samples=draws.samples,
        seed=draws.seed,
        noise_scale=draws.noise_scale,
        confidence=plan.scenario.options.sizing_confidence,
        options=tuple(_option_range(o, choices, draws.noise_scale) for o in plan.options),
        point_choice=point_choice,
        choice_change_share=_share(choices, lambda won: _changed(point_choice, won)),
        no_choice_share=_share(choices, lambda won: not won),
        method=METHOD.format(samples=draws.samples),
        flags=tuple(_flags(plan.options)),
    )


def _sample_choices(
    plan: Plan, sized: list[SizedOption], samples: int
) -> list[frozenset[OptionKey]]:
    """Per sample: the recommended option and every option costing the same (a tie is not a
    change); empty when nothing sound meets the SLA (and budget) in that sample. Only options
    that could win are handed to `recommend`: sound, affordable and within the preference
    tolerance of that sample's cheapest, so samples alike in those share one call."""
    scenario = plan.scenario
    budget = scenario.budget.monthly_usd if scenario.budget else None
    tolerance = scenario.factors.preference_tolerance_pct
    if not sized:
        return [frozenset()] * samples
    costs = np.column_stack([o.spread.costs() for o in sized])
    usable = np.isfinite(costs) & np.array([not o.concerns for o in sized])[None, :]
    if budget is not None:
        usable &= costs <= budget
    cheapest = np.where(usable, costs, np.inf).min(axis=1)
    window = cheapest * (1 + (max(tolerance, COST_TIE_PCT) + 1) / 100) + TIE_USD
    usable &= costs <= window[:, None]
    variants: dict[tuple[int, int], SizedOption] = {}
    memo: dict[tuple[tuple[int, int], ...], frozenset[OptionKey]] = {}
    out = []
    for s in range(samples):
        combo = tuple((i, o.spread.sample_fleet[s]) for i, o in enumerate(sized) if usable[s, i])
        won = memo.get(combo)
        if won is None:
            met = [_variant(variants, i, sized[i], fleet) for i, fleet in combo]
            rec = recommend(
                met, budget, factors=scenario.factors, preference_tolerance_pct=tolerance
            )
            won = memo[combo] = _winners(rec.choice, met)
        out.append(won)
    return out


def _changed(point: OptionKey | None, won: frozenset[OptionKey]) -> bool:
    """A sample changes the pick when the plan's choice is not among its winners (or, when the
    plan has none, when the sample has one)."""
    return bool(won) if point is None else point not in won


def _variant(
    variants: dict[tuple[int, int], SizedOption], index: int, option: SizedOption, fleet: int
) -> SizedOption:
    """The option with the fleet one sample needs."""
    key = (index, fleet)
    if key not in variants:
        found = option.spread.fleets[fleet]
        cost = replace(option.cost, fleet=found.fleet, static_fleet=found.static_fleet)
        variants[key] = replace(option, hourly_replicas=found.hourly_replicas, cost=cost)
    return variants[key]


def _winners(choice: SizedOption | None, met: list[SizedOption]) -> frozenset[OptionKey]:
    if choice is None:
        return frozenset()
    cost = choice.total_monthly_cost_usd
    tied = {o.key for o in met if abs(o.total_monthly_cost_usd - cost) <= TIE_USD}
    return frozenset(tied | {choice.key})


def _option_range(option: Option, choices: list[frozenset[OptionKey]], scale: float) -> OptionRange:
    key = option.key
    sized = option if isinstance(option, SizedOption) else None
    ranges = sized.spread.percentiles() if sized else {}
    wins = sum(1 for won in choices if key in won)
    return OptionRange(
        key=key,
        point_nodes=sized.nodes if sized else None,
        point_gpus=sized.gpus if sized else None,
        point_replicas=sized.replicas if sized else None,
        point_total_monthly_cost_usd=sized.total_monthly_cost_usd if sized else None,
        expected_total_monthly_cost_usd=sized.spread.expected_total_usd if sized else None,
        nodes=ranges.get("nodes"),
        gpus=ranges.get("gpus"),
        replicas=ranges.get("replicas"),
        total_monthly_cost_usd=ranges.get("total_monthly_cost_usd"),
        sampled=sized is not None,
        feasible_share=sized.spread.feasible_share if sized else 0.0,
        pick_share=wins / len(choices) if choices else 0.0,
        noise_rel=tuple(
            (metric, scale * result.noise_rel()) for metric, result in _fits(option.fit).items()
        ),
    )


def _fits(fit: CurveFit) -> dict[str, FitResult]:
    """The fit made from each CurvePoint attribute."""
    slots: tuple[tuple[FitResult | None, str | None], ...] = (
        (fit.throughput, "output_tok_s"),
        (fit.ttft_p50, series_attr("ttft_p50", fit.ttft_p50_stat)),
        (fit.ttft_p99, series_attr("ttft_p99", fit.ttft_p99_stat)),
        (fit.tpot, series_attr("tpot", fit.tpot_stat)),
        (fit.e2e_p99, "p99_e2e_ms"),
    )
    return {attr: result for result, attr in slots if result and attr}


_ATTRS = (
    "output_tok_s",
    "p50_ttft_ms",
    "p99_ttft_ms",
    "ttft_ms",
    "p50_tpot_ms",
    "p99_tpot_ms",
    "tpot_ms",
    "p99_e2e_ms",
)


def _share(
    choices: list[frozenset[OptionKey]], test: Callable[[frozenset[OptionKey]], bool]
) -> float:
    return sum(1 for won in choices if test(won)) / len(choices) if choices else 0.0


def _flags(options: Sequence[Option]) -> list[str]:
    """Say which options or measured values carry no sampled error, and why."""
    flags = []
    for option in options:
        if isinstance(option, RejectedOption):
            flags.append(f"{option.title()}: rejected by the plan ({option.reason}), so no range")
            continue
        fitted = _fits(option.fit)
        fixed = [
            attr
            for attr in _ATTRS
            if attr not in fitted and any(getattr(p, attr) is not None for p in option.curve.points)
        ]
        if fixed:
            flags.append(
                f"{option.title()}: {', '.join(fixed)} has no fit, so its measured values are "
                "used as they are (the range ignores their error)"
            )
    return flags
