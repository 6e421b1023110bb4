"""The Curves and Plan pages read and fit only what they show: the chosen model and workload's
curves, the scenario model's curves; the choices come from SQL, not from building curves."""

from __future__ import annotations

from pathlib import Path

from db import repository, run_reads
from db.engine import make_engine
from measurements.run_file import RunFile
from planner.analysis.capacity import make_plan
from planner.inputs.scenario import load_scenario
from reports.export import plan_to_dict
from team.roles import SYSTEM
from ui import resources as res
from workflows import model_choices

OTHER_MODEL = "Qwen/Qwen2.5-72B-Instruct"
SCENARIO = Path("docs/scenarios/agent-platform.yaml")


def _copy(run: RunFile, index: int) -> RunFile:
    deployment = run.deployment.model_copy(update={"model": OTHER_MODEL})
    return run.model_copy(update={"deployment": deployment, "source_sha256": f"{index:064x}"})


def _with_other_model(url: str) -> None:
    engine = make_engine(url)
    demo = [stored.run for stored in run_reads.load_runs(engine)]
    repository.save_runs(engine, [_copy(run, i) for i, run in enumerate(demo)], actor=SYSTEM)
    engine.dispose()
    res.bump_version(url)


def test_choices_match_those_built_from_every_curve(store_url: str) -> None:
    _with_other_model(store_url)
    version = res.store_version(store_url)
    every = res.load_curves(store_url, version)
    keys = res.curve_workloads(store_url, version)
    models = model_choices.model_name_choices(model for model, _, _ in keys)
    assert models == model_choices.model_choices(every)
    assert OTHER_MODEL in models and len(models) >= 2
    for model in models:
        chosen = model_choices.workload_key_choices(keys, model)
        assert chosen == model_choices.workload_choices(every, model)


def test_one_group_is_fitted_and_matches_the_fits_of_every_curve(store_url: str) -> None:
    _with_other_model(store_url)
    version = res.store_version(store_url)
    keys = res.curve_workloads(store_url, version)
    checked = 0
    for model in model_choices.model_name_choices(model for model, _, _ in keys):
        for workload in model_choices.workload_key_choices(keys, model):
            group = res.fits_for_workload(store_url, version, model, workload)
            every = model_choices.fits_for(res.curve_fits(store_url, version), model, workload)
            assert [fit.curve for fit in group] == [fit.curve for fit in every]
            assert [fit.throughput for fit in group] == [fit.throughput for fit in every]
            checked += len(group)
    assert checked == len(res.load_curves(store_url, version))


def test_the_plan_page_plans_over_the_scenario_model_only(store_url: str) -> None:
    _with_other_model(store_url)
    version = res.store_version(store_url)
    scenario = load_scenario(SCENARIO)
    mine = res.scenario_curves(scenario, store_url, version)
    every = res.load_curves(store_url, version)
    assert mine == [c for c in every if c.key.model_id == scenario.model_id]
    assert len(mine) < len(every)
    prices = res.price_catalog(store_url, version)
    assert plan_to_dict(res.plan_for(scenario, store_url, version)) == plan_to_dict(
        make_plan(scenario, every, prices)
    )


def test_a_scenario_of_a_model_without_curves_reads_every_curve(store_url: str) -> None:
    version = res.store_version(store_url)
    scenario = load_scenario(SCENARIO).model_copy(update={"model": "nobody/unknown-7b"})
    every = res.load_curves(store_url, version)
    assert every and res.scenario_curves(scenario, store_url, version) == every
