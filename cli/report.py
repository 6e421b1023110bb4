"""`capplan report`: the capacity report of a scenario planned now, or of a plan record re-made
for audit (PDF, XLSX, HTML, CSV or JSON)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cli.common import (
    DbOption,
    JsonOption,
    app,
    fail,
    guard,
    open_engine,
    out,
    print_json,
    within,
)
from cli.plan import WhatIfOption, parse_what_if, with_multipliers
from errors import InputError
from reports.formats import REPORT_FORMATS
from workflows.limits import RUN_ID, SAMPLES

if TYPE_CHECKING:  # the planner, the store and the renderers load when a command runs
    from collections.abc import Iterable

    from db.engine import Engine
    from db.run_reads import StoredRun
    from hardware.prices import PriceEntry
    from planner.analysis.capacity import Plan
    from planner.inputs.scenario import Scenario
    from workflows.outputs import OutputRule


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
        callback=within(RUN_ID),
    ),
]
ReportSamplesOption = Annotated[
    int | None,
    typer.Option(
        help="Error samples per option (0: no ranges shown; default: 400).",
        callback=within(SAMPLES),
    ),
]
ReportForceOption = Annotated[
    bool, typer.Option("--force", help="Replace an existing --out file (else refused).")
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
    force: ReportForceOption = False,
    what_if: WhatIfOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write the capacity report of a scenario (or of a recorded plan): PDF for finance, XLSX with
    the data behind every chart, self-contained HTML, CSV of the options, or JSON with everything
    to reproduce it."""
    _check_report_args(fmt, scenario_path, record)
    _check_report_out(out_path, fmt, scenario_path, db, force)
    multipliers = guard(lambda: parse_what_if(what_if))  # the report's what-if rows
    from planner.analysis.capacity import make_plan  # noqa: PLC0415
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
    draws = planning.draws_for(samples)
    made = basis.plan or guard(lambda: make_plan(scenario, curves, prices, draws=draws))
    plan = dataclasses.replace(made, scenario=with_multipliers(made.scenario, multipliers))
    ranges, swings = guard(
        lambda: planning.ranges_and_swings(plan, curves, prices, samples, with_sensitivity)
    )
    report = planning.report_of(engine, plan, ranges, swings, metas)
    if basis.title is not None:
        report = dataclasses.replace(report, title=basis.title)
    content = guard(lambda: render_report(report, fmt))
    _write_report(out_path, content, fmt, scenario_path, db)
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
    from reports.names import option_name  # noqa: PLC0415

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
    from planner.inputs.scenario import load_scenario  # noqa: PLC0415
    from workflows import planning  # noqa: PLC0415

    scenario = guard(lambda: load_scenario(scenario_path))
    prices = guard(lambda: planning.price_catalog(engine))
    return _ReportBasis(scenario, prices, planning.scenario_runs(engine, scenario))


def _check_report_args(fmt: str, scenario_path: Path | None, record: int | None) -> None:
    if fmt not in REPORT_FORMATS:
        expected = f"expected one of {', '.join(REPORT_FORMATS)}"
        fail(InputError(expected, field="--format", value=fmt))
    if (scenario_path is None) == (record is None):
        fail(InputError("give a SCENARIO.yaml or --record ID (one of them)", field="--record"))


# The extensions each report format may be written under.
REPORT_EXTENSIONS = {
    "pdf": (".pdf",),
    "xlsx": (".xlsx",),
    "html": (".html", ".htm"),
    "csv": (".csv",),
    "json": (".json",),
}


def _check_report_out(
    out_path: Path, fmt: str, scenario_path: Path | None, db: str | None, force: bool
) -> None:
    """Refuse --out before any planning: its extension against --format, a folder, the store,
    the scenario it reads, an existing file without --force (workflows.outputs)."""
    from db.engine import resolve_db_url  # noqa: PLC0415
    from workflows.outputs import output_for  # noqa: PLC0415

    rule, url = _report_rule(fmt), resolve_db_url(db)
    inputs = [scenario_path] if scenario_path is not None else []
    guard(lambda: output_for(out_path, rule, store_url=url, force=force, inputs=inputs))


def _write_report(
    out_path: Path, content: bytes, fmt: str, scenario_path: Path | None, db: str | None
) -> None:
    """Write the rendered report through the checked writer (workflows.outputs: the store and
    the scenario refused again, then temp file + rename); a failed write fails on --out."""
    from db.engine import resolve_db_url  # noqa: PLC0415
    from workflows.outputs import write_output  # noqa: PLC0415

    inputs = [scenario_path] if scenario_path is not None else []
    rule, url = _report_rule(fmt), resolve_db_url(db)
    guard(lambda: write_output(out_path, content, rule, store_url=url, inputs=inputs))


def _report_rule(fmt: str) -> OutputRule:
    from workflows.outputs import OutputRule  # noqa: PLC0415

    return OutputRule("--out", f"{fmt} report", REPORT_EXTENSIONS.get(fmt, (f".{fmt}",)))


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


# The terminal shows the decision columns; --json and --export carry every column.
