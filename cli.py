"""The `capplan` command line: import results, list runs, fit curves, predict and plan capacity.

Every command takes `--db URL` (else $CAPPLAN_DB, else sqlite:///data/capplan.db) and `--json`
(one JSON document on stdout). Bad input exits with code 2 and one line on stderr.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, NoReturn, TypeVar

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from db import repository, scenarios
from db.engine import Engine, make_engine, redact, resolve_db_url, upgrade
from db.repository import RunFilter, SaveResult
from db.seed import ensure_demo_data, load_demo_data
from errors import CapplanError, InputError
from measurements.importers import (
    MAX_IMPORT_BYTES,
    DeploymentOverrides,
    ImportedFile,
    import_bytes,
    import_path,
)
from measurements.importers.archive import expand_archive, is_archive
from measurements.importers.sweeps import merge_sweeps
from measurements.probe import ProbeOutcome, ProgressEvent
from measurements.run_file import Provenance, RunFile, input_error_from_validation
from measurements.session import SessionPlan, run_session, session_plan_from_flags
from measurements.sim_profiles import PROFILES, get_profile
from measurements.sim_server import serve
from planner.capacity import Option, Plan, make_plan
from planner.curves import LoadCurve, canonical_gpu, curve_from_run
from planner.export import (
    options_table,
    plan_to_csv,
    plan_to_dict,
    plan_to_xlsx,
    ranges_to_dict,
    sensitivity_rows,
)
from planner.fit import fit_curve, predict
from planner.physics import check_curve
from planner.present import (
    fit_to_dict,
    physics_to_dict,
    prediction_to_dict,
    prediction_vs_ceiling,
    run_to_dict,
)
from planner.prices import PriceEntry, load_catalog_csv
from planner.projection import project_curve
from planner.report import RunMeta, build_report, run_meta
from planner.report_pdf import REPORT_FORMATS, render_report
from planner.scenario import Scenario, load_scenario
from planner.sensitivity import SensitivityRow, sensitivity
from planner.uncertainty import OptionRange, PlanRanges, plan_ranges

app = typer.Typer(
    name="capplan",
    help="Plan LLM serving capacity (engine, GPU, 8-GPU nodes, $/month) from real measurements.",
    no_args_is_help=True,
    add_completion=False,
)
db_app = typer.Typer(help="Database maintenance.", no_args_is_help=True)
app.add_typer(db_app, name="db")

out = Console()
err = Console(stderr=True)
T = TypeVar("T")

DbOption = Annotated[
    str | None,
    typer.Option("--db", help="Database URL (else $CAPPLAN_DB, else sqlite:///data/capplan.db)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]


def _fail(exc: CapplanError) -> NoReturn:
    err.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def _guard(action: Callable[[], T]) -> T:
    """Run an action; a CapplanError becomes one line on stderr and exit code 2."""
    try:
        return action()
    except CapplanError as exc:
        _fail(exc)


def _engine(db: str | None) -> Engine:
    url = resolve_db_url(db)
    _guard(lambda: upgrade(url))
    return _guard(lambda: make_engine(url))


def _print_json(document: object) -> None:
    sys.stdout.write(json.dumps(document, indent=2, default=str) + "\n")


def _parse_concurrencies(text: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise InputError(
            "expected comma-separated numbers", field="--concurrency", value=text
        ) from exc
    if not values or any(not math.isfinite(v) or v <= 0 for v in values):
        raise InputError("expected positive concurrencies", field="--concurrency", value=text)
    return values


@app.command("import")
def import_cmd(
    paths: Annotated[list[Path], typer.Argument(help="Result files to import.")],
    fmt: Annotated[str, typer.Option("--format", help="auto or a format id.")] = "auto",
    engine_name: Annotated[
        str | None, typer.Option("--engine", help="vllm, tensorrt-llm, ...")
    ] = None,
    engine_version: Annotated[str | None, typer.Option(help="Engine version.")] = None,
    model: Annotated[str | None, typer.Option(help="Model name (overrides the file).")] = None,
    precision: Annotated[str | None, typer.Option(help="fp8, bf16, ...")] = None,
    gpu: Annotated[str | None, typer.Option(help="GPU SKU, e.g. H100-SXM-80GB.")] = None,
    gpu_count: Annotated[int | None, typer.Option(help="GPUs per replica.")] = None,
    tp: Annotated[int | None, typer.Option(help="Tensor-parallel size.")] = None,
    pp: Annotated[int | None, typer.Option(help="Pipeline-parallel size.")] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            help="Concurrency of files that do not state their load (CSV exports, per-request "
            "records); a file's own load is never replaced.",
        ),
    ] = None,
    request_rate: Annotated[
        float | None,
        typer.Option(
            "--request-rate", help="Open-loop rate (req/s) of files that do not state their load."
        ),
    ] = None,
    provenance: Annotated[Provenance, typer.Option(help="How the numbers were obtained.")] = (
        Provenance.IMPORTED
    ),
    no_merge: Annotated[
        bool,
        typer.Option(
            "--no-merge",
            help="Keep one run per file (by default files of one deployment and workload, "
            "one per load level, become one run).",
        ),
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Import benchmark result files (vLLM bench serve, curve CSV, RunFile, ...) into the store.

    All files are read and checked first; if any is bad nothing is stored. Files of one sweep
    (same deployment and workload, one load level each) become one run with several levels.
    """
    facts: dict[str, object] = {
        "engine": engine_name,
        "engine_version": engine_version,
        "model": model,
        "precision": precision,
        "gpu": gpu,
        "gpu_count": gpu_count,
        "tp": tp,
        "pp": pp,
        "concurrency": concurrency,
        "request_rate": request_rate,
    }
    overrides = _guard(lambda: _overrides(facts))
    files = _guard(lambda: [f for p in paths for f in _read(p, fmt, overrides, provenance)])
    runs = [run for imported in files for run in imported.runs]
    runs = runs if no_merge else merge_sweeps(runs)
    engine = _engine(db)
    results = _guard(lambda: repository.save_runs(engine, runs))
    detected = {imported.name: imported for imported in files}
    report = [_import_row(run, result, detected) for run, result in zip(runs, results, strict=True)]
    if as_json:
        _print_json(report)
        return
    for row in report:
        out.print(
            f"{row['file']}: {row['detected']} -> {row['message']}",
            markup=False,
            highlight=False,
        )


def _overrides(facts: dict[str, object]) -> DeploymentOverrides:
    try:
        return DeploymentOverrides.model_validate(facts)
    except ValidationError as exc:
        raise input_error_from_validation(exc, "command line") from exc


def _import_row(
    run: RunFile, result: SaveResult, files: dict[str, ImportedFile]
) -> dict[str, object]:
    first = files.get((run.origin_file or "").split(", ")[0])
    return {
        "file": run.origin_file,
        "format": first.format_id if first else None,
        "detected": first.detected if first else None,
        "run_id": result.run_id,
        "created": result.created,
        "levels": len(run.levels),
        "samples": sum(len(level.samples) for level in run.levels),
        "message": result.message,
    }


def _read(
    path: Path, fmt: str, overrides: DeploymentOverrides, provenance: Provenance
) -> list[ImportedFile]:
    """One file, or every member of a .zip of a results folder (checked before expanding)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc.strerror}", file=str(path)) from exc
    members = expand_archive(path.name, data) if is_archive(path.name, data) else None
    if members is None:
        return [import_path(path, format_id=fmt, overrides=overrides, provenance=provenance)]
    return [
        import_bytes(name, body, format_id=fmt, overrides=overrides, provenance=provenance)
        for name, body in members
    ]


@app.command("runs")
def runs_cmd(
    db: DbOption = None,
    as_json: JsonOption = False,
    limit: Annotated[int, typer.Option(help="Runs per page (oldest first).", min=1)] = 250,
    offset: Annotated[int, typer.Option(help="Runs to skip before the page.", min=0)] = 0,
    engine_name: Annotated[
        list[str] | None, typer.Option("--engine", help="Only this engine (repeatable).")
    ] = None,
    gpu: Annotated[list[str] | None, typer.Option(help="Only this GPU (repeatable).")] = None,
    model: Annotated[list[str] | None, typer.Option(help="Only this model (repeatable).")] = None,
    search: Annotated[
        str, typer.Option(help="Text in the label, file, notes, model or GPU (any case).")
    ] = "",
) -> None:
    """List stored runs a page at a time (--limit, --offset) with the total the filters keep
    (with --json: the page's runs with their levels under canonical metric names)."""
    engine = _engine(db)
    filters = RunFilter(
        engines=tuple(engine_name or ()),
        gpus=tuple(gpu or ()),
        models=tuple(model or ()),
        text=search,
    )
    page = _guard(lambda: repository.run_page(engine, filters, limit, offset))
    if as_json:
        counts = {r.run_id: r.samples for r in page.summaries}
        stored = _guard(lambda: repository.load_runs(engine, list(counts)))
        _print_json([run_to_dict(s.run_id, s.imported_at, s.run, counts[s.run_id]) for s in stored])
        return
    table = Table(
        "id",
        "source",
        "label",
        "engine",
        "model",
        "gpu",
        "tp",
        "isl/osl",
        "levels",
        "samples",
        "provenance",
    )
    for r in page.summaries:
        table.add_row(
            str(r.run_id),
            r.source,
            r.label or "",
            f"{r.engine} {r.engine_version or ''}".strip(),
            r.model,
            f"{r.gpu or '?'} x{r.gpu_count or '?'}",
            str(r.tp or "?"),
            f"{r.isl or '?'}/{r.osl or '?'}",
            str(r.levels),
            str(r.samples),
            r.provenance,
        )
    out.print(table)
    shown = len(page.summaries)
    first = offset + 1 if shown else 0
    more = f"; --offset {offset + shown} for the next page" if offset + shown < page.total else ""
    out.print(f"runs {first}-{offset + shown} of {page.total}{more}", markup=False)


def _curves(engine: Engine, run_id: int | None) -> list[LoadCurve]:
    if run_id is not None:
        _guard(lambda: repository.get_run(engine, run_id, with_samples=False))
        return _built(_guard(lambda: repository.load_runs(engine, [run_id])))
    # Every run, a chunk at a time: only the curves are kept, not the RunFiles.
    return _guard(lambda: _built(repository.iter_runs(engine)))


def _built(stored: Iterable[repository.StoredRun]) -> list[LoadCurve]:
    curves = (curve_from_run(s.run, s.run_id) for s in stored)
    return [c for c in curves if c is not None]


def _scenario_runs(engine: Engine, scenario: Scenario) -> Iterator[repository.StoredRun]:
    """The runs a plan of the scenario can draw on, a chunk at a time: those of its (canonical)
    model, since the planner leaves other models' curves out; every run when none has the
    model (so the planner's error names the models with curves)."""
    names = _guard(lambda: repository.models_like(engine, scenario.model))
    found = False
    for stored in repository.iter_runs(engine, models=names) if names else ():
        found = True
        yield stored
    if not found:
        yield from repository.iter_runs(engine)


def _curves_and_metas(
    stored: Iterable[repository.StoredRun],
) -> tuple[list[LoadCurve], list[RunMeta]]:
    curves: list[LoadCurve] = []
    metas: list[RunMeta] = []
    for s in stored:
        curve = curve_from_run(s.run, s.run_id)
        if curve is not None:
            curves.append(curve)
        metas.append(run_meta(s.run_id, s.imported_at, s.run))
    return curves, metas


def _scenario_curves(engine: Engine, scenario: Scenario) -> list[LoadCurve]:
    return _guard(lambda: _built(_scenario_runs(engine, scenario)))


@app.command("fit")
def fit_cmd(
    run: Annotated[int | None, typer.Option("--run", help="Only this run id.")] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Fit throughput, TTFT and TPOT curves for every run (or one) and show fit quality."""
    engine = _engine(db)
    fits = [fit_curve(curve) for curve in _curves(engine, run)]
    if as_json:
        _print_json([fit_to_dict(f) for f in fits])
        return
    table = Table("run", "curve", "series", "family", "points", "held-out MAPE %", "R²")
    for document in (fit_to_dict(f) for f in fits):
        for series in ("throughput", "ttft_p50", "ttft_p99", "tpot"):
            summary = document[series]
            if not isinstance(summary, dict):
                continue
            table.add_row(
                str(document["run_id"]),
                str(document["label"]),
                series,
                str(summary["family"]),
                _fmt(summary["n_points"], 0),
                _fmt(summary.get("loo_mape_pct")),
                _fmt(summary.get("r_squared"), 3),
            )
    out.print(table)


def _fmt(value: object, digits: int = 1) -> str:
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) else "-"


@app.command("predict")
def predict_cmd(
    run: Annotated[int, typer.Option("--run", help="Run id to predict from.")],
    concurrency: Annotated[str, typer.Option(help="Comma-separated concurrencies, e.g. 8,24,64.")],
    project_to: Annotated[
        str | None,
        typer.Option(
            "--project-to",
            help="Project the run onto another GPU (H100 <-> H200) by the physics; the result "
            "is labelled projected, never measured.",
        ),
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Predict output tok/s, TTFT p50/p99 and TPOT (with bands) at the given concurrencies,
    with the curve's provenance and where each value sits against the physical ceilings."""
    values = _guard(lambda: _parse_concurrencies(concurrency))
    engine = _engine(db)
    curves = _curves(engine, run)
    if not curves:
        _fail(InputError("run has no concurrency levels to fit", field="--run", value=run))
    curve = curves[0] if project_to is None else _projected(curves[0], project_to)
    fit = fit_curve(curve)
    predictions = predict(fit, values)
    physics = check_curve(curve)
    isl, osl = curve.key.isl, curve.key.osl
    rows = [
        prediction_to_dict(p) | prediction_vs_ceiling(p, physics.ceilings, isl, osl)
        for p in predictions
    ]
    if curve.provenance == "projected":
        for row in rows:
            row["range"] = f"PROJECTED, {row['range']}"
    flags = list(dict.fromkeys((*curve.flags, *fit.flags, *physics.flags)))
    if as_json:
        _print_json(
            {
                "run_id": run,
                "label": curve.label_text(),
                "provenance": curve.provenance,
                "physics": physics_to_dict(physics),
                "flags": flags,
                "predictions": rows,
            }
        )
        return
    out.print(f"{curve.label_text()} · {curve.provenance}", markup=False, highlight=False)
    table = Table(
        "concurrency",
        "output tok/s [band]",
        "TTFT p50 ms",
        "TTFT p99 ms",
        "TPOT ms",
        "% of ceiling",
        "range",
    )
    for row in rows:
        share = row["output_pct_of_ceiling"]
        table.add_row(
            *(
                str(row[k])
                for k in (
                    "concurrency",
                    "output_tok_s_text",
                    "p50_ttft_ms_text",
                    "p99_ttft_ms_text",
                    "tpot_ms_text",
                )
            ),
            "unknown" if not isinstance(share, float) else f"{share:.0f}%",
            str(row["range"]),
        )
    out.print(table)
    for line in [*physics.notes, *flags]:
        out.print(f"- {line}", markup=False, highlight=False)


def _projected(curve: LoadCurve, gpu: str) -> LoadCurve:
    projected = project_curve(curve, canonical_gpu(gpu))
    if isinstance(projected, str):
        _fail(InputError(projected, field="--project-to", value=gpu))
    return projected


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
    scenario = _guard(lambda: load_scenario(scenario_path))
    if export is not None and export.suffix not in {".json", ".csv", ".xlsx"}:
        _fail(
            InputError("expected a .json, .csv or .xlsx file", field="--export", value=str(export))
        )
    engine = _engine(db)
    prices = _guard(lambda: repository.list_prices(engine)) or load_catalog_csv()
    curves = _scenario_curves(engine, scenario)
    plan = _guard(lambda: make_plan(scenario, curves, prices))
    ranges, swings = _ranges_and_swings(scenario, curves, prices, samples, with_sensitivity)
    if export is not None:
        _guard(lambda: _write_export(plan, export, ranges, swings))
    if as_json:
        _print_json(_plan_document(plan, ranges, swings))
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
        else _guard(lambda: plan_ranges(scenario, curves, prices, samples=samples))
    )
    swings = _guard(lambda: sensitivity(scenario, curves, prices)) if with_sensitivity else None
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
    by_title = {r.title: r for r in ranges.options} if ranges else {}
    columns = [title for title, _ in _PLAN_COLUMNS]
    if ranges:
        columns += ["nodes P10/P50/P90", "$/month P10/P50/P90"]
    table = Table(*columns)
    for option, row in zip(plan.options, options_table(plan), strict=True):
        cells = [_cell(row[key]) for _, key in _PLAN_COLUMNS]
        if ranges:
            cells += _range_cells(by_title.get(option.title()))
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
        if option.rejected_reason:
            out.print(
                f"not an option: {option.title()}: {option.rejected_reason}",
                markup=False,
                highlight=False,
            )
    if swings is not None:
        _print_sensitivity(swings)


def _money_line(option: Option) -> str:
    """The chosen option's cost, line by line, as finance reads it."""
    parts = [
        f"Cost: compute ${option.monthly_cost_usd or 0:,.0f}/month "
        f"(on-demand ${option.compute_on_demand_usd or 0:,.0f}, "
        f"reserved ${option.compute_reserved_usd or 0:,.0f})",
        f"engine operations ${option.ops_cost_usd:,.2f}",
        f"total ${option.total_monthly_cost_usd or 0:,.0f}/month",
    ]
    if option.usd_per_million_output_tokens is not None:
        parts.append(f"${option.usd_per_million_output_tokens:,.2f} per 1M output tokens served")
    if option.gpu_hours_per_month is not None:
        parts.append(f"{option.gpu_hours_per_month:,.0f} GPU-hours/month")
    if option.autoscale_saving_usd is not None and option.scaling == "autoscale":
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
        _fail(InputError(expected, field="--format", value=fmt))
    if (scenario_path is None) == (record is None):
        _fail(InputError("give a SCENARIO.yaml or --record ID (one of them)", field="--record"))
    engine = _engine(db)
    title, matches = None, None
    if record is not None:
        regenerated = _guard(lambda: scenarios.regenerate(engine, record))
        rec = regenerated.record
        scenario, plan = regenerated.plan.scenario, regenerated.plan
        prices: Sequence[PriceEntry] = rec.prices_used
        stored: Iterable[repository.StoredRun] = _guard(
            lambda: repository.load_runs(engine, rec.basis_run_ids)
        )
        title = (
            f"Capacity plan: {rec.scenario_name} (plan record {rec.record_id} of "
            f"{rec.created_at:%Y-%m-%d %H:%M} UTC, re-made)"
        )
        matches = regenerated.matches
    else:
        assert scenario_path is not None
        scenario = _guard(lambda: load_scenario(scenario_path))
        prices = _guard(lambda: repository.list_prices(engine)) or load_catalog_csv()
        stored = _scenario_runs(engine, scenario)
    # One pass (the runs are read a chunk at a time): the curves and each run's report line.
    curves, metas = _guard(lambda: _curves_and_metas(stored))
    if record is None:
        plan = _guard(lambda: make_plan(scenario, curves, prices))
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
    content = _guard(lambda: render_report(report, fmt))
    try:
        out_path.write_bytes(content)
    except OSError as exc:
        message = f"cannot write the report: {exc.strerror}"
        _fail(InputError(message, field="--out", value=str(out_path)))
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
        _print_json(summary)
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


@app.command("probe")
def probe_cmd(
    model: Annotated[str, typer.Option(help="Served model name sent in every request.")],
    isl: Annotated[int, typer.Option(help="Prompt length, tokens (mean).")],
    osl: Annotated[int, typer.Option(help="Output length, tokens (max_tokens).")],
    out_file: Annotated[Path, typer.Option("--out", help="RunFile written after every level.")],
    engine_name: Annotated[
        str, typer.Option("--engine", help="vllm, tensorrt-llm or other.")
    ] = "vllm",
    base_url: Annotated[
        str | None, typer.Option(help="A server already running, e.g. http://127.0.0.1:8000.")
    ] = None,
    launch_cmd: Annotated[
        str | None,
        typer.Option("--launch", help='Start this server first, e.g. "vllm serve M --port 8000".'),
    ] = None,
    concurrency: Annotated[
        str | None, typer.Option(help="Closed-loop levels, e.g. 1,2,4,8,16.")
    ] = None,
    rate: Annotated[str | None, typer.Option(help="Open-loop levels, requests/s, e.g. 1,2,4.")] = (
        None
    ),
    arrival: Annotated[str, typer.Option(help="Open loop: poisson, gamma or constant.")] = (
        "poisson"
    ),
    burstiness: Annotated[float, typer.Option(help="Gamma arrivals: < 1 burstier.")] = 1.0,
    requests_per_level: Annotated[
        int | None, typer.Option(help="Measured requests per level (default max(32, 8 x load)).")
    ] = None,
    duration_per_level: Annotated[
        float | None, typer.Option(help="Seconds per level instead of a request count.")
    ] = None,
    endpoint: Annotated[str, typer.Option(help="completions or chat.")] = "completions",
    length_distribution: Annotated[
        str, typer.Option(help="fixed, normal or lognormal (ISL and OSL).")
    ] = "fixed",
    isl_stddev: Annotated[float, typer.Option(help="Prompt length stddev, tokens.")] = 0.0,
    osl_stddev: Annotated[float, typer.Option(help="Output length stddev, tokens.")] = 0.0,
    shape: Annotated[str, typer.Option(help="independent or agent-loop.")] = "independent",
    prefix_sharing: Annotated[bool, typer.Option(help="Every prompt opens with one prefix.")] = (
        False
    ),
    tokenizer: Annotated[
        str | None, typer.Option(help="Model dir or HF name with a local tokenizer.json.")
    ] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="NAME of the env var holding the API key.")
    ] = None,
    ignore_eos: Annotated[bool, typer.Option(help="Fixed output length (ignore_eos).")] = True,
    stop_at_saturation: Annotated[
        bool, typer.Option(help="Stop climbing once throughput stops growing or TTFT explodes.")
    ] = True,
    min_gain_pct: Annotated[
        float, typer.Option(help="Saturated when the next level adds less throughput than this %.")
    ] = 5.0,
    ttft_blowup: Annotated[
        float,
        typer.Option(help="Saturated when p50 TTFT exceeds this multiple of the first level's."),
    ] = 10.0,
    check_capabilities: Annotated[
        bool, typer.Option(help="Check structured output, tool calling and LoRA.")
    ] = True,
    lora_adapter: Annotated[str | None, typer.Option(help="A LoRA adapter to request.")] = None,
    engine_version: Annotated[str | None, typer.Option(help="Engine version.")] = None,
    precision: Annotated[str | None, typer.Option(help="fp8, bf16, ...")] = None,
    gpu: Annotated[str | None, typer.Option(help="GPU SKU (else from nvidia-smi).")] = None,
    gpu_count: Annotated[int | None, typer.Option(help="GPUs per replica.")] = None,
    tp: Annotated[int | None, typer.Option(help="Tensor-parallel size.")] = None,
    pp: Annotated[int | None, typer.Option(help="Pipeline-parallel size.")] = None,
    db: Annotated[
        str | None, typer.Option("--db", help="Also store the run in this database.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Sweep a vLLM / TensorRT-LLM server (launched here or already running) and write a RunFile.

    Exits 1 when the server died mid-sweep (the levels measured so far are kept in --out).
    """
    fields: dict[str, object] = {
        "base_url": base_url,
        "launch": launch_cmd,
        "engine": engine_name,
        "model": model,
        "concurrency": concurrency,
        "rate": rate,
        "arrival": arrival,
        "burstiness": burstiness,
        "requests_per_level": requests_per_level,
        "duration_per_level_s": duration_per_level,
        "endpoint": endpoint,
        "isl": isl,
        "osl": osl,
        "distribution": length_distribution,
        "isl_stddev": isl_stddev,
        "osl_stddev": osl_stddev,
        "shape": shape,
        "prefix_sharing": prefix_sharing,
        "tokenizer": tokenizer,
        "api_key_env": api_key_env,
        "ignore_eos": ignore_eos,
        "stop_at_saturation": stop_at_saturation,
        "min_gain_pct": min_gain_pct,
        "ttft_blowup_factor": ttft_blowup,
        "check_capabilities": check_capabilities,
        "lora_adapter": lora_adapter,
        "engine_version": engine_version,
        "precision": precision,
        "gpu": gpu,
        "gpu_count": gpu_count,
        "tp": tp,
        "pp": pp,
        "out": out_file,
    }
    plan = _guard(lambda: session_plan_from_flags(fields))
    outcome = _guard(lambda: _run_with_progress(plan, as_json))
    stored = None
    if db is not None:
        stored = _guard(lambda: repository.save_run(_engine(db), outcome.run))
    _report_probe(outcome, out_file, stored, as_json)
    if not outcome.complete:
        raise typer.Exit(1)


def _run_with_progress(plan: SessionPlan, quiet: bool) -> ProbeOutcome:
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        console=err,
        disable=quiet,
        transient=False,
    ) as progress:
        tasks: dict[int, TaskID] = {}

        def show(event: ProgressEvent) -> None:
            name = (
                f"level {event.level_index + 1}/{event.levels_total}: {event.load_kind} "
                f"{event.load_value:g}"
            )
            if event.level_index not in tasks:
                tasks[event.level_index] = progress.add_task(
                    name, total=event.requests_total, status=""
                )
            tok_s = event.output_tok_s_so_far
            status = f"{tok_s:,.0f} tok/s" if tok_s is not None else ""
            if event.failures:
                status += f", {event.failures} failed"
            progress.update(tasks[event.level_index], completed=event.requests_done, status=status)

        return asyncio.run(run_session(plan, show))


def _report_probe(
    outcome: ProbeOutcome, path: Path, stored: SaveResult | None, as_json: bool
) -> None:
    if as_json:
        _print_json(
            {
                "out": str(path),
                "complete": outcome.complete,
                "stop_reason": outcome.stop_reason,
                "knee": outcome.knee,
                "run_id": stored.run_id if stored else None,
                "run": run_to_dict(stored.run_id if stored else 0, None, outcome.run),
            }
        )
        return
    for level in outcome.run.levels:
        tok_s, ttft = level.value("output_tok_s"), level.value("p50_ttft_ms")
        out.print(
            f"{level.load_kind} {level.load_value:g}: "
            f"{'-' if tok_s is None else f'{tok_s:,.0f}'} output tok/s, p50 TTFT "
            f"{'-' if ttft is None else f'{ttft:,.1f}'} ms, {level.completed} ok, "
            f"{level.failed} failed",
            markup=False,
            highlight=False,
        )
    state = "complete" if outcome.complete else "INCOMPLETE"
    out.print(f"{state}: {outcome.stop_reason}; run file {path}", markup=False, highlight=False)
    if stored is not None:
        out.print(stored.message, markup=False, highlight=False)


@app.command("sim-server")
def sim_server_cmd(
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    profile: Annotated[str, typer.Option(help="Simulator profile.")] = "vllm-h100-llama70b-fp8",
    host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
    time_scale: Annotated[
        float, typer.Option(help="Simulated seconds per real second (0.1 = 10x faster).")
    ] = 1.0,
) -> None:
    """Serve a SIMULATED OpenAI-compatible engine (continuous batching, calibrated profiles).

    For demos, tests and client benchmarks; runs probed against it are labelled simulated.
    """
    chosen = _guard(lambda: get_profile(profile))
    out.print(
        f"SIMULATED engine, profile {chosen.name} ({chosen.description}) on "
        f"http://{host}:{port}/v1 (known profiles: {', '.join(sorted(PROFILES))})",
        markup=False,
        highlight=False,
    )
    serve(host, port, profile, time_scale=time_scale)


@app.command("demo-data")
def demo_data_cmd(
    reset_prices: Annotated[
        bool, typer.Option(help="Replace the price catalog with the shipped one.")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Load the published demo runs (seed article, AIConfigurator silicon sample) and prices."""
    engine = _engine(db)
    result = _guard(lambda: load_demo_data(engine, reset_prices=reset_prices))
    if as_json:
        _print_json(
            {
                "runs_created": result.runs_created,
                "runs_already_present": result.runs_already_present,
                "prices_loaded": result.prices_loaded,
            }
        )
        return
    out.print(result.message(), markup=False, highlight=False)


@db_app.command("upgrade")
def db_upgrade_cmd(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Apply the database migrations (Alembic upgrade head)."""
    url = resolve_db_url(db)
    revision = _guard(lambda: upgrade(url))
    if as_json:
        _print_json({"db": redact(url), "revision": revision})
        return
    out.print(f"{redact(url)} is at revision {revision}", markup=False, highlight=False)


@db_app.command("backup")
def db_backup_cmd(
    out_file: Annotated[Path, typer.Option("--out", help="Backup file to write (.jsonl.gz).")],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Export the whole store (every table, ids kept) to one portable file."""
    from db.backup import backup  # noqa: PLC0415

    url = resolve_db_url(db)
    summary = _guard(lambda: backup(url, out_file))
    if as_json:
        _print_json({"db": redact(url), "out": str(out_file), **dataclasses.asdict(summary)})
        return
    out.print(f"{summary.message('backed up')} -> {out_file}", markup=False, highlight=False)


@db_app.command("restore")
def db_restore_cmd(
    backup_file: Annotated[Path, typer.Argument(help="A file written by `capplan db backup`.")],
    replace: Annotated[
        bool, typer.Option(help="Delete everything in the database first (else it must be empty).")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Restore a backup into an empty database (or --replace), keeping every id."""
    from db.backup import restore  # noqa: PLC0415

    url = resolve_db_url(db)
    summary = _guard(lambda: restore(url, backup_file, replace=replace))
    if as_json:
        _print_json({"db": redact(url), **dataclasses.asdict(summary)})
        return
    out.print(f"{redact(url)}: {summary.message('restored')}", markup=False, highlight=False)


@app.command("app")
def app_cmd(
    port: Annotated[int, typer.Option(help="Port for the web app.")] = 8501,
    address: Annotated[
        str,
        typer.Option(
            help="Interface to listen on: 127.0.0.1 for this machine only, 0.0.0.0 to serve a "
            "team (put it behind TLS and sign-in: docs/SECURITY.md)."
        ),
    ] = "127.0.0.1",
    db: DbOption = None,
) -> None:
    """Start the web app (Streamlit); a new store gets the demo data on first start."""
    url = resolve_db_url(db)
    engine = _engine(db)
    loaded = _guard(lambda: ensure_demo_data(engine))
    if loaded is not None:
        out.print(loaded.message(), markup=False, highlight=False)
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(Path(__file__).with_name("app.py")),
        "--server.port",
        str(port),
        "--server.address",
        address,
        "--server.headless",
        "true",
        "--server.maxUploadSize",
        str(MAX_IMPORT_BYTES // (1024 * 1024)),
        "--browser.gatherUsageStats",
        "false",
    ]
    shown = "localhost" if address in {"127.0.0.1", "0.0.0.0"} else address
    out.print(f"capplan on http://{shown}:{port} (store: {redact(url)})", markup=False)
    raise typer.Exit(subprocess.call(command, env=_app_env(url)))


def _app_env(url: str) -> dict[str, str]:
    import os  # noqa: PLC0415

    return {**os.environ, "CAPPLAN_DB": url}


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    app(args=list(argv) if argv is not None else None)


if __name__ == "__main__":
    main()
