"""`capplan plan` in the terminal: the headline and its bullets, the options in 100 columns,
the ranges, what if demand grows, what was not an option, the sensitivity and what to measure,
drawn from a planning session (workflows.session) that has already made every number."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from reports.terminal_tables import readable

if TYPE_CHECKING:  # rich and the renderers load when a plan is printed
    from collections.abc import Callable

    from rich.console import Console
    from rich.table import Table

    from planner.analysis.autoscale import ScalingView
    from planner.analysis.budget import BudgetPlan
    from planner.analysis.capacity import Plan
    from planner.analysis.measurement_plan import MeasurementPlan
    from planner.analysis.sensitivity import SensitivityRow
    from planner.analysis.uncertainty import OptionRange, PlanRanges
    from planner.analysis.what_if import WhatIfRow
    from planner.sizing.options import SizedOption


def print_plan(
    plan: Plan,
    ranges: PlanRanges | None,
    swings: list[SensitivityRow] | None,
    what_if: tuple[WhatIfRow, ...],
    *,
    out: Console,
    err: Console,
    horizon: Callable[[], BudgetPlan | None] | None = None,
    scaling: ScalingView | None = None,
) -> None:
    """The whole plan as the terminal shows it: what to measure first when no data backs any
    option, else the plan, then what to measure."""
    from reports.brief import recommendation_brief  # noqa: PLC0415
    from reports.flag_text import group_warnings  # noqa: PLC0415
    from reports.names import rejected_lines  # noqa: PLC0415

    gaps = plan.measurement_plan
    if gaps is not None and gaps.no_data:
        print_measurements(gaps, out, "")  # first: the options below are no answer
    brief = recommendation_brief(plan, ranges)
    _say(out, brief.headline)
    choice = plan.recommendation.choice
    for line in (*brief.bullets, *([_money_line(choice)] if choice else ())):
        _say(out, f"  - {line}")
    for warning in group_warnings(plan.warnings):
        err.print(f"warning: {warning}", markup=False, highlight=False)
    out.print(_plan_table(plan, ranges))
    if ranges:
        _say(out, f"Ranges: {ranges.samples} error samples per option. {ranges.method}")
    _print_what_if(plan, what_if, out)
    if scaling is not None:
        from reports.scaling_view import scaling_lines  # noqa: PLC0415

        _say(out, "Autoscaled against static:")
        for line in scaling_lines(scaling):
            _say(out, f"  - {line}")
    _print_horizon(horizon, out, err)
    if choice is not None:
        for line in rejected_lines(plan.options):
            _say(out, f"not an option: {line}")
    if swings is not None:
        _print_sensitivity(swings, out)
    if gaps is not None and not gaps.no_data:
        print_measurements(gaps, out)


def print_measurements(measurements: MeasurementPlan, out: Console, *after: str) -> None:
    """What to measure, line by line (also the whole answer when no curve backs any option)."""
    from reports.measurement import measurement_text  # noqa: PLC0415

    for line in [*measurement_text(measurements), *after]:
        out.print(line, markup=False, highlight=False, soft_wrap=True)


_SHORT_UNITS = {
    "peak_requests_per_s": "req/s",
    "peak_concurrent_streams": "streams",
    "monthly_output_tokens": "tokens/month",
}


def _print_what_if(plan: Plan, rows: tuple[WhatIfRow, ...], out: Console) -> None:
    """The plan at each demand multiplier, in the terminal's width (the pick's name wraps)."""
    from rich import box  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    from reports.what_if_view import what_if_sentence, what_if_text  # noqa: PLC0415

    if len(rows) < 2:
        return
    header, body = what_if_text(rows)
    unit = plan.scenario.demand.unit
    short = _SHORT_UNITS[plan.scenario.demand.kind]
    table = Table(
        box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True,
        title="What if demand grows", title_justify="left",
    )  # fmt: skip
    for title in header:
        wraps, right = title == "Pick", title.startswith(("$", "Nodes"))
        table.add_column(
            short if title == "Peak demand" else title,
            no_wrap=not wraps,
            ratio=1 if wraps else None,
            justify="right" if right else "left",
        )
    for cells in body:
        cells[1] = cells[1].removesuffix(unit).strip()
        table.add_row(*cells)
    out.print(table)
    if (note := what_if_sentence(rows)) is not None:
        _say(out, note)


def _print_horizon(
    horizon: Callable[[], BudgetPlan | None] | None, out: Console, err: Console
) -> None:
    """The budget over the scenario's months, when it asks for one (why not, when it cannot)."""
    from errors import PlanningError  # noqa: PLC0415
    from reports.budget_view import print_budget  # noqa: PLC0415

    if horizon is None:
        return
    try:
        budget = horizon()
    except PlanningError as exc:
        err.print(f"horizon: {exc}", markup=False, highlight=False)
        return
    if budget is not None:
        print_budget(budget, out)


def _say(out: Console, text: str) -> None:
    out.print(text, markup=False, highlight=False)


def _plan_table(plan: Plan, ranges: PlanRanges | None) -> Table:
    """The decision columns in 100 terminal columns; --json and --export carry the rest."""
    from rich import box  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    from reports.lead_table import options_lead_table  # noqa: PLC0415
    from reports.names import engine_tp, gpu_name  # noqa: PLC0415

    by_key = {r.key: r for r in ranges.options} if ranges else {}
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
    for title in ("", "option", "GPU", "SLA", "nodes", "GPUs", "$/month", "$/1M"):
        table.add_column(title, no_wrap=True, justify="right" if "$" in title else "left")
    table.add_column("limited by", ratio=1)
    if ranges:
        table.add_column("P10-P90 $", no_wrap=True, justify="right")
    choice = plan.recommendation.choice
    for option, row in zip(plan.options, options_lead_table(plan), strict=True):
        values = list(row.values())
        name = engine_tp(option.engine, option.tp).replace(" (TP unknown)", " TP?")
        name += f" {option.key.layout}" if option.key.layout else ""
        cells = ["*" if option is choice else "", name, gpu_name(option.gpu)]
        cells += [str(values[1]).replace("yes, on flagged data", "flag"), *map(_cell, values[2:-1])]
        cells.append(_cell(values[-1]).replace("end of measured data", "end of data"))
        table.add_row(*cells, *([_range_cell(by_key.get(option.key))] if ranges else []))
    return table


def _money_line(option: SizedOption) -> str:
    """The chosen option's cost, line by line, as finance reads it."""
    lines = ", ".join(f"{line.name} ${line.usd:,.0f}" for line in option.cost.fleet.lines)
    parts = [
        f"Cost: compute ${option.monthly_cost_usd:,.0f}/month ({lines})",
        f"engine operations ${option.ops_cost_usd:,.2f}",
        f"total ${option.total_monthly_cost_usd:,.0f}/month at {option.confidence:.0%} "
        f"confidence (expected ${option.expected_monthly_cost_usd:,.0f})",
        f"${option.usd_per_million_output_tokens:,.2f} per 1M output tokens served",
        f"{option.gpu_hours_per_month:,.0f} GPU-hours/month",
    ]
    if option.autoscale_saving_usd is not None:
        parts.append(f"autoscaling saves ${option.autoscale_saving_usd:,.0f}/month vs static")
    if option.budget_capacity is not None:
        parts.append(
            f"the budget serves up to {option.budget_capacity:,.1f} {option.budget_capacity_unit}"
        )
    return "; ".join(parts) + "."


def _quantile(value: float, form: str) -> str:
    """A percentile, or 'SLA missed' where that share of the samples misses the SLA (inf)."""
    return form.format(value) if math.isfinite(value) else "SLA missed"


def _range_cell(found: OptionRange | None) -> str:
    if found is None or found.total_monthly_cost_usd is None:
        return "-"
    cost = found.total_monthly_cost_usd
    return "-".join(_quantile(v / 1000, "{:,.0f}k") for v in (cost.p10, cost.p90))


def _print_sensitivity(swings: list[SensitivityRow], out: Console) -> None:
    from rich.table import Table  # noqa: PLC0415

    from reports.export import sensitivity_rows  # noqa: PLC0415

    table = Table("input moved", "low / base / high", "cost change low / high", "flips")
    for row in sensitivity_rows(swings):
        low, high = row["cost_change_low_pct"], row["cost_change_high_pct"]
        table.add_row(
            str(row["input"]),
            f"{_cell(row['low'])} / {_cell(row['base'])} / {_cell(row['high'])}",
            f"{_signed(low)} / {_signed(high)}",
            _cell(row["recommendation_flips"]),
        )
    out.print(readable(table, out))


def _signed(value: object) -> str:
    return f"{value:+.1f}%" if isinstance(value, float) else "cannot serve"


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,d}"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() or value >= 100 else f"{value:,.2f}"
    return str(value)
