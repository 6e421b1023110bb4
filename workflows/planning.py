"""Planning's store reads (the curves a scenario can use, the price catalog) and the plan's
files (JSON document, CSV, XLSX). The plan itself is made once per scenario by
workflows.session.PlanningSession, which the CLI's `plan`/`report` and the Plan page all use.

A plan reads only its model's runs (the planner leaves every other model's curve out, so the plan
is the same as over every run); with no run of the model every run is read, so the planner's
error can name the models that have curves.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence

from db import run_lists, run_reads
from db.engine import Engine
from db.prices import list_prices
from db.run_reads import StoredRun
from errors import InputError
from planner.analysis.budget import BudgetPlan
from planner.analysis.capacity import Plan
from planner.analysis.sensitivity import SensitivityRow
from planner.analysis.uncertainty import PlanRanges
from planner.analysis.what_if import WhatIfRow
from planner.curves.load import LoadCurve, curve_from_run
from planner.inputs.prices import PriceEntry, load_catalog_csv
from planner.inputs.scenario import Scenario
from planner.physics.identity import matching_names
from planner.sizing.draws import Draws
from reports.export import plan_to_csv, plan_to_dict, ranges_to_dict, sensitivity_rows
from reports.model import RunMeta, run_meta
from reports.what_if_view import what_if_sheet
from workflows.limits import SAMPLES
from workflows.models import sync_catalog

__all__ = [
    "EXPORT_SUFFIXES",
    "draws_for",
    "load_curves",
    "model_names_like",
    "plan_document",
    "plan_export",
    "plan_run_ids",
    "price_catalog",
    "run_metas",
    "same_model",
    "scenario_curves",
    "scenario_runs",
]

EXPORT_SUFFIXES = (".json", ".csv", ".xlsx")


def price_catalog(engine: Engine) -> list[PriceEntry]:
    """The stored price catalog, or the shipped one when the store has none."""
    return list_prices(engine) or load_catalog_csv()


def model_names_like(engine: Engine, model: str) -> list[str]:
    """The stored model names the planner matches to `model` (same model or a twin)."""
    sync_catalog(engine)  # a twin may be known only through a config added to this store
    return same_model(run_lists.model_names(engine), model)


def same_model(names: Iterable[str], model: str) -> list[str]:
    """The names in `names` the planner takes for `model`: the same canonical model, or a twin
    (the same architecture: planner.physics.identity)."""
    return matching_names(names, model)


def load_curves(
    engine: Engine,
    models: Sequence[str] | None = None,
    workload: tuple[int | None, int | None] | None = None,
) -> list[LoadCurve]:
    """One curve per stored run with concurrency levels, of `models` and the (ISL, OSL)
    `workload` when given; runs are read a chunk at a time and only the curves are kept."""
    sync_catalog(engine)  # the store's own model configs, for the physics of its curves
    stored = run_reads.iter_runs(engine, models=models, workload=workload)
    return built_curves(stored)


def run_curves(engine: Engine, run_ids: Sequence[int]) -> list[LoadCurve]:
    """The curves of these stored runs, with the store's added model configs known (every
    command reads the one model registry: shipped configs plus the store's own)."""
    sync_catalog(engine)
    return built_curves(run_reads.load_runs(engine, list(run_ids)))


def built_curves(stored: Iterable[StoredRun]) -> list[LoadCurve]:
    """The curves of these stored runs (runs without concurrency levels give none)."""
    curves = (curve_from_run(s.run, s.run_id) for s in stored)
    return [curve for curve in curves if curve is not None]


def scenario_runs(engine: Engine, scenario: Scenario) -> Iterator[StoredRun]:
    """The runs a plan of the scenario can draw on, a chunk at a time: those of its model, or
    every run when none has it."""
    sync_catalog(engine)
    names = model_names_like(engine, scenario.model)
    found = False
    for stored in run_reads.iter_runs(engine, models=names) if names else ():
        found = True
        yield stored
    if not found:
        yield from run_reads.iter_runs(engine)


def scenario_curves(engine: Engine, scenario: Scenario) -> list[LoadCurve]:
    """The curves of scenario_runs."""
    return built_curves(scenario_runs(engine, scenario))


def draws_for(samples: int | None) -> Draws | None:
    """The error samples a `--samples` value asks for (None or 0: the default)."""
    if samples is not None and not SAMPLES.holds(samples):  # 10^9 would ask for 37 GiB
        raise InputError(f"must be {SAMPLES.text()}", field="samples", value=samples)
    return Draws(samples=samples) if samples else None


def plan_document(
    plan: Plan,
    ranges: PlanRanges | None,
    swings: list[SensitivityRow] | None,
    what_if: Sequence[WhatIfRow],
) -> dict[str, object]:
    """The plan as one JSON-safe document, with its ranges, sensitivity (None when absent) and
    what-if rows."""
    document = plan_to_dict(plan)
    document["ranges"] = ranges_to_dict(ranges) if ranges else None
    document["sensitivity"] = sensitivity_rows(swings) if swings is not None else None
    document["what_if"] = what_if_sheet(what_if)
    return document


def plan_export(
    plan: Plan,
    suffix: str,
    ranges: PlanRanges | None,
    swings: list[SensitivityRow] | None,
    what_if: Sequence[WhatIfRow],
    *,
    budget: BudgetPlan | None = None,
) -> bytes:
    """The plan as a .json, .csv or .xlsx file's bytes (the .xlsx with the budget over time
    when given; the session adds it to the .json document itself)."""
    if suffix == ".json":
        document = plan_document(plan, ranges, swings, what_if)
        return json.dumps(document, indent=2, default=str).encode("utf-8")
    if suffix == ".csv":
        return plan_to_csv(plan).encode("utf-8")
    if suffix == ".xlsx":
        from reports.export import plan_to_xlsx  # noqa: PLC0415 - openpyxl on demand

        return plan_to_xlsx(plan, ranges, swings, what_if, budget)
    raise ValueError(f"unknown plan export {suffix!r}: expected one of {EXPORT_SUFFIXES}")


def plan_run_ids(plan: Plan) -> list[int]:
    """The stored runs behind a plan's options, ascending (projected curves cite their source)."""
    return sorted({o.curve.run_id for o in plan.options if o.curve.run_id is not None})


def run_metas(engine: Engine, run_ids: Sequence[int]) -> list[RunMeta]:
    """The report's line for each of these stored runs."""
    stored = run_reads.load_runs(engine, list(run_ids))
    return [run_meta(s.run_id, s.imported_at, s.run) for s in stored]
