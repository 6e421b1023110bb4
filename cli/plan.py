"""`capplan plan` and `capplan report`: options, cost ranges, sensitivity, exports and the
capacity report."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

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
from cli.curves import curves_and_metas, scenario_curves, scenario_runs
from db import repository, scenarios
from errors import InputError
from planner.capacity import Plan, make_plan
from planner.curves import LoadCurve
from planner.export import (
    options_table,
    plan_to_csv,
    plan_to_dict,
    plan_to_xlsx,
    ranges_to_dict,
    sensitivity_rows,
)
from planner.options import RejectedOption, SizedOption
from planner.prices import PriceEntry, load_catalog_csv
from planner.report import build_report
from planner.report_pdf import REPORT_FORMATS, render_report
from planner.scenario import Scenario, load_scenario
from planner.sensitivity import SensitivityRow, sensitivity
from planner.uncertainty import OptionRange, PlanRanges, plan_ranges


@app.command("plan")
def plan_cmd(
    scenario_path: Annotated[Path, typer.Argument(metavar="SCENARIO.yaml")],
    export: Annotated[
        Path | None, typer.Option(help="Also write the plan to FILE (.json, .csv or .xlsx).")
    ] = None,
    samples: Annotated[
        int | None,
        typer.Option(
            help="Bootstrap samples for the P10/P50/P90 node and cost ranges (0: no ranges; "
            "default: about a second's worth).",
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
    scenario = guard(lambda: load_scenario(scenario_path))
    if export is not None and export.suffix not in {".json", ".csv", ".xlsx"}:
        fail(
            InputError("expected a .json, .csv or .xlsx file", field="--export", value=str(export))
        )
    engine = open_engine(db)
    prices = guard(lambda: repository.list_prices(engine)) or load_catalog_csv()
    curves = scenario_curves(engine, scenario)
    plan = guard(lambda: make_plan(scenario, curves, prices))
    ranges, swings = _ranges_and_swings(scenario, curves, prices, samples, with_sensitivity)
    if export is not None:
        guard(lambda: _write_export(plan, export, ranges, swings))
    if as_json:
        print_json(_plan_document(plan, ranges, swings))
        return
    _print_plan(plan, ranges, swings)


def _ranges_and_swings(
    scenario: Scenario,
    curves: Sequence[LoadCurve],
    prices: Sequence[PriceEntry],
    samples: int | None,
    with_sensitivity: bool,
) -> tuple[PlanRanges | None, list[SensitivityRow] | None]:
    """The cost ranges (none when samples is 0) and, when asked, the sensitivity rows."""
    ranges = (
        None
        if samples == 0
        else guard(lambda: plan_ranges(scenario, curves, prices, samples=samples))
    )
    swings = guard(lambda: sensitivity(scenario, curves, prices)) if with_sensitivity else None
    return ranges, swings


def _plan_document(
    plan: Plan, ranges: PlanRanges | None, swings: list[SensitivityRow] | None
) -> dict[str, object]:
    document = plan_to_dict(plan)
    document["ranges"] = ranges_to_dict(ranges) if ranges else None
    document["sensitivity"] = sensitivity_rows(swings) if swings is not None else None
    return document


def _print_plan(plan: Plan, ranges: PlanRanges | None, swings: list[SensitivityRow] | None) -> None:
    rec = plan.recommendation
    lines = [rec.reason, *([rec.binding_text] if rec.binding_text else [])]
    for line in lines:
        out.print(line, markup=False, highlight=False)
    choice = rec.choice
    if choice is not None:
        out.print(_money_line(choice), markup=False, highlight=False)
    for flag in (*rec.factors_applied, *(choice.flags if choice else ())):
        out.print(f"  - {flag}", markup=False, highlight=False)
    for warning in plan.warnings:
        err.print(f"warning: {warning}", markup=False, highlight=False)
    by_key = {r.key: r for r in ranges.options} if ranges else {}
    columns = [title for title, _ in _PLAN_COLUMNS]
    if ranges:
        columns += ["nodes P10/P50/P90", "$/month P10/P50/P90"]
    table = Table(*columns)
    for option, row in zip(plan.options, options_table(plan), strict=True):
        cells = [_cell(row[key]) for _, key in _PLAN_COLUMNS]
        if ranges:
            cells += _range_cells(by_key.get(option.key))
        table.add_row(*cells)
    out.print(table)
    if ranges:
        out.print(
            f"Ranges: {ranges.samples} bootstrap samples; the recommendation changes in "
            f"{ranges.choice_change_share:.0%} of them. {ranges.method}",
            markup=False,
            highlight=False,
        )
    for option in plan.options:
        if isinstance(option, RejectedOption) and option.reason:
            out.print(
                f"not an option: {option.title()}: {option.reason}",
                markup=False,
                highlight=False,
            )
    if swings is not None:
        _print_sensitivity(swings)


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


def _range_cells(found: OptionRange | None) -> list[str]:
    if found is None or found.nodes is None or found.total_monthly_cost_usd is None:
        return ["-", "-"]
    nodes, cost = found.nodes, found.total_monthly_cost_usd
    return [
        f"{nodes.p10:.0f} / {nodes.p50:.0f} / {nodes.p90:.0f}",
        f"{cost.p10:,.0f} / {cost.p50:,.0f} / {cost.p90:,.0f}",
    ]


def _print_sensitivity(swings: list[SensitivityRow]) -> None:
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


@app.command("report")
def report_cmd(
    fmt: Annotated[str, typer.Option("--format", help="pdf, xlsx, html, csv or json.")],
    out_path: Annotated[Path, typer.Option("--out", help="File to write the report to.")],
    scenario_path: Annotated[
        Path | None, typer.Argument(metavar="[SCENARIO.yaml]", help="Plan this scenario now.")
    ] = None,
    record: Annotated[
        int | None,
        typer.Option(
            "--record",
            help="Instead of a scenario: the plan record ID (Scenarios page history), re-made "
            "from its own scenario, runs and prices for audit.",
        ),
    ] = None,
    samples: Annotated[
        int | None,
        typer.Option(help="Bootstrap samples for the cost ranges (0: none; default: auto).", min=0),
    ] = None,
    with_sensitivity: Annotated[
        bool, typer.Option("--sensitivity/--no-sensitivity", help="Include the sensitivity view.")
    ] = True,
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
    engine = open_engine(db)
    title, matches = None, None
    if record is not None:
        regenerated = guard(lambda: scenarios.regenerate(engine, record))
        rec = regenerated.record
        scenario, plan = regenerated.plan.scenario, regenerated.plan
        prices: Sequence[PriceEntry] = rec.prices_used
        stored: Iterable[repository.StoredRun] = guard(
            lambda: repository.load_runs(engine, rec.basis_run_ids)
        )
        title = (
            f"Capacity plan: {rec.scenario_name} (plan record {rec.record_id} of "
            f"{rec.created_at:%Y-%m-%d %H:%M} UTC, re-made)"
        )
        matches = regenerated.matches
    else:
        assert scenario_path is not None
        scenario = guard(lambda: load_scenario(scenario_path))
        prices = guard(lambda: repository.list_prices(engine)) or load_catalog_csv()
        stored = scenario_runs(engine, scenario)
    # One pass (the runs are read a chunk at a time): the curves and each run's report line.
    curves, metas = guard(lambda: curves_and_metas(stored))
    if record is None:
        plan = guard(lambda: make_plan(scenario, curves, prices))
    ranges, swings = _ranges_and_swings(scenario, curves, prices, samples, with_sensitivity)
    report = build_report(
        plan,
        ranges=ranges,
        swings=swings,
        runs=metas,
        generated_at=datetime.now(UTC),
    )
    if title is not None:
        report = dataclasses.replace(report, title=title)
    content = guard(lambda: render_report(report, fmt))
    try:
        out_path.write_bytes(content)
    except OSError as exc:
        message = f"cannot write the report: {exc.strerror}"
        fail(InputError(message, field="--out", value=str(out_path)))
    choice = plan.recommendation.choice
    summary = {
        "out": str(out_path),
        "format": fmt,
        "bytes": len(content),
        "recommended": choice.title() if choice else None,
        "monthly_cost_usd": choice.total_monthly_cost_usd if choice else None,
        "record": record,
        "matches_record": matches,
    }
    if as_json:
        print_json(summary)
        return
    audit = ""
    if matches is not None:
        audit = "; matches the record" if matches else "; DIFFERS from the record"
    out.print(
        f"wrote {fmt} report to {out_path} ({summary['bytes']:,} bytes); recommended: "
        f"{summary['recommended'] or 'nothing meets the SLA'}{audit}",
        markup=False,
        highlight=False,
    )


# The terminal shows the decision columns; --json and --export carry every column.
_PLAN_COLUMNS = (
    ("", "recommended"),
    ("engine", "engine"),
    ("GPU", "gpu"),
    ("TP", "tp"),
    ("data", "provenance"),
    ("SLA", "meets_sla"),
    ("streams/replica", "concurrency_per_replica"),
    ("limited by", "binding_constraint"),
    ("tok/s/replica", "output_tok_s_per_replica"),
    ("replicas", "replicas"),
    ("GPUs", "gpus"),
    ("nodes", "nodes"),
    ("$/month", "total_monthly_cost_usd"),
    ("$/1M tok", "usd_per_million_output_tokens"),
)


def _cell(value: object) -> str:
    if value is None:
        return "-"
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
    if path.suffix == ".json":
        document = _plan_document(plan, ranges, swings)
        path.write_text(json.dumps(document, indent=2, default=str), encoding="utf-8")
    elif path.suffix == ".csv":
        path.write_text(plan_to_csv(plan), encoding="utf-8")
    else:
        path.write_bytes(plan_to_xlsx(plan, ranges, swings))
