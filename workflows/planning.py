"""Planning: scenario -> the stored curves it can use -> plan, cost ranges, sensitivity, the plan
document and the capacity report. The CLI's `plan`/`report` and the Plan page call these.

A plan reads only its model's runs (the planner leaves every other model's curve out, so the plan
is the same as over every run); with no run of the model every run is read, so the planner's
error can name the models that have curves.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from db import run_lists, run_reads
from db.engine import Engine
from db.prices import list_prices
from db.run_reads import StoredRun
from errors import InputError
from planner.analysis.capacity import Plan, make_plan
from planner.analysis.sensitivity import SensitivityRow, sensitivity
from planner.analysis.uncertainty import PlanRanges, ranges_of
from planner.analysis.what_if import what_if_demand
from planner.curves.load import LoadCurve, canonical_model, curve_from_run
from planner.inputs.prices import PriceEntry, load_catalog_csv
from planner.inputs.scenario import Scenario
from planner.sizing.draws import Draws
from reports.export import plan_to_csv, plan_to_dict, ranges_to_dict, sensitivity_rows
from reports.model import Report, RunMeta, build_report, run_meta
from reports.what_if_view import what_if_sheet
from workflows.limits import SAMPLES
from workflows.models import sync_catalog

__all__ = [
    "EXPORT_SUFFIXES",
    "Planned",
    "curves_and_metas",
    "load_curves",
    "model_names_like",
    "plan_document",
    "plan_export",
    "plan_json",
    "plan_run_ids",
    "plan_scenario",
    "price_catalog",
    "ranges_and_swings",
    "report_of",
    "same_model",
    "scenario_curves",
    "scenario_runs",
]

EXPORT_SUFFIXES = (".json", ".csv", ".xlsx")


@dataclass(frozen=True, slots=True)
class Planned:
    """A plan with what it was made from (the curves and the prices), for ranges and reports."""

    plan: Plan
    curves: tuple[LoadCurve, ...]
    prices: tuple[PriceEntry, ...]


def price_catalog(engine: Engine) -> list[PriceEntry]:
    """The stored price catalog, or the shipped one when the store has none."""
    return list_prices(engine) or load_catalog_csv()


def model_names_like(engine: Engine, model: str) -> list[str]:
    """The stored model names the planner matches to `model` (same canonical model)."""
    return same_model(run_lists.model_names(engine), model)


def same_model(names: Iterable[str], model: str) -> list[str]:
    """The names in `names` the planner takes for `model` (same canonical model)."""
    wanted = canonical_model(model)
    return [name for name in names if canonical_model(name) == wanted]


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


def curves_and_metas(stored: Iterable[StoredRun]) -> tuple[list[LoadCurve], list[RunMeta]]:
    """One pass over stored runs: their curves and each run's line for the report."""
    curves: list[LoadCurve] = []
    metas: list[RunMeta] = []
    for s in stored:
        curve = curve_from_run(s.run, s.run_id)
        if curve is not None:
            curves.append(curve)
        metas.append(run_meta(s.run_id, s.imported_at, s.run))
    return curves, metas


def plan_scenario(engine: Engine, scenario: Scenario, samples: int | None = None) -> Planned:
    """The plan of a scenario over the stored curves of its model and the price catalog, its
    options sized over `samples` error samples each (None or 0: planner.sizing.draws.SAMPLES)."""
    prices = price_catalog(engine)
    curves = scenario_curves(engine, scenario)
    plan = make_plan(scenario, curves, prices, draws=draws_for(samples))
    return Planned(plan, tuple(curves), tuple(prices))


def draws_for(samples: int | None) -> Draws | None:
    """The error samples a `--samples` value asks for (None or 0: the default)."""
    if samples is not None and not SAMPLES.holds(samples):  # 10^9 would ask for 37 GiB
        raise InputError(f"must be {SAMPLES.text()}", field="samples", value=samples)
    return Draws(samples=samples) if samples else None


def ranges_and_swings(
    plan: Plan,
    curves: Sequence[LoadCurve],
    prices: Sequence[PriceEntry],
    samples: int | None,
    with_sensitivity: bool,
) -> tuple[PlanRanges | None, list[SensitivityRow] | None]:
    """The plan's cost ranges from its own samples (none when samples is 0) and, when asked,
    the sensitivity rows."""
    ranges = None if samples == 0 else ranges_of(plan)
    swings = sensitivity(plan.scenario, curves, prices) if with_sensitivity else None
    return ranges, swings


def plan_document(
    plan: Plan, ranges: PlanRanges | None, swings: list[SensitivityRow] | None
) -> dict[str, object]:
    """The plan as one JSON-safe document, with its ranges and sensitivity (None when absent)."""
    document = plan_to_dict(plan)
    document["ranges"] = ranges_to_dict(ranges) if ranges else None
    document["sensitivity"] = sensitivity_rows(swings) if swings is not None else None
    document["what_if"] = what_if_sheet(what_if_demand(plan))
    return document


def plan_json(plan: Plan, ranges: PlanRanges | None, swings: list[SensitivityRow] | None) -> str:
    """plan_document as indented JSON text (the --export .json file and the app's download)."""
    return json.dumps(plan_document(plan, ranges, swings), indent=2, default=str)


def plan_export(
    plan: Plan, suffix: str, ranges: PlanRanges | None, swings: list[SensitivityRow] | None
) -> bytes:
    """The plan as a .json, .csv or .xlsx file's bytes."""
    if suffix == ".json":
        return plan_json(plan, ranges, swings).encode("utf-8")
    if suffix == ".csv":
        return plan_to_csv(plan).encode("utf-8")
    if suffix == ".xlsx":
        from reports.export import plan_to_xlsx  # noqa: PLC0415 - openpyxl on demand

        return plan_to_xlsx(plan, ranges, swings)
    raise ValueError(f"unknown plan export {suffix!r}: expected one of {EXPORT_SUFFIXES}")


def plan_run_ids(plan: Plan) -> list[int]:
    """The stored runs behind a plan's options, ascending (projected curves cite their source)."""
    return sorted({o.curve.run_id for o in plan.options if o.curve.run_id is not None})


def report_of(
    engine: Engine,
    plan: Plan,
    ranges: PlanRanges | None,
    swings: list[SensitivityRow] | None,
    metas: Sequence[RunMeta] | None = None,
) -> Report:
    """The capacity report of a plan, listing `metas` (default: the runs behind its options,
    read from the store)."""
    if metas is None:
        stored = run_reads.load_runs(engine, plan_run_ids(plan))
        metas = [run_meta(s.run_id, s.imported_at, s.run) for s in stored]
    return build_report(
        plan, ranges=ranges, swings=swings, runs=list(metas), generated_at=datetime.now(UTC)
    )
