"""The recommendation as a person reads it: at most two sentences (what to run, on how much, at
what cost and confidence; then the runner-up, a tie or how unstable the pick is) and short
bullets, built from the plan's structured fields (never by editing the planner's own reason);
plus warnings and flags grouped and de-duplicated. The app, the PDF and the CLI all show these.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from planner.analysis.capacity import Plan
from planner.analysis.recommend import Verdict
from planner.analysis.uncertainty import TIE_USD, PlanRanges
from planner.inputs.sla_targets import BARE_STATISTIC, STATISTICS
from planner.sizing.nodes import node_shape
from planner.sizing.options import Option, OptionKey, SizedOption
from planner.sizing.sla import target_text
from reports.flag_text import flag_gist, group_flags
from reports.names import (
    engine_name,
    gpu_name,
    option_name,
    rejected_lines,
    serving_name,
    short_option_names,
    tp_text,
)
from reports.what_if_view import amount_text

# A pick that changes in at least this share of resamples is called unstable in the headline.
UNSTABLE_SHARE = 0.2


@dataclass(frozen=True, slots=True)
class Brief:
    """The recommendation in plain words: `headline` is one or two sentences; `sound` is False
    when nothing is recommended (the page shows a warning, not a success)."""

    headline: str
    bullets: tuple[str, ...]
    sound: bool


def sizing_confidence(plan: Plan) -> float | None:
    """The probability the planned fleet meets the SLA (options.sizing_confidence)."""
    return plan.scenario.options.sizing_confidence


def expected_cost(option: SizedOption) -> float | None:
    """The option's expected (median fleet) monthly cost over the fits' error samples."""
    return option.expected_monthly_cost_usd


def usd(value: float) -> str:
    """'$61,320'; an infinite percentile (that share of samples misses the SLA) in words."""
    return f"${value:,.0f}" if math.isfinite(value) else "more than any fleet sized (SLA missed)"


def recommendation_brief(plan: Plan, ranges: PlanRanges | None = None) -> Brief:
    """What to run and why, in at most two sentences plus bullets (the first says how a target
    given without its statistic was read)."""
    brief = _brief(plan, ranges)
    read = read_as_line(plan)
    return brief if read is None else replace(brief, bullets=(read, *brief.bullets))


def read_as_line(plan: Plan) -> str | None:
    """'TPOT p99 <= 50 ms: given without a statistic, read as p99 (...).' or None."""
    targets = plan.scenario.sla.targets()
    bare = [field for field in plan.scenario.sla.read_as if field in targets]
    if not bare:
        return None
    texts = and_list([target_text(field, targets[field]) for field in bare])
    many = len(bare) > 1
    return (
        f"{texts}: {'these targets were' if many else 'this target was'} given without a "
        f"statistic and {'are' if many else 'is'} read as {BARE_STATISTIC}, the strictest of "
        f"{and_list(list(STATISTICS))}; state another to plan on it."
    )


def _brief(plan: Plan, ranges: PlanRanges | None) -> Brief:
    choice = plan.recommendation.choice
    if choice is None:
        return _nothing_brief(plan)
    first = _buy_sentence(plan, choice)
    second = unstable_sentence(plan, ranges) or tie_sentence(plan, ranges)
    bullets = list(_choice_bullets(plan, choice, ranges, comparison=second is None))
    if second is None:
        second = margin_sentence(plan)
    headline = first if second is None else f"{first} {second}"
    return Brief(headline, tuple(bullets), sound=True)


def _buy_sentence(plan: Plan, choice: SizedOption) -> str:
    nodes = f"{choice.nodes} {choice.node_words}{'s' if choice.nodes != 1 else ''}"
    replicas = f"{choice.replicas} replica{'s' if choice.replicas != 1 else ''}"
    billed = choice.nodes * node_gpus(plan, choice)  # whole nodes; replicas may use fewer GPUs
    used = f"{billed} GPUs billed, {choice.gpus} used by " if billed != choice.gpus else ""
    used = used or f"{billed} GPUs, "
    what = serving_name(choice.key, (o.key for o in plan.options))
    cost = f"{usd(choice.total_monthly_cost_usd)}/month"
    confidence = sizing_confidence(plan)
    sure = f", sized to meet the SLA with {confidence:.0%} confidence" if confidence else ""
    return f"Run {what} on {nodes} of {gpu_name(choice.gpu)} ({used}{replicas}): {cost}{sure}."


def node_gpus(plan: Plan, option: SizedOption) -> int:
    """GPUs in one node the option is billed by (the scenario's gpus_per_node, else the GPU's
    own shape): nodes x this is what the bill counts, `option.gpus` what the replicas use."""
    return node_shape(plan.scenario.options, option.gpu).gpus


def margin_sentence(plan: Plan) -> str | None:
    """How the choice compares with the runner-up (or the cheaper option a factor passed over)."""
    rec = plan.recommendation
    runner = rec.runner_up
    if runner is None or rec.choice is None:
        return None
    if rec.overridden_cheapest is not None:
        cheaper = rec.overridden_cheapest
        premium = rec.choice.total_monthly_cost_usd - cheaper.total_monthly_cost_usd
        return (
            f"It costs {usd(premium)}/month more than {option_name(cheaper.key)}, chosen for the "
            "factors you set."
        )
    margin, pct = rec.margin_usd or 0.0, rec.margin_pct or 0.0
    if margin <= TIE_USD:
        return f"{option_name(runner.key)} costs the same; this one needs fewer or equal GPUs."
    return f"That is {usd(margin)} ({pct:.0f}%) less than the runner-up, {option_name(runner.key)}."


def tie_sentence(plan: Plan, ranges: PlanRanges | None) -> str | None:
    """'vLLM TP2 and TP4 cost the same; each is the pick or tied with it in this share of the
    resampled plans: TP2 95%, TP4 60%.' when the choice costs the same as
    another option that resampling also picks (else None)."""
    tied = tied_options(plan, ranges)
    if len(tied) < 2 or ranges is None:
        return None
    shares = {option.key: option.pick_share for option in ranges.options}
    keys = [o.key for o in tied]
    names = [tp_text(k.tp) for k in keys] if _one_family(keys) else short_option_names(keys)
    split = ", ".join(
        f"{name} {shares.get(o.key, 0.0):.0%}" for name, o in zip(names, tied, strict=True)
    )
    return (
        f"{joined_names([o.key for o in tied])} cost the same; each is the pick or tied with it "
        f"in this share of the resampled plans: {split}."
    )


def tied_options(plan: Plan, ranges: PlanRanges | None) -> list[SizedOption]:
    """The choice and the options costing the same (within TIE_USD) that resampling also picks;
    [] when there is no such tie."""
    choice = plan.recommendation.choice
    if choice is None or ranges is None:
        return []
    shares = {option.key: option.pick_share for option in ranges.options}
    cost = choice.total_monthly_cost_usd
    tied = [
        o
        for o in plan.options
        if o is not choice
        and isinstance(o, SizedOption)
        and abs(o.total_monthly_cost_usd - cost) <= TIE_USD
        and shares.get(o.key, 0.0) > 0
    ]
    return [choice, *tied] if tied else []


def _one_family(keys: Sequence[OptionKey]) -> bool:
    """One engine on one GPU at one precision, every TP stated: names may say only the TP."""
    return len({(k.engine, k.gpu, k.precision) for k in keys}) == 1 and all(k.tp for k in keys)


def joined_names(keys: Sequence[OptionKey]) -> str:
    """'vLLM TP2 and TP4' (one engine, GPU and precision), else each short name joined."""
    if _one_family(keys):
        return f"{engine_name(keys[0].engine)} {and_list([tp_text(k.tp) for k in keys])}"
    return and_list(short_option_names(list(keys)))


def and_list(items: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def unstable_sentence(plan: Plan, ranges: PlanRanges | None) -> str | None:
    """'The pick is not settled: it holds in only 37% of the resampled plans; the others mostly
    pick X.' when it changes in at least UNSTABLE_SHARE of them (else None)."""
    if ranges is None or ranges.choice_change_share < UNSTABLE_SHARE:
        return None
    choice = plan.recommendation.choice
    tied = {o.key for o in tied_options(plan, ranges)}
    others = [
        o for o in ranges.options if (choice is None or o.key != choice.key) and o.key not in tied
    ]
    rival = max(others, key=lambda o: o.pick_share, default=None)
    to = f"; the others mostly pick {option_name(rival.key)}" if rival and rival.pick_share else ""
    return (
        f"The pick is not settled: it holds in only {1 - ranges.choice_change_share:.0%} of the "
        f"resampled plans{to}."
    )


def _choice_bullets(
    plan: Plan, choice: SizedOption, ranges: PlanRanges | None, *, comparison: bool
) -> list[str]:
    rec = plan.recommendation
    bullets: list[str] = []
    expected = expected_cost(choice)
    if expected is not None:
        bullets.append(
            f"Expected cost {usd(expected)}/month (the median fleet over the fits' error samples)."
        )
    spread = _range_bullet(choice, ranges, holds=comparison)
    if spread:
        bullets.append(spread)
    if rec.binding_text:
        bullets.append(f"What limits it: {_lower_first(rec.binding_text)}")
    budget = plan.scenario.budget
    if budget is not None and budget.monthly_usd > 0:
        share = 100.0 * choice.total_monthly_cost_usd / budget.monthly_usd
        bullets.append(f"Within the {usd(budget.monthly_usd)}/month budget ({share:.0f}% of it).")
    if not comparison and rec.runner_up is not None:
        bullets.append(
            f"Runner-up: {option_name(rec.runner_up.key)} at "
            f"{usd(rec.runner_up.total_monthly_cost_usd)}/month."
        )
    bullets.extend(_sentence(proper_names(text, plan.options)) for text in rec.factors_applied)
    caveats = caveat_line(choice)
    if caveats:
        bullets.append(caveats)
    return bullets


def caveat_line(option: SizedOption) -> str | None:
    """'Data caveats: a; b.' from the option's flags, each kind once, each cut to its gist."""
    caveats = list(dict.fromkeys(flag_gist(flag) for flag in group_flags(option.flags)))
    return f"Data caveats: {'; '.join(caveats)}." if caveats else None


def proper_names(text: str, options: Sequence[Option]) -> str:
    """The planner's own sentences name options by their canonical title ('tensorrt-llm on
    H100-SXM-80GB (TP 1, fp8)'); the same sentence with the names a person reads."""
    for option in options:
        text = text.replace(option.title(), option_name(option.key))
    return text


def _range_bullet(choice: SizedOption, ranges: PlanRanges | None, holds: bool) -> str | None:
    """The cost range, and how often the pick holds unless the headline already says it."""
    text = range_sentence(choice, ranges)
    return f"{text} {pick_holds_sentence(ranges)}" if text and ranges and holds else text


def range_sentence(choice: SizedOption, ranges: PlanRanges | None) -> str | None:
    """'Over 400 error samples the cost is P10 $A, P50 $B, P90 $C per month.', and, when whole
    nodes absorb the error (P10 = P90), the replicas that moved within them."""
    if ranges is None:
        return None
    match = next((o for o in ranges.options if o.key == choice.key), None)
    if match is None or match.total_monthly_cost_usd is None:
        return None
    cost = match.total_monthly_cost_usd
    text = (
        f"Over {ranges.samples} error samples the cost is P10 {usd(cost.p10)}, P50 "
        f"{usd(cost.p50)}, P90 {usd(cost.p90)} per month."
    )
    replicas = match.replicas
    if cost.p10 == cost.p90 and replicas is not None and match.nodes is not None:
        nodes = match.nodes.p50
        moved = (
            f"the replicas needed range from {replicas.p10:,.0f} to {replicas.p90:,.0f}"
            if replicas.p10 != replicas.p90
            else f"{replicas.p50:,.0f} replicas are enough in each"
        )
        text += (
            f" The range is one number because every sample fits in the same {nodes:,.0f} "
            f"whole nodes: {moved}."
        )
    return text


def pick_holds_sentence(ranges: PlanRanges) -> str:
    """The one measure of how settled the pick is, named and explained: 'The pick holds in 78%
    of the resampled plans (the same option, or one costing the same, is the cheapest that meets
    the SLA).'"""
    holds = 1.0 - ranges.choice_change_share
    return (
        f"The pick holds in {holds:.0%} of the resampled plans (it, or an option costing the "
        "same, is still the cheapest that meets the SLA)."
    )


def _nothing_brief(plan: Plan) -> Brief:
    """No recommendation: the binding reason first (Verdict's order), then what would change it."""
    rec = plan.recommendation
    gaps = plan.measurement_plan
    if not plan.options or (gaps is not None and gaps.no_data):
        return Brief(
            "No data: nothing stored measures this model and workload closely enough to plan "
            "on, so there is no recommendation. What to measure says which sweeps would answer "
            "it.",
            (),
            sound=False,
        )
    if rec.verdict is Verdict.NOT_SOUND and rec.flagged is not None:
        return _flagged_brief(rec.flagged, plan)
    if rec.verdict is Verdict.OVER_BUDGET and rec.over_budget is not None:
        return _over_budget_brief(plan, rec.over_budget)
    bullets = rejected_lines(plan.options)
    if rec.verdict is Verdict.OVER_POWER and rec.over_power is not None:
        ways = "plan fewer requests per second, a faster GPU or one measured drawing less"
        headline = f"Over the site's power limit: {rec.reason}. Raise the limit, or {ways}."
        return Brief(headline, tuple(bullets), sound=False)
    if rec.binding_text:
        bullets.insert(0, rec.binding_text)
    headline = "SLA not met: no option meets every SLA target at any fleet size."
    if plan.precision_note and (precision := plan.scenario.precision):
        headline = (
            f"SLA not met at {precision.upper()}: no option at this precision meets every SLA "
            f"target at any fleet size. {plan.precision_note}"
        )
    return Brief(headline, tuple(bullets), sound=False)


def _over_budget_brief(plan: Plan, cheapest: SizedOption) -> Brief:
    """'Over budget: the cheapest option that meets the SLA, X, costs $A/month, $D (P%) more
    than the $B/month budget.' and what the budget does buy."""
    budget = plan.scenario.budget.monthly_usd if plan.scenario.budget else 0.0
    cost = cheapest.total_monthly_cost_usd
    over = cost - budget
    share = f" ({100.0 * over / budget:.0f}%)" if budget > 0 else ""
    headline = (
        f"Over budget: the cheapest option that meets the SLA, {option_name(cheapest.key)}, costs "
        f"{usd(cost)}/month, {usd(over)}{share} more than the {usd(budget)}/month budget. "
        f"{budget_buys(plan, cheapest)}"
    )
    flagged = [
        o for o in plan.options if isinstance(o, SizedOption) and o.concerns and o.within_budget
    ]
    bullets = [
        f"Within the budget only on data with concerns: {option_name(o.key)} at "
        f"{usd(o.total_monthly_cost_usd)}/month ({flag_gist(o.concerns[0])}); measure it before "
        "buying on it."
        for o in sorted(flagged, key=lambda o: o.total_monthly_cost_usd)[:1]
    ]
    return Brief(headline, (*bullets, *rejected_lines(plan.options)), sound=False)


def budget_buys(plan: Plan, option: SizedOption) -> str:
    """'The budget buys enough of it for 58.3 requests/s at peak (73% of the 80 planned).'"""
    served, demand = option.budget_capacity, plan.scenario.demand
    if served is None:
        return ""
    if served <= 0:
        return "The budget does not buy one replica of it."
    share = 100.0 * served / demand.amount if demand.amount > 0 else math.nan
    return (
        f"The budget buys enough of it for {amount_text(round(served, 1))} "
        f"{option.budget_capacity_unit} "
        f"({share:.0f}% of the {amount_text(demand.amount)} planned)."
    )


def _flagged_brief(flagged: SizedOption, plan: Plan) -> Brief:
    """Nothing sound meets the SLA; say what would on data with concerns, and why not to buy."""
    budget = plan.scenario.budget
    over = (
        f", over the {usd(budget.monthly_usd)}/month budget"
        if budget is not None and not flagged.within_budget
        else ""
    )
    headline = (
        "Data not sound: nothing that meets the SLA rests on data that can be verified. Only on "
        f"data with concerns would {option_name(flagged.key)} meet it "
        f"({usd(flagged.total_monthly_cost_usd)}/month{over})."
    )
    concerns = [f"Concern: {_lower_first(flag_gist(text))}." for text in flagged.concerns]
    advice = "Measure this deployment (capplan probe) before buying on it."
    return Brief(headline, (*dict.fromkeys(concerns), advice), sound=False)


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else f"{text}."


def _lower_first(text: str) -> str:
    return text[0].lower() + text[1:] if text[:2] != text[:2].upper() else text
