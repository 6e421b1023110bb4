"""`capplan plan`: options, cost ranges, sensitivity and exports (the report: cli/report.py)."""

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
    guard,
    open_engine,
    out,
    print_json,
    within,
)
from workflows.limits import SAMPLES

if TYPE_CHECKING:  # the planner, the store and the renderers load when a command runs
    from planner.analysis.capacity import Plan
    from planner.inputs.scenario import Scenario
    from workflows.outputs import OutputRule
    from workflows.session import PlanningSession


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
    from reports.terminal import print_plan  # noqa: PLC0415
    from workflows.scenario_files import load_scenario  # noqa: PLC0415
    from workflows.session import PlanningSession  # noqa: PLC0415

    multipliers = guard(lambda: parse_what_if(what_if))
    scenario = guard(lambda: with_multipliers(load_scenario(scenario_path), multipliers))
    if export is not None:
        _check_export(export, scenario_path, db, force)
    engine = open_engine(db)
    session = guard(lambda: PlanningSession.from_store(engine, scenario, samples=samples))
    plan = guard(lambda: _planned(session, as_json))
    ranges, swings = guard(lambda: (session.ranges, session.swings_if(with_sensitivity)))
    what_if_rows = guard(session.what_if)
    if export is not None:
        content = guard(lambda: session.export(export.suffix, with_sensitivity=with_sensitivity))
        guard(lambda: _write_export(content, export, (db, scenario_path)))
    if as_json:
        print_json(session.document(with_sensitivity=with_sensitivity))
        return
    horizon = lambda: session.budget  # noqa: E731 - printed after the what-if table
    scaling = guard(lambda: session.scaling)
    print_plan(
        plan, ranges, swings, what_if_rows, out=out, err=err, horizon=horizon, scaling=scaling
    )


def parse_what_if(text: str | None) -> tuple[float, ...] | None:
    """--what-if's demand multiples (None when not given); a bad one is an InputError."""
    if text is None:
        return None
    from errors import InputError  # noqa: PLC0415
    from workflows.scenario_files import parse_multipliers  # noqa: PLC0415

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


def _planned(session: PlanningSession, as_json: bool) -> Plan:
    """The plan; when no curve backs any candidate, what to measure (stdout) and exit 2."""
    from errors import NoDataError  # noqa: PLC0415
    from planner.analysis.measurement_plan import MeasurementPlan  # noqa: PLC0415
    from reports.terminal import print_measurements  # noqa: PLC0415

    try:
        return session.plan
    except NoDataError as exc:
        if not isinstance(measurements := exc.measurement_plan, MeasurementPlan):
            raise
        if as_json:
            print_json({"error": str(exc), "measurement_plan": dataclasses.asdict(measurements)})
        else:
            print_measurements(measurements, out)
        raise


def _check_export(export: Path, scenario_path: Path, db: str | None, force: bool) -> None:
    """Refuse --export before any planning: not .json/.csv/.xlsx, a folder, the store (or a link
    to it), the scenario it reads, an existing file without --force (workflows.outputs)."""
    from workflows.outputs import output_for  # noqa: PLC0415
    from workflows.store import resolve_db_url  # noqa: PLC0415

    url, inputs, rule = resolve_db_url(db), [scenario_path], _export_rule()
    guard(lambda: output_for(export, rule, store_url=url, force=force, inputs=inputs))


def _write_export(content: bytes, path: Path, reads: tuple[str | None, Path]) -> None:
    """Write the export through the checked writer (the store and the scenario `reads` names
    are refused again at write time)."""
    from workflows.outputs import write_output  # noqa: PLC0415
    from workflows.store import resolve_db_url  # noqa: PLC0415

    url = resolve_db_url(reads[0])
    write_output(path, content, _export_rule(), store_url=url, inputs=[reads[1]])


def _export_rule() -> OutputRule:
    from workflows.outputs import OutputRule  # noqa: PLC0415
    from workflows.planning import EXPORT_SUFFIXES  # noqa: PLC0415

    return OutputRule("--export", "plan export", EXPORT_SUFFIXES)
