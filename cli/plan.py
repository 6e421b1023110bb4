"""`capplan plan` and `capplan report`: options, cost ranges, sensitivity, exports and the
capacity report."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cli.common import (
    DbOption,
    JsonOption,
    app,
    err,
    fail,
    guard,
    open_engine,
    out,
    print_json,
)
from errors import InputError
from reports.formats import REPORT_FORMATS

if TYPE_CHECKING:  # the planner, the store and the renderers load when a command runs
    from collections.abc import Iterable

    from rich.table import Table

    from db.engine import Engine
    from db.run_reads import StoredRun
    from hardware.prices import PriceEntry
    from planner.capacity import Plan
    from planner.options import SizedOption
    from planner.scenario import Scenario
    from planner.sensitivity import SensitivityRow
    from planner.uncertainty import OptionRange, PlanRanges


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
            min=0,
        ),
    ] = None,
    with_sensitivity: Annotated[
        bool,
        typer.Option("--sensitivity", help="Also re-plan with each input moved 10% down and up."),
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Plan capacity for a scenario: options per engine x GPU x TP, cost with P10/P50/P90
    ranges, the recommendation and why (and, asked, which input moves the answer most)."""
    from planner.scenario import load_scenario  # noqa: PLC0415
    from workflows import planning  # noqa: PLC0415

    scenario = guard(lambda: load_scenario(scenario_path))
    if export is not None and export.suffix not in planning.EXPORT_SUFFIXES:
        fail(
            InputError("expected a .json, .csv or .xlsx file", field="--export", value=str(export))
        )
    engine = open_engine(db)
    planned = guard(lambda: planning.plan_scenario(engine, scenario, samples))
    plan, curves, prices = planned.plan, planned.curves, planned.prices
    ranges, swings = guard(
        lambda: planning.ranges_and_swings(plan, curves, prices, samples, with_sensitivity)
    )
    if export is not None:
        guard(lambda: _write_export(plan, export, ranges, swings))
    if as_json:
        print_json(planning.plan_document(plan, ranges, swings))
        return
    _print_plan(plan, ranges, swings)


def _print_plan(plan: Plan, ranges: PlanRanges | None, swings: list[SensitivityRow] | None) -> None:
    from planner.brief import group_warnings, recommendation_brief, rejected_lines  # noqa: PLC0415

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
    if choice is None:
        return _sensitivity_if(swings)
    for line in rejected_lines(plan.options):
        _say(f"not an option: {line}")
    return _sensitivity_if(swings)


def _sensitivity_if(swings: list[SensitivityRow] | None) -> None:
    if swings is not None:
        _print_sensitivity(swings)


def _say(text: str) -> None:
    out.print(text, markup=False, highlight=False)


def _plan_table(plan: Plan, ranges: PlanRanges | None) -> Table:
    """The decision columns in 100 terminal columns; --json and --export carry the rest."""
    from rich import box  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    from planner.names import engine_tp, gpu_name  # noqa: PLC0415
    from reports.lead_table import options_lead_table  # noqa: PLC0415

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
        name = engine_tp(option.engine, option.tp).replace(" (TP not stated)", " TP?")
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
        f"total ${option.total_monthly_cost_usd:,.0f}/month",
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


def _range_cell(found: OptionRange | None) -> str:
    if found is None or found.total_monthly_cost_usd is None:
        return "-"
    cost = found.total_monthly_cost_usd
    return f"{cost.p10 / 1000:,.0f}k-{cost.p90 / 1000:,.0f}k"


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
    out.print(table)


def _signed(value: object) -> str:
    return f"{value:+.1f}%" if isinstance(value, float) else "cannot serve"


# The options of `capplan report`.
ReportFormatOption = Annotated[str, typer.Option("--format", help="pdf, xlsx, html, csv or json.")]
ReportOutOption = Annotated[Path, typer.Option("--out", help="File to write the report to.")]
ReportScenarioArgument = Annotated[
    Path | None, typer.Argument(metavar="[SCENARIO.yaml]", help="Plan this scenario now.")
]
RecordOption = Annotated[
    int | None,
    typer.Option(
        "--record",
        help="Instead of a scenario: the plan record ID (Scenarios page history), re-made "
        "from its own scenario, runs and prices for audit.",
    ),
]
ReportSamplesOption = Annotated[
    int | None,
    typer.Option(help="Error samples per option (0: no ranges shown; default: 400).", min=0),
]
ReportSensitivityOption = Annotated[
    bool, typer.Option("--sensitivity/--no-sensitivity", help="Include the sensitivity view.")
]


@dataclasses.dataclass(frozen=True, slots=True)
class _ReportBasis:
    """What a report is made from: a scenario planned now, or a plan record re-made."""

    scenario: Scenario
    prices: list[PriceEntry]
    stored: Iterable[StoredRun]
    plan: Plan | None = None  # a re-made record's plan; None: plan the scenario now
    title: str | None = None
    matches: bool | None = None  # whether the re-made plan matches its record


@app.command("report")
def report_cmd(
    fmt: ReportFormatOption,
    out_path: ReportOutOption,
    scenario_path: ReportScenarioArgument = None,
    record: RecordOption = None,
    samples: ReportSamplesOption = None,
    with_sensitivity: ReportSensitivityOption = True,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write the capacity report of a scenario (or of a recorded plan): PDF for finance, XLSX with
    the data behind every chart, self-contained HTML, CSV of the options, or JSON with everything
    to reproduce it."""
    if fmt not in REPORT_FORMATS:
        expected = f"expected one of {', '.join(REPORT_FORMATS)}"
        fail(InputError(expected, field="--format", value=fmt))
    if (scenario_path is None) == (record is None):
        fail(InputError("give a SCENARIO.yaml or --record ID (one of them)", field="--record"))
    from planner.capacity import make_plan  # noqa: PLC0415
    from reports.formats import render_report  # noqa: PLC0415
    from workflows import planning  # noqa: PLC0415

    engine = open_engine(db)
    if record is not None:
        basis = _recorded_basis(engine, record)
    else:
        assert scenario_path is not None
        basis = _scenario_basis(engine, scenario_path)
    scenario, prices = basis.scenario, basis.prices
    # One pass (the runs are read a chunk at a time): the curves and each run's report line.
    curves, metas = guard(lambda: planning.curves_and_metas(basis.stored))
    plan = basis.plan
    if plan is None:
        draws = planning.draws_for(samples)
        plan = guard(lambda: make_plan(scenario, curves, prices, draws=draws))
    ranges, swings = guard(
        lambda: planning.ranges_and_swings(plan, curves, prices, samples, with_sensitivity)
    )
    report = planning.report_of(engine, plan, ranges, swings, metas)
    if basis.title is not None:
        report = dataclasses.replace(report, title=basis.title)
    content = guard(lambda: render_report(report, fmt))
    _write_report(out_path, content)
    choice = plan.recommendation.choice
    summary = {
        "out": str(out_path),
        "format": fmt,
        "bytes": len(content),
        "recommended": choice.title() if choice else None,
        "monthly_cost_usd": choice.total_monthly_cost_usd if choice else None,
        "record": record,
        "matches_record": basis.matches,
    }
    if as_json:
        print_json(summary)
        return
    from planner.names import option_name  # noqa: PLC0415

    _print_report_line(summary, option_name(choice.key) if choice else None, basis.matches)


def _recorded_basis(engine: Engine, record: int) -> _ReportBasis:
    """A plan record re-made from its own scenario, runs and prices, titled as such."""
    from db import run_reads  # noqa: PLC0415
    from workflows import history  # noqa: PLC0415

    regenerated = guard(lambda: history.regenerate(engine, record))
    rec = regenerated.record
    stored = guard(lambda: run_reads.load_runs(engine, rec.basis_run_ids))
    title = (
        f"Capacity plan: {rec.scenario_name} (plan record {rec.record_id} of "
        f"{rec.created_at:%Y-%m-%d %H:%M} UTC, re-made)"
    )
    scenario, plan = regenerated.plan.scenario, regenerated.plan
    return _ReportBasis(scenario, list(rec.prices_used), stored, plan, title, regenerated.matches)


def _scenario_basis(engine: Engine, scenario_path: Path) -> _ReportBasis:
    """A scenario file to plan now over the stored prices and its model's runs."""
    from planner.scenario import load_scenario  # noqa: PLC0415
    from workflows import planning  # noqa: PLC0415

    scenario = guard(lambda: load_scenario(scenario_path))
    prices = guard(lambda: planning.price_catalog(engine))
    return _ReportBasis(scenario, prices, planning.scenario_runs(engine, scenario))


def _write_report(out_path: Path, content: bytes) -> None:
    """Write the rendered report; a file that cannot be written fails on --out."""
    try:
        out_path.write_bytes(content)
    except OSError as exc:
        message = f"cannot write the report: {exc.strerror}"
        fail(InputError(message, field="--out", value=str(out_path)))


def _print_report_line(summary: dict[str, object], name: str | None, matches: bool | None) -> None:
    """The one line `capplan report` prints: where, how big, what it recommends."""
    audit = ""
    if matches is not None:
        audit = "; matches the record" if matches else "; DIFFERS from the record"
    out.print(
        f"wrote {summary['format']} report to {summary['out']} ({summary['bytes']:,} bytes); "
        f"recommended: {name or 'nothing meets the SLA'}{audit}",
        markup=False,
        highlight=False,
    )


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


def _write_export(
    plan: Plan, path: Path, ranges: PlanRanges | None, swings: list[SensitivityRow] | None
) -> None:
    try:
        _write_plan_file(plan, path, ranges, swings)
    except OSError as exc:
        raise InputError(
            f"cannot write the plan: {exc.strerror}", field="--export", value=str(path)
        ) from exc


def _write_plan_file(
    plan: Plan, path: Path, ranges: PlanRanges | None, swings: list[SensitivityRow] | None
) -> None:
    from workflows.planning import plan_export  # noqa: PLC0415

    path.write_bytes(plan_export(plan, path.suffix, ranges, swings))
