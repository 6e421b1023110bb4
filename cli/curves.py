"""`capplan fit` and `capplan predict`, and reading the curves a command needs from the store."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Annotated

import typer
from rich.table import Table

from cli.common import (
    DbOption,
    JsonOption,
    app,
    fail,
    guard,
    open_engine,
    out,
    parse_concurrencies,
    print_json,
)
from db import repository
from db.engine import Engine
from errors import InputError
from planner.curves import LoadCurve, canonical_gpu, curve_from_run
from planner.fit import fit_curve, predict
from planner.physics import check_curve
from planner.present import (
    fit_to_dict,
    physics_to_dict,
    prediction_to_dict,
    prediction_vs_ceiling,
)
from planner.projection import project_curve
from planner.scenario import Scenario
from reports.model import RunMeta, run_meta


def _curves(engine: Engine, run_id: int | None) -> list[LoadCurve]:
    if run_id is not None:
        guard(lambda: repository.get_run(engine, run_id, with_samples=False))
        return _built(guard(lambda: repository.load_runs(engine, [run_id])))
    # Every run, a chunk at a time: only the curves are kept, not the RunFiles.
    return guard(lambda: _built(repository.iter_runs(engine)))


def _built(stored: Iterable[repository.StoredRun]) -> list[LoadCurve]:
    curves = (curve_from_run(s.run, s.run_id) for s in stored)
    return [c for c in curves if c is not None]


def scenario_runs(engine: Engine, scenario: Scenario) -> Iterator[repository.StoredRun]:
    """The runs a plan of the scenario can draw on, a chunk at a time: those of its (canonical)
    model, since the planner leaves other models' curves out; every run when none has the
    model (so the planner's error names the models with curves)."""
    names = guard(lambda: repository.models_like(engine, scenario.model))
    found = False
    for stored in repository.iter_runs(engine, models=names) if names else ():
        found = True
        yield stored
    if not found:
        yield from repository.iter_runs(engine)


def curves_and_metas(
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


def scenario_curves(engine: Engine, scenario: Scenario) -> list[LoadCurve]:
    return guard(lambda: _built(scenario_runs(engine, scenario)))


@app.command("fit")
def fit_cmd(
    run: Annotated[int | None, typer.Option("--run", help="Only this run id.")] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Fit throughput, TTFT and TPOT curves for every run (or one) and show fit quality."""
    engine = open_engine(db)
    fits = [fit_curve(curve) for curve in _curves(engine, run)]
    if as_json:
        print_json([fit_to_dict(f) for f in fits])
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
    values = guard(lambda: parse_concurrencies(concurrency))
    engine = open_engine(db)
    curves = _curves(engine, run)
    if not curves:
        fail(InputError("run has no concurrency levels to fit", field="--run", value=run))
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
        print_json(
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
        fail(InputError(projected, field="--project-to", value=gpu))
    return projected
