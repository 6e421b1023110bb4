"""A budget over time (planner.analysis.budget) for people: the JSON document's `horizon` section,
the sentences that lead it (the cheapest way, its range, when it overtakes the others, what a
forecast miss costs), and the terminal's tables."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reports.names import option_name

if TYPE_CHECKING:
    from rich.console import Console

    from planner.analysis.budget import BudgetPlan
    from planner.analysis.paths import PaymentPath

__all__ = [
    "budget_headline",
    "budget_lines",
    "budget_to_dict",
    "million_tokens",
    "money_text",
    "print_budget",
]


def budget_to_dict(budget: BudgetPlan) -> dict[str, object]:
    """The horizon as plain JSON values: months, paths with their months, the cheapest, the
    crossovers, power, lenses and what was not priced."""
    power = budget.power
    cheapest = budget.cheapest
    months = [
        {
            "month": m.month,
            "demand": m.demand,
            "demand_unit": m.option.budget_capacity_unit,
            "nodes": m.nodes,
            "gpus": m.gpus,
            "replicas": m.replicas,
            "nodes_p10": m.low_nodes,
            "nodes_p90": m.high_nodes,
            "input_tokens": m.input_tokens,
            "output_tokens": m.output_tokens,
            "facility_kw": power.monthly_kw[index],
            "kwh_per_million_tokens": power.kwh_per_million_tokens[index],
        }
        for index, m in enumerate(budget.months)
    ]
    return {
        "pick": option_name(budget.pick.key),
        "confidence": budget.pick.confidence,
        "months": months,
        "paths": [_path_dict(p) for p in budget.paths],
        "cheapest": {
            "path": cheapest.name,
            "total_usd": cheapest.total_usd,
            "p10_total_usd": cheapest.low_total_usd,
            "p90_total_usd": cheapest.high_total_usd,
        },
        "crossovers": [
            {"path": c.path, "other": c.other, "month": c.month, "basis": c.basis, "text": c.text()}
            for c in budget.crossovers
        ],
        "power": _power_dict(budget),
        "lenses": [
            {"name": lens.name, "usd_per_gpu_hour": lens.usd_per_gpu_hour, "source": lens.source}
            for lens in budget.lenses
        ],
        "not_priced": list(budget.unavailable),
        "headline": budget_headline(budget),
        "notes": [*budget.notes, *budget_lines(budget)],
    }


def _power_dict(budget: BudgetPlan) -> dict[str, object]:
    power = budget.power
    return {
        "node_it_kw": power.node_it_kw,
        "node_facility_kw": power.node_facility_kw,
        "limit_kw": power.limit_kw,
        "months_over_limit": list(power.months_over),
        "max_nodes_in_limit": power.max_nodes,
        "basis": power.text,
        "power_measured": power.measured,
        "options_month_1": [
            {
                "option": o.option,
                "nodes": o.nodes,
                "facility_kw": o.facility_kw,
                "kwh_per_million_tokens": o.kwh_per_million_tokens,
                "fits_limit": o.fits,
                "power_measured": o.measured,
            }
            for o in power.options
        ],
    }


def _path_dict(path: PaymentPath) -> dict[str, object]:
    cumulative, cash = path.cumulative(), path.cumulative(cash=True)
    return {
        "name": path.name,
        "basis": path.basis,
        "decisions": path.decisions,
        "total_usd": path.total_usd,
        "p10_total_usd": path.low_total_usd,
        "p90_total_usd": path.high_total_usd,
        "owed_after_horizon_usd": path.owed_after_usd,
        "notes": list(path.notes),
        "forecast_misses": [
            {
                "demand_scale": miss.scale,
                "total_usd": miss.total_usd,
                "foreseen_total_usd": miss.foreseen_usd,
                "cost_of_the_miss_usd": miss.regret_usd,
                "idle_held_usd": miss.wasted_usd,
                "on_demand_above_held_usd": miss.premium_usd,
            }
            for miss in path.misses
        ],
        "months": [
            {
                "month": m.month,
                "usd": m.usd,
                "p10_usd": m.low_usd,
                "p90_usd": m.high_usd,
                "cash_usd": m.cash_usd,
                "cumulative_usd": cumulative[i],
                "cumulative_cash_usd": cash[i],
                "held_nodes": m.held_nodes,
                "usd_per_million_input": m.usd_per_m_input,
                "usd_per_million_output": m.usd_per_m_output,
                "usd_per_million_blended": m.usd_per_m_blended,
            }
            for i, m in enumerate(path.months)
        ],
    }


def budget_headline(budget: BudgetPlan) -> str:
    """'Over 24 months, owning is the cheapest way: $1.00M (P10-P90 $0.97M-$1.00M), against
    $1.60M on-demand ...'."""
    months = len(budget.months)
    best = budget.cheapest
    others = sorted((p for p in budget.paths if p is not best), key=lambda p: p.total_usd)
    against = ", ".join(f"{money_text(p.total_usd)} {p.name}" for p in others)
    text = (
        f"Over {months} months, {best.name} is the cheapest way to serve "
        f"{option_name(budget.pick.key)}: {money_text(best.total_usd)} (P10-P90 "
        f"{money_text(best.low_total_usd)}-{money_text(best.high_total_usd)})"
    )
    return f"{text}, against {against}." if against else f"{text}."


def budget_lines(budget: BudgetPlan) -> list[str]:
    """The sentences under the headline: decisions, crossovers, forecast misses, power."""
    lines = [c.text() for c in budget.crossovers]
    for path in budget.paths:
        if path.decisions:
            lines.append(f"{path.name}: {path.decisions}")
        if path.owed_after_usd > 0:
            lines.append(
                f"{path.name}: {money_text(path.owed_after_usd)} of commitments run on after the "
                "horizon (not in its total)"
            )
        for miss in path.misses:
            if miss.regret_usd > 0.5:
                lines.append(
                    f"{path.name}: if demand is {miss.scale - 1:+.0%} of the forecast, its "
                    f"decisions cost {money_text(miss.regret_usd)} more than foreseen ones would"
                    + (f" ({money_text(miss.wasted_usd)} idle)" if miss.wasted_usd > 0.5 else "")
                )
    power = budget.power
    if power.limit_kw is not None:
        if power.months_over:
            first = power.months_over[0]
            fits = [m for m in budget.months if m.month < first]
            served = (
                f"the site hosts the fleet through month {fits[-1].month} (demand "
                f"{fits[-1].demand:,.4g} {budget.pick.budget_capacity_unit})"
                if fits
                else "the site cannot host even the first month's fleet"
            )
            short = max(power.monthly_kw) - power.limit_kw
            lines.append(
                f"power: the fleet needs more than {power.limit_kw:,.0f} kW from month {first} "
                f"({power.max_nodes} node(s) fit): {served}; the last month needs "
                f"{short:,.0f} kW more"
            )
        else:
            peak = max(power.monthly_kw)
            lines.append(f"power: at most {peak:,.0f} kW of {power.limit_kw:,.0f} kW")
    lines.extend(f"not priced: {reason}" for reason in budget.unavailable)
    return lines


def print_budget(budget: BudgetPlan, out: Console) -> None:
    """The horizon in the terminal: headline, the paths, the months."""
    from rich import box  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    out.print(budget_headline(budget), markup=False, highlight=False)
    paths = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True,
                  title="Ways to pay", title_justify="left")  # fmt: skip
    for title in ("way", "total", "P10-P90", "$/1M blended"):
        paths.add_column(title, justify="left" if title == "way" else "right", no_wrap=True)
    paths.add_column("basis", ratio=1)
    tokens = million_tokens(budget)
    for path in budget.paths:
        paths.add_row(
            path.name,
            money_text(path.total_usd),
            f"{money_text(path.low_total_usd)}-{money_text(path.high_total_usd)}",
            f"${path.total_usd / tokens:.3f}",
            Text(path.basis),  # quotes a scenario's and a catalog's text: never markup
        )
    out.print(paths)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True,
                  title="Month by month", title_justify="left")  # fmt: skip
    for title in ("month", "demand", "nodes (P10-P90)", "kW", *(p.name for p in budget.paths)):
        table.add_column(title, justify="right", no_wrap=True)
    for index, m in enumerate(budget.months):
        table.add_row(
            str(m.month),
            f"{m.demand:,.4g}",
            f"{m.nodes} ({m.low_nodes}-{m.high_nodes})",
            f"{budget.power.monthly_kw[index]:,.0f}",
            *(money_text(p.months[index].usd) for p in budget.paths),
        )
    out.print(table)
    for line in budget_lines(budget):
        out.print(f"  - {line}", markup=False, highlight=False)


def million_tokens(budget: BudgetPlan) -> float:
    """Input and output tokens over the whole horizon, in millions (a way's total over it is
    its blended $/1M)."""
    return sum(m.input_tokens + m.output_tokens for m in budget.months) / 1e6


def money_text(usd: float) -> str:
    """$1.23M, $456k or $789: money as a page reads it."""
    if abs(usd) >= 1e6:
        return f"${usd / 1e6:,.2f}M"
    if abs(usd) >= 1e4:
        return f"${usd / 1e3:,.0f}k"
    return f"${usd:,.0f}"
