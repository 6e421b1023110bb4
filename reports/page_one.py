"""Page 1 of the capacity report, the page finance signs: what to buy; the monthly and annual cost
at the stated confidence and the expected cost; the budget verdict; how sure (the range, how often
the pick changes); what the numbers rest on (measured, published, projected); what the cost
leaves out; the prices with source, kind and age. Pure: a Report in, plain rows and lines out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from planner.analysis.recommend import Verdict
from planner.physics.roofline import check_curve
from planner.sizing.options import Option, SizedOption
from reports.brief import (
    and_list,
    budget_buys,
    caveat_line,
    expected_cost,
    margin_sentence,
    node_gpus,
    pick_holds_sentence,
    proper_names,
    range_sentence,
    recommendation_brief,
    sizing_confidence,
    tie_sentence,
    unstable_sentence,
    usd,
)
from reports.budget_view import budget_headline, money_text
from reports.flag_text import flag_gist, group_flags
from reports.model import Report
from reports.names import gpu_name, option_name, precision_name, provenance_word
from reports.price_rows import STALE_MONTHS, PriceRow, mix_flags
from reports.what_if_view import what_if_sentence, what_if_text

MONTHS_PER_YEAR = 12
# What a plan's cost is made of, and what it never includes (unless typed in as a price).
COST_COVERS = "GPU rental at the quoted $/GPU-hour and engine operations (rebuilds) only"
LEFT_OUT = (
    "host CPU and memory not in the quoted instance",
    "network and load balancers",
    "storage for weights, logs and caches",
    "data egress",
    "staff to run the fleet",
    "software licences and support",
)
# Data kinds in the order a reader trusts them.
KINDS = ("measured", "imported", "published", "adjusted", "projected", "simulated")


@dataclass(frozen=True, slots=True)
class SourceFlags:
    """One source of data (a stored run, or a projection of it) and its flags, said once."""

    source: str
    kind: str
    options: tuple[str, ...]
    flags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PageOne:
    """Everything page 1 prints, as text and (label, value) rows."""

    buy: str
    buy_price: tuple[str, ...]  # per GPU bought: the price, its source and date, its warnings
    headline: str
    bullets: tuple[str, ...]
    money: tuple[tuple[str, str], ...]
    sureness: tuple[str, ...]
    basis: tuple[str, ...]
    left_out: str
    price_flags: tuple[str, ...]
    price_summary: tuple[str, ...]  # every stale or mixed quote, a line per kind of warning
    what_if: tuple[tuple[str, ...], ...]  # header row first, then one row per multiplier
    what_if_note: str | None
    # The months ahead (empty: not asked): the cheapest way and its range, when it overtakes
    # the others; a table of the ways (header row first).
    over_time: tuple[str, ...] = ()
    over_time_table: tuple[tuple[str, ...], ...] = ()


def page_one(report: Report) -> PageOne:
    """Page 1's content from the report model."""
    plan = report.plan
    choice = plan.recommendation.choice
    brief = recommendation_brief(plan)
    return PageOne(
        buy=_buy(report, choice),
        buy_price=tuple(_buy_price(report, choice)),
        headline=brief.headline,
        bullets=tuple(_why(report, choice)) if choice else brief.bullets,
        money=tuple(_money(report, choice)),
        sureness=tuple(_sureness(report, choice)),
        basis=tuple(_basis(plan.options, choice)),
        left_out=_left_out(choice),
        price_flags=(*(f for row in report.prices for f in row.flags), *mix_flags(report.prices)),
        price_summary=tuple(price_summary(report.prices)),
        what_if=_what_if(report),
        what_if_note=what_if_sentence(report.what_if),
        over_time=over_time_lines(report),
        over_time_table=over_time_table(report),
    )


def over_time_lines(report: Report) -> tuple[str, ...]:
    """Page 1's months ahead: the cheapest way with its P10-P90, when it overtakes each other
    way, what it decides, and what a 20% forecast miss costs under it."""
    budget = report.budget
    if budget is None:
        return ()
    best = budget.cheapest
    lines = [budget_headline(budget)]
    lines += [c.text() for c in budget.crossovers if best.name in (c.path, c.other)]
    if best.decisions:
        lines.append(f"{best.name}: {best.decisions}")
    for miss in best.misses:
        if miss.regret_usd > 0.5:
            lines.append(
                f"if demand is {miss.scale - 1:+.0%} of the forecast, {best.name}'s decisions "
                f"cost {money_text(miss.regret_usd)} more than foreseen ones would"
            )
    return tuple(lines)


def over_time_table(report: Report) -> tuple[tuple[str, ...], ...]:
    """The ways to pay over the months ahead, cheapest first (header row first)."""
    budget = report.budget
    if budget is None:
        return ()
    rows = [
        (
            path.name,
            money_text(path.total_usd),
            f"{money_text(path.low_total_usd)}-{money_text(path.high_total_usd)}",
            money_text(path.months[0].usd),
            money_text(path.months[-1].usd),
        )
        for path in sorted(budget.paths, key=lambda p: p.total_usd)
    ]
    months = len(budget.months)
    header = ("Way", f"{months} months", "P10-P90", "month 1", f"month {months}")
    return (header, *rows)


def _what_if(report: Report) -> tuple[tuple[str, ...], ...]:
    if len(report.what_if) < 2:
        return ()
    header, rows = what_if_text(report.what_if)
    return (tuple(header), *(tuple(row) for row in rows))


def _why(report: Report, choice: SizedOption) -> list[str]:
    """Why this option: what limits it, the runner-up, the factors, the data caveats (the
    money and the range have their own rows on the page)."""
    rec = report.plan.recommendation
    factors = [proper_names(text, report.plan.options) for text in rec.factors_applied]
    lines = [rec.binding_text, margin_sentence(report.plan), *factors]
    return [line for line in (*lines, caveat_line(choice)) if line]


def _buy(report: Report, choice: SizedOption | None) -> str:
    if choice is None:
        return f"Nothing to buy yet: {_why_nothing(report)}"
    nodes = f"{choice.nodes} x {choice.node_words}{'s' if choice.nodes != 1 else ''}"
    return (
        f"Buy {nodes} of {gpu_name(choice.gpu)} ({choice.nodes * node_gpus(report.plan, choice)} "
        f"GPUs billed, {choice.gpus} in use), serving with "
        f"{option_name(choice.key, precision=False).split(' on ')[0]} "
        f"({precision_name(choice.key.precision)})"
    )


def _buy_price(report: Report, choice: SizedOption | None) -> list[str]:
    """'Priced at $3.50/GPU-hour (on demand): Nebius H200 preset ... (docs.nebius.com), as of
    2025-10-22; the quote is 13 months old, ...; a 1-GPU quote, while the bill is for 8-GPU
    nodes' for the GPU bought."""
    if choice is None:
        return []
    lines = []
    for row in (p for p in report.prices if p.gpu == choice.gpu):
        if row.origin == "scenario" and not row.kind:
            lines.append(
                f"Priced at ${row.usd_per_gpu_hour:,.2f}/GPU-hour, typed in the scenario (no "
                "catalog quote, so no source or date to check it against)."
            )
            continue
        site = f" ({site_of(row.reference)})" if row.reference else ""
        notes = []
        if row.age_months is None:
            notes.append("the quote has no date: check it is current")
        elif row.age_months > STALE_MONTHS:
            notes.append(
                f"the quote is {row.age_months} months old, older than {STALE_MONTHS} months: "
                "check the current price"
            )
        per_node = node_gpus(report.plan, choice)
        if row.gpus_per_quote and row.gpus_per_quote != per_node:
            notes.append(
                f"a {row.gpus_per_quote}-GPU quote, while the bill is for {choice.node_words}s"
            )
        said = "".join(f"; {note}" for note in notes)
        lines.append(
            f"Priced at ${row.usd_per_gpu_hour:,.2f}/GPU-hour ({row.kind.replace('_', ' ')}): "
            f"{row.source.split(' (')[0]}{site}, as of {row.as_of}{said}."
        )
    return lines


def price_summary(rows: Sequence[PriceRow]) -> list[str]:
    """Every stale quote and every mix of quote sizes or kinds, one line each kind (page 1 has
    room for these; the per-pair lines are in the appendix)."""
    stale = [
        f"{gpu_name(r.gpu)} {r.age_months} months"
        for r in rows
        if r.age_months is not None and r.age_months > STALE_MONTHS
    ]
    undated = [gpu_name(r.gpu) for r in rows if r.kind and r.age_months is None]
    sizes: dict[int, list[str]] = {}
    for r in rows:
        if r.gpus_per_quote:
            sizes.setdefault(r.gpus_per_quote, []).append(gpu_name(r.gpu))
    kinds = {r.kind for r in rows if r.kind}
    lines = []
    if stale:
        lines.append(
            f"Quotes older than {STALE_MONTHS} months: {and_list(stale)}; check current prices."
        )
    if undated:
        lines.append(f"Quotes with no date: {and_list(undated)}; check they are current.")
    if len(sizes) > 1:
        parts = [f"{and_list(names)} from {n}-GPU" for n, names in sorted(sizes.items())]
        lines.append(
            f"Mixed quote sizes: {'; '.join(parts)} instances; node and VM prices may not compare."
        )
    if len(kinds) > 1:
        named = and_list(sorted(k.replace("_", " ") for k in kinds))
        lines.append(f"Mixed quote kinds: {named}; the options do not compare on equal terms.")
    return lines


def site_of(reference: str) -> str:
    """A quote's source cut to its site ('www.opslyft.com'); the full text is in the XLSX."""
    match = re.search(r"https?://([^/\s]+)", reference)
    return match[1] if match else reference[:40]


def _why_nothing(report: Report) -> str:
    plan = report.plan
    gaps = plan.measurement_plan
    verdict = plan.recommendation.verdict
    if not plan.options or (gaps is not None and gaps.no_data):
        return "no data: no measurement answers this scenario (see What to measure)"
    if verdict is Verdict.NOT_SOUND:
        return "data not sound: only data with concerns meets the SLA"
    if verdict is Verdict.OVER_BUDGET:
        return "over budget: what meets the SLA costs more than the budget"
    if verdict is Verdict.OVER_POWER:
        return "over the power limit: what meets the SLA needs more power than the site has"
    return "SLA not met: no option meets every target at any fleet size"


def _money(report: Report, choice: SizedOption | None) -> list[tuple[str, str]]:
    plan = report.plan
    confidence = sizing_confidence(plan)
    at = f"at {confidence:.0%} confidence" if confidence else "as planned"
    budget = plan.scenario.budget
    rows: list[tuple[str, str]] = []
    if choice is not None:
        monthly = choice.total_monthly_cost_usd
        rows += [
            (f"Monthly cost {at}", f"{usd(monthly)}/month"),
            (f"Annual cost {at}", f"{usd(monthly * MONTHS_PER_YEAR)}/year"),
        ]
        expected = expected_cost(choice)
        rows.append(
            (
                "Expected cost (median fleet)",
                f"{usd(expected)}/month, {usd(expected * MONTHS_PER_YEAR)}/year"
                if expected is not None
                else "not computed by this plan",
            )
        )
        if confidence:
            rows.append(
                ("Confidence", f"the fleet meets the SLA with {confidence:.0%} probability")
            )
    rows.append(("Budget", _verdict(choice, budget.monthly_usd if budget else None, report)))
    return rows


def _verdict(choice: SizedOption | None, budget: float | None, report: Report) -> str:
    if budget is None:
        return "no budget given"
    if choice is not None:
        cost = choice.total_monthly_cost_usd
        return (
            f"WITHIN the {usd(budget)}/month budget: uses {usd(cost)} ({100 * cost / budget:.0f}%),"
            f" leaves {usd(budget - cost)}/month"
        )
    rec = report.plan.recommendation
    if rec.verdict is Verdict.OVER_BUDGET and rec.over_budget is not None:
        cheapest = rec.over_budget.total_monthly_cost_usd
        return (
            f"OVER: the cheapest option meeting the SLA costs {usd(cheapest)}/month, "
            f"{usd(cheapest - budget)} over the {usd(budget)}/month budget. "
            f"{budget_buys(report.plan, rec.over_budget)}"
        ).strip()
    return f"{usd(budget)}/month given; no verdict: {_why_nothing(report)}"


def _sureness(report: Report, choice: SizedOption | None) -> list[str]:
    """How sure, as one measure explained once: what the resampling does, how often the pick
    holds, the cost range (and why it may be one number), a tie or an unsettled pick."""
    ranges = report.ranges
    if ranges is None or choice is None:
        return ["No resampling was run for this report, so there is no range."]
    unstable = unstable_sentence(report.plan, ranges)
    holds = unstable or pick_holds_sentence(ranges)
    if ranges.no_choice_share:
        holds += f" In {ranges.no_choice_share:.0%} nothing met the SLA."
    lines = [
        f"How this is measured: each curve's held-out error (and, for adjusted or projected "
        f"data, the validated error of that estimate) was drawn {ranges.samples} times and the "
        "plan re-sized for each draw.",
        holds,
    ]
    cost = range_sentence(choice, ranges)
    note = None if unstable else tie_sentence(report.plan, ranges)
    return [*lines, *([cost] if cost else []), *([note] if note else [])]


def _basis(options: Sequence[Option], choice: SizedOption | None) -> list[str]:
    """'Recommended option: published data. Options compared: 9 published, 2 projected.'"""
    lines = []
    if choice is not None:
        kind = provenance_word(choice.curve.provenance)
        lines.append(f"The recommended option rests on {kind} data ({_source(choice)}).")
    counts = dict.fromkeys(KINDS, 0)
    for option in options:
        counts[option.curve.provenance] = counts.get(option.curve.provenance, 0) + 1
    parts = [f"{n} {provenance_word(kind)}" for kind, n in counts.items() if n]
    lines.append(f"Options compared: {and_list(parts)}." if parts else "No option compared.")
    lines.append(
        "Measured: run here with capplan probe or an imported benchmark; published: numbers "
        "from a vendor or article; projected: scaled to another GPU by its datasheet; adjusted: "
        "moved to this workload from a nearby one."
    )
    return lines


def _source(option: Option) -> str:
    """'run 5: AIConfigurator silicon sample', or what the curve says when it has no run."""
    curve = option.curve
    run = f"run {curve.run_id}" if curve.run_id is not None else "no stored run"
    return f"{run}: {curve.label}" if curve.label else run


def _left_out(choice: SizedOption | None) -> str:
    ops = ""
    if choice is not None and choice.ops_cost_usd > 0:
        ops = f" (operations: {usd(choice.ops_cost_usd)}/month as entered)"
    return f"The cost covers {COST_COVERS}{ops}. It leaves out: {'; '.join(LEFT_OUT)}."


def source_flags(options: Sequence[Option]) -> tuple[SourceFlags, ...]:
    """Each source's flags once (a data set such as 'aiconfigurator-silicon-sample', however
    many runs and options it backs), with the options built on it."""
    groups: dict[str, tuple[list[str], list[str], list[str], list[int]]] = {}
    for option in options:
        curve = option.curve
        label = curve.label or (f"run {curve.run_id}" if curve.run_id is not None else "unnamed")
        names, kinds, flags, runs = groups.setdefault(label, ([], [], [], []))
        names.append(option_name(option.key))
        kinds.append(provenance_word(curve.provenance))
        flags.extend([*curve.flags, *check_curve(curve).flags])
        runs.extend([] if curve.run_id is None else [curve.run_id])
    return tuple(
        SourceFlags(
            source=_runs_text(label, runs),
            kind=", ".join(dict.fromkeys(kinds)),
            options=tuple(dict.fromkeys(names)),
            flags=tuple(dict.fromkeys(flag_gist(f) for f in group_flags(flags))),
        )
        for label, (names, kinds, flags, runs) in groups.items()
    )


def _runs_text(label: str, runs: list[int]) -> str:
    ids = sorted(set(runs))
    if not ids or label == f"run {ids[0]}":
        return label
    return f"{label} (run{'s' if len(ids) > 1 else ''} {', '.join(map(str, ids))})"
