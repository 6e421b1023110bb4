"""`capplan plan`: options, cost ranges, sensitivity and exports (the report: cli/report.py)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cli.common import (
    DbOption,
    JsonOption,
    app,
    err,
    guard,
    open_engine,
    out,
    print_json,
    within,
)
from cli.tables import readable
from workflows.limits import SAMPLES

if TYPE_CHECKING:  # the planner, the store and the renderers load when a command runs
    from collections.abc import Callable

    from rich.table import Table

    from planner.analysis.capacity import Plan
    from planner.analysis.measurement_plan import MeasurementPlan
    from planner.analysis.sensitivity import SensitivityRow
    from planner.analysis.uncertainty import OptionRange, PlanRanges
    from planner.inputs.scenario import Scenario
    from planner.sizing.options import SizedOption
    from workflows.outputs import OutputRule
    from workflows.planning import Planned


WhatIfOption = Annotated[
    str | None,
    typer.Option(
        "--what-if",
        metavar="MULTIPLIERS",
        help="Demand multiples to plan side by side, e.g. 1,1.5,2 or 1,2,4 (default: the "
        "scenario's what_if.demand_multipliers, else 1, 1.5, 2).",
    ),
]


@app.command("plan")
def plan_cmd(
    scenario_path: Annotated[Path, typer.Argument(metavar="SCENARIO.yaml")],
    export: Annotated[
        Path | None, typer.Option(help="Also write the plan to FILE (.json, .csv or .xlsx).")
    ] = None,
    samples: Annotated[
        int | None,
        typer.Option(
            help="Error samples per option: the plan's fleet is the one at the scenario's "
            "sizing_confidence, P10/P50/P90 come from the same samples (0: no ranges shown; "
            "default: 400).",
            callback=within(SAMPLES),
        ),
    ] = None,
    with_sensitivity: Annotated[
        bool,
        typer.Option("--sensitivity", help="Also re-plan with each input moved 10% down and up."),
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Replace an existing --export file (else refused).")
    ] = False,
    what_if: WhatIfOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Plan capacity for a scenario: options per engine x GPU x TP, cost with P10/P50/P90
    ranges, the recommendation and why, what if demand grows (and, asked, which input moves the
    answer most)."""
    from planner.inputs.scenario import load_scenario  # noqa: PLC0415
    from workflows import planning  # noqa: PLC0415

    multipliers = guard(lambda: parse_what_if(what_if))
    scenario = guard(lambda: with_multipliers(load_scenario(scenario_path), multipliers))
    if export is not None:
        _check_export(export, scenario_path, db, force)
    engine = open_engine(db)
    planned = guard(
        lambda: _planned(lambda: planning.plan_scenario(engine, scenario, samples), as_json)
    )
    plan, curves, prices = planned.plan, planned.curves, planned.prices
    if samples is None and plan.measurement_plan and plan.measurement_plan.no_data:
        samples = 0  # ranges of options no data backs say nothing
    ranges, swings = guard(
        lambda: planning.ranges_and_swings(plan, curves, prices, samples, with_sensitivity)
    )
    if export is not None:
        guard(lambda: _write_export(plan, export, ranges, swings, (db, scenario_path)))
    if as_json:
        print_json(planning.plan_document(plan, ranges, swings))
        return
    gaps = plan.measurement_plan
    if gaps is not None and gaps.no_data:
        _print_measurements(gaps, "")  # first: the options below are no answer
    _print_plan(plan, ranges, swings)
    if gaps is not None and not gaps.no_data:
        _print_measurements(gaps)


def parse_what_if(text: str | None) -> tuple[float, ...] | None:
    """--what-if's demand multiples (None when not given); a bad one is an InputError."""
    if text is None:
        return None
    from errors import InputError  # noqa: PLC0415
    from planner.inputs.what_if_spec import parse_multipliers  # noqa: PLC0415

    try:
        return parse_multipliers(text)
    except ValueError as exc:
        raise InputError(str(exc), field="--what-if", value=text) from None


def with_multipliers(scenario: Scenario, multipliers: tuple[float, ...] | None) -> Scenario:
    """The scenario with --what-if's demand multiples (unchanged when not given)."""
    if multipliers is None:
        return scenario
    from planner.inputs.what_if_spec import WhatIfSpec  # noqa: PLC0415

    return scenario.model_copy(update={"what_if": WhatIfSpec(demand_multipliers=multipliers)})


def _planned(plan: Callable[[], Planned], as_json: bool) -> Planned:
    """The plan; when no curve backs any candidate, what to measure (stdout) and exit 2."""
    from errors import NoDataError  # noqa: PLC0415
    from planner.analysis.measurement_plan import MeasurementPlan  # noqa: PLC0415

    try:
        return plan()
    except NoDataError as exc:
        if not isinstance(measurements := exc.measurement_plan, MeasurementPlan):
            raise
        if as_json:
            print_json({"error": str(exc), "measurement_plan": dataclasses.asdict(measurements)})
        else:
            _print_measurements(measurements)
        raise


def _print_measurements(measurements: MeasurementPlan, *after: str) -> None:
    from reports.measurement import measurement_text  # noqa: PLC0415

    for line in [*measurement_text(measurements), *after]:
        out.print(line, markup=False, highlight=False, soft_wrap=True)


def _print_plan(plan: Plan, ranges: PlanRanges | None, swings: list[SensitivityRow] | None) -> None:
    from reports.brief import recommendation_brief, rejected_lines  # noqa: PLC0415
    from reports.flag_text import group_warnings  # noqa: PLC0415

    brief = recommendation_brief(plan, ranges)
    _say(brief.headline)
    choice = plan.recommendation.choice
    for line in (*brief.bullets, *([_money_line(choice)] if choice else ())):
        _say(f"  - {line}")
    for warning in group_warnings(plan.warnings):
        err.print(f"warning: {warning}", markup=False, highlight=False)
    out.print(_plan_table(plan, ranges))
    if ranges:
        _say(f"Ranges: {ranges.samples} error samples per option. {ranges.method}")
    _print_what_if(plan)
    if choice is None:
        return _sensitivity_if(swings)
    for line in rejected_lines(plan.options):
        _say(f"not an option: {line}")
    return _sensitivity_if(swings)


_SHORT_UNITS = {
    "peak_requests_per_s": "req/s",
    "peak_concurrent_streams": "streams",
    "monthly_output_tokens": "tokens/month",
}


def _print_what_if(plan: Plan) -> None:
    """The plan at each demand multiplier, in the terminal's width (the pick's name wraps)."""
    from rich import box  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    from planner.analysis.what_if import what_if_demand  # noqa: PLC0415
    from reports.what_if_view import what_if_sentence, what_if_text  # noqa: PLC0415

    rows = what_if_demand(plan)
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
        _say(note)


def _sensitivity_if(swings: list[SensitivityRow] | None) -> None:
    if swings is not None:
        _print_sensitivity(swings)


def _say(text: str) -> None:
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


def _print_sensitivity(swings: list[SensitivityRow]) -> None:
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


# The options of `capplan report`.


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


def _check_export(export: Path, scenario_path: Path, db: str | None, force: bool) -> None:
    """Refuse --export before any planning: not .json/.csv/.xlsx, a folder, the store (or a link
    to it), the scenario it reads, an existing file without --force (workflows.outputs)."""
    from db.engine import resolve_db_url  # noqa: PLC0415
    from workflows.outputs import output_for  # noqa: PLC0415

    url, inputs, rule = resolve_db_url(db), [scenario_path], _export_rule()
    guard(lambda: output_for(export, rule, store_url=url, force=force, inputs=inputs))


def _write_export(
    plan: Plan,
    path: Path,
    ranges: PlanRanges | None,
    swings: list[SensitivityRow] | None,
    reads: tuple[str | None, Path],
) -> None:
    """Write the export through the checked writer (the store and the scenario `reads` names
    are refused again at write time)."""
    from db.engine import resolve_db_url  # noqa: PLC0415
    from workflows.outputs import write_output  # noqa: PLC0415
    from workflows.planning import plan_export  # noqa: PLC0415

    content = plan_export(plan, path.suffix, ranges, swings)
    url = resolve_db_url(reads[0])
    write_output(path, content, _export_rule(), store_url=url, inputs=[reads[1]])


def _export_rule() -> OutputRule:
    from workflows.outputs import OutputRule  # noqa: PLC0415
    from workflows.planning import EXPORT_SUFFIXES  # noqa: PLC0415

    return OutputRule("--export", "plan export", EXPORT_SUFFIXES)
