"""`capplan report`: the capacity report of a scenario planned now, or of a plan record re-made
for audit (PDF, XLSX, HTML, CSV or JSON)."""

from __future__ import annotations

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
    from workflows.session import PlanningSession  # noqa: PLC0415

    engine = open_engine(db)
    matches: bool | None = None
    moved: list[str] | None = None
    if record is not None:
        from workflows import history  # noqa: PLC0415

        regenerated = guard(lambda: history.regenerate(engine, record))
        matches = regenerated.matches
        moved = list(history.basis_now(engine, regenerated.record).moved)
        made = guard(lambda: PlanningSession.from_record(engine, regenerated, samples=samples))
    else:
        assert scenario_path is not None
        from workflows.scenario_files import load_scenario  # noqa: PLC0415

        scenario = guard(lambda: load_scenario(scenario_path))
        made = guard(lambda: PlanningSession.from_store(engine, scenario, samples=samples))
    session = made.renamed(with_multipliers(made.scenario, multipliers))
    plan = guard(lambda: session.plan)
    content = guard(lambda: session.report_bytes(fmt, with_sensitivity=with_sensitivity))
    _write_report(out_path, content, fmt, scenario_path, db)
    choice = plan.recommendation.choice
    summary = {
        "out": str(out_path),
        "format": fmt,
        "bytes": len(content),
        "recommended": choice.title() if choice else None,
        "monthly_cost_usd": choice.total_monthly_cost_usd if choice else None,
        "record": record,
        "matches_record": matches,
        "basis_moved_since": moved,
    }
    if as_json:
        print_json(summary)
        return
    from reports.names import option_name  # noqa: PLC0415

    _print_report_line(summary, option_name(choice.key) if choice else None, matches)
    for line in moved or []:
        out.print(f"  since the record: {line}", markup=False, highlight=False)


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
    from workflows.outputs import output_for  # noqa: PLC0415
    from workflows.store import resolve_db_url  # noqa: PLC0415

    rule, url = _report_rule(fmt), resolve_db_url(db)
    inputs = [scenario_path] if scenario_path is not None else []
    guard(lambda: output_for(out_path, rule, store_url=url, force=force, inputs=inputs))


def _write_report(
    out_path: Path, content: bytes, fmt: str, scenario_path: Path | None, db: str | None
) -> None:
    """Write the rendered report through the checked writer (workflows.outputs: the store and
    the scenario refused again, then temp file + rename); a failed write fails on --out."""
    from workflows.outputs import write_output  # noqa: PLC0415
    from workflows.store import resolve_db_url  # noqa: PLC0415

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
