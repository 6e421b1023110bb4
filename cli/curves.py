"""`capplan fit` and `capplan predict`, and reading the curves a command needs from the store."""

from __future__ import annotations

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
    parse_concurrencies,
    print_json,
    within,
)
from errors import InputError
from workflows.limits import RUN_ID

if TYPE_CHECKING:  # the store, the fitting code and rich's tables load when a command runs
    from rich.table import Table

    from planner.curves.load import LoadCurve
    from planner.fitting.predict import Prediction
    from planner.physics.roofline import PhysicsCheck
    from reports.present import JsonDict
    from workflows.store import Engine


def _curves(engine: Engine, run_id: int | None) -> list[LoadCurve]:
    from workflows.planning import load_curves, run_curves  # noqa: PLC0415
    from workflows.store import get_run  # noqa: PLC0415

    if run_id is not None:
        guard(lambda: get_run(engine, run_id, with_samples=False))
        return guard(lambda: run_curves(engine, [run_id]))
    # Every run, a chunk at a time: only the curves are kept, not the RunFiles.
    return guard(lambda: load_curves(engine))


@app.command("fit")
def fit_cmd(
    run: Annotated[
        int | None, typer.Option("--run", help="Only this run id.", callback=within(RUN_ID))
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Fit throughput, TTFT and TPOT curves for every run (or one) and show fit quality, with
    each run's workload (runs within tokenisation rounding of each other share one)."""
    from rich.table import Table  # noqa: PLC0415

    from reports.present import fit_to_dict  # noqa: PLC0415
    from workflows.curves import curve_workloads, fits_of  # noqa: PLC0415

    engine = open_engine(db)
    curves = _curves(engine, run)
    # Runs within tokenisation rounding of each other share a workload (their labels stay exact).
    documents = [
        fit_to_dict(fit) | {"workload": workload}
        for fit, workload in zip(fits_of(curves), curve_workloads(curves), strict=True)
    ]
    if as_json:
        print_json(documents)
        return
    table = Table("run", "curve", "workload", "series", "family", "points", "held-out MAPE %", "R²")
    for document in documents:
        for series in ("throughput", "ttft_p50", "ttft_p99", "tpot"):
            summary = document[series]
            if not isinstance(summary, dict):
                continue
            table.add_row(
                str(document["run_id"]),
                str(document["label"]),
                str(document["workload"]),
                series,
                str(summary["family"]),
                _fmt(summary["n_points"], 0),
                _fmt(summary.get("loo_mape_pct")),
                _fmt(summary.get("r_squared"), 3),
            )
    from reports.terminal_tables import readable  # noqa: PLC0415

    out.print(readable(table, out, ("curve",)))  # the run id names the curve too


def _fmt(value: object, digits: int = 1) -> str:
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) else "-"


# The options of `capplan predict`.
PredictRunOption = Annotated[
    int, typer.Option("--run", help="Run id to predict from.", callback=within(RUN_ID))
]
ConcurrenciesOption = Annotated[
    str, typer.Option(help="Comma-separated concurrencies, e.g. 8,24,64.")
]
ProjectToOption = Annotated[
    str | None,
    typer.Option(
        "--project-to",
        help="Project the run onto another GPU (H100 <-> H200) by the physics; the result "
        "is labelled projected, never measured.",
    ),
]


@app.command("predict")
def predict_cmd(
    run: PredictRunOption,
    concurrency: ConcurrenciesOption,
    project_to: ProjectToOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Predict output tok/s, TTFT p50/p99 and TPOT (with bands) at the given concurrencies,
    with the curve's provenance and where each value sits against the physical ceilings."""
    from reports.present import physics_to_dict  # noqa: PLC0415
    from workflows.predict import predict_levels  # noqa: PLC0415

    values = guard(lambda: parse_concurrencies(concurrency))
    engine = open_engine(db)
    curves = _curves(engine, run)
    if not curves:
        fail(InputError("run has no concurrency levels to fit", field="--run", value=run))
    found = guard(lambda: predict_levels(curves, values, project_to))
    curve, physics = found.curve, found.physics
    rows = _prediction_rows(curve, list(found.predictions), physics)
    flags = list(found.flags)
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
    from reports.terminal_tables import readable  # noqa: PLC0415

    out.print(readable(_predictions_table(rows), out, ("% of ceiling", "TTFT p50 ms")))
    for line in [*physics.notes, *flags]:
        out.print(f"- {line}", markup=False, highlight=False)


def _prediction_rows(
    curve: LoadCurve, predictions: list[Prediction], physics: PhysicsCheck
) -> list[JsonDict]:
    """Each prediction with its share of the ceilings (a projected curve says so in its range)."""
    from reports.present import prediction_to_dict, prediction_vs_ceiling  # noqa: PLC0415

    isl, osl = curve.key.isl, curve.key.osl
    rows = [
        prediction_to_dict(p) | prediction_vs_ceiling(p, physics.ceilings, isl, osl)
        for p in predictions
    ]
    if curve.provenance == "projected":
        for row in rows:
            row["range"] = f"PROJECTED, {row['range']}"
    return rows


def _predictions_table(rows: list[JsonDict]) -> Table:
    """The terminal table of the predictions."""
    from rich.table import Table  # noqa: PLC0415

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
    return table
