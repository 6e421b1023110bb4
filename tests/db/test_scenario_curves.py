"""Plans read only the curves of the scenario's model: the plan, its ranges, its sensitivity and
the recorded run ids come out the same as over every stored curve, on the demo store with a
second model measured on the very same deployments (so other-model curves share every
engine x GPU x TP group the planner looks at)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from sqlalchemy import Engine

from db import repository, run_reads
from db.engine import make_engine
from measurements.run_file import RunFile
from planner.analysis.capacity import make_plan
from planner.analysis.sensitivity import sensitivity
from planner.analysis.uncertainty import plan_ranges
from planner.curves.load import LoadCurve, curve_from_run
from planner.inputs.prices import load_catalog_csv
from planner.inputs.scenario import Scenario, load_scenario
from planner.physics.identity import same_or_twin
from reports.export import plan_to_dict, ranges_to_dict
from team.roles import SYSTEM
from workflows import history, planning

SCENARIOS = sorted(Path("docs/scenarios").glob("*.yaml"))
OTHER_MODEL = "Qwen/Qwen2.5-72B-Instruct"


def _other_model(run: RunFile, index: int) -> RunFile:
    deployment = run.deployment.model_copy(update={"model": OTHER_MODEL})
    return run.model_copy(
        update={"deployment": deployment, "source_sha256": f"{index:064x}", "label": "qwen copy"}
    )


@pytest.fixture(scope="module")
def store(stores: object) -> Engine:
    """The demo store plus a copy of every demo run measured on another model."""
    engine = make_engine(stores.demo("scenario_curves"))  # type: ignore[attr-defined]
    demo = [stored.run for stored in run_reads.load_runs(engine)]
    repository.save_runs(engine, [_other_model(run, i) for i, run in enumerate(demo)], actor=SYSTEM)
    return engine


def _curves(runs: list[run_reads.StoredRun]) -> list[LoadCurve]:
    curves = (curve_from_run(s.run, s.run_id) for s in runs)
    return [curve for curve in curves if curve is not None]


def test_the_store_holds_both_models_on_the_same_deployments(store: Engine) -> None:
    every = _curves(list(run_reads.iter_runs(store)))
    by_model = {c.key.model for c in every}
    assert OTHER_MODEL in by_model and len(by_model) >= 2
    scenario = load_scenario(SCENARIOS[0])
    names = planning.model_names_like(store, scenario.model)
    assert names and OTHER_MODEL not in names
    subset = _curves(list(run_reads.iter_runs(store, models=names)))
    assert 0 < len(subset) < len(every)
    assert {c.run_id for c in subset} == {c.run_id for c in every if c.key.model in names}


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda path: path.stem)
def test_a_plan_over_the_scenario_model_equals_the_plan_over_every_curve(
    store: Engine, path: Path
) -> None:
    scenario = load_scenario(path)
    prices = load_catalog_csv()
    every = _curves(list(run_reads.iter_runs(store)))
    names = planning.model_names_like(store, scenario.model)
    subset = _curves(list(run_reads.iter_runs(store, models=names)))
    assert len(subset) < len(every)
    full, narrow = make_plan(scenario, every, prices), make_plan(scenario, subset, prices)
    assert plan_to_dict(narrow) == plan_to_dict(full)
    assert planning.plan_run_ids(narrow) == planning.plan_run_ids(full)
    assert planning.plan_run_ids(full)
    assert history.basis_run_ids(narrow, subset) == history.basis_run_ids(full, every)
    assert sensitivity(scenario, subset, prices) == sensitivity(scenario, every, prices)


def _same_model_only(scenario: Scenario, curves: Sequence[LoadCurve]) -> list[LoadCurve]:
    # The planner's rule: the same model or a twin (DeepSeek-V3 backs a DeepSeek-R1 plan).
    return [curve for curve in curves if same_or_twin(curve.key.model, scenario.model)]


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda path: path.stem)
def test_ranges_over_the_scenario_model_equal_ranges_over_same_model_curves(
    store: Engine, path: Path
) -> None:
    """The bootstrap draws noise for every curve of a candidate's engine x GPU x TP group, other
    models' curves included (planner.analysis.uncertainty._perturbed), though the planner never uses
    them: over every curve the draws shift, so the ranges differ by chance from those over the
    model's curves. Over the model's curves, whichever way they were read, they are the same."""
    scenario = load_scenario(path)
    prices = load_catalog_csv()
    every = _curves(list(run_reads.iter_runs(store)))
    subset = _curves(
        list(run_reads.iter_runs(store, models=planning.model_names_like(store, scenario.model)))
    )
    narrow = plan_ranges(scenario, subset, prices, samples=20)
    filtered = plan_ranges(scenario, _same_model_only(scenario, every), prices, samples=20)
    assert ranges_to_dict(narrow) == ranges_to_dict(filtered)
    assert narrow.options and any(o.sampled for o in narrow.options)


def test_ranges_over_the_scenario_model_equal_ranges_over_every_curve(store: Engine) -> None:
    scenario = load_scenario(SCENARIOS[0])
    prices = load_catalog_csv()
    every = _curves(list(run_reads.iter_runs(store)))
    subset = _same_model_only(scenario, every)
    narrow = plan_ranges(scenario, subset, prices, samples=20)
    assert ranges_to_dict(narrow) == ranges_to_dict(
        plan_ranges(scenario, every, prices, samples=20)
    )
