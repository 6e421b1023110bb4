"""Saved scenarios and their plan history: record a plan (its scenario, the runs behind it and the
prices it used), regenerate a record from exactly those inputs and say whether it matches,
rename and clone scenarios with their YAML's name kept in step. The store (db.scenarios) only
stores and reads; the Scenarios page, the Plan page and `capplan report --record` call these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from db import plan_basis, scenarios
from db.engine import Engine
from db.plan_basis import BasisNow
from db.scenarios import NewPlanRecord, PlanRecord, PlanSummary, ScenarioRecord
from errors import ScenarioError
from planner.analysis.capacity import Plan, make_plan
from planner.curves.load import LoadCurve
from planner.fitting.shapes import group_key
from planner.inputs.scenario import scenario_from_yaml, scenario_to_yaml
from team.roles import Actor
from workflows.planning import load_curves, plan_run_ids, run_curves

__all__ = [
    "Regenerated",
    "basis_run_ids",
    "clone_scenario",
    "plan_summary",
    "record_plan",
    "regenerate",
    "rename_scenario",
    "renamed_yaml",
]


@dataclass(frozen=True, slots=True)
class Regenerated:
    """A plan re-made from a record, and whether its summary equals the recorded one."""

    record: PlanRecord
    plan: Plan
    summary: PlanSummary
    matches: bool


def plan_summary(plan: Plan) -> PlanSummary:
    """The recorded answer of a plan: choice title, total $/month, nodes, recommendation text.
    Over budget, the cheapest option meeting the SLA with its cost and nodes, its title saying
    it is over the budget; all None only when nothing meets the SLA."""
    choice = plan.recommendation.choice
    shown = choice or plan.recommendation.over_budget
    title = shown.title() if shown else None
    if choice is None and shown is not None:
        budget = plan.scenario.budget
        limit = f" ${budget.monthly_usd:,.0f}/month" if budget else ""
        title = f"over the{limit} budget: cheapest meeting the SLA is {title}"
    return PlanSummary(
        choice_title=title,
        total_monthly_cost_usd=shown.total_monthly_cost_usd if shown else None,
        nodes=shown.nodes if shown else None,
        recommendation=plan.recommendation.reason,
    )


def basis_run_ids(plan: Plan, curves: Sequence[LoadCurve]) -> list[int]:
    """The options' runs plus every run in `curves` of an option's shape group: the siblings
    whose shared shape corrected the options' fits (planner.fitting.shapes), so a re-plan over
    exactly these runs picks the same curves and fits them the same way."""
    groups = {group_key(option.curve) for option in plan.options}
    siblings = {c.run_id for c in curves if c.run_id is not None and group_key(c) in groups}
    return sorted(siblings | set(plan_run_ids(plan)))


def record_plan(
    engine: Engine,
    scenario_name: str,
    plan: Plan,
    *,
    actor: Actor,
    curves: Sequence[LoadCurve] | None = None,
) -> PlanRecord:
    """Record a plan of a saved scenario (InputError when none has that name). `curves` are the
    curves the plan was made from (default: every stored run's curve)."""
    basis = basis_run_ids(plan, load_curves(engine) if curves is None else curves)
    new = NewPlanRecord(
        scenario_yaml=scenario_to_yaml(plan.scenario),
        run_ids=tuple(plan_run_ids(plan)),
        basis_run_ids=tuple(basis),
        catalog_version=plan.catalog_version,
        prices_used=tuple(plan.prices_used),
        summary=plan_summary(plan),
    )
    return scenarios.record_plan(engine, scenario_name, new, actor=actor)


def regenerate(engine: Engine, record_id: int) -> Regenerated:
    """Re-make a recorded plan from its scenario YAML, exactly its runs and its stored prices,
    with the recorded summary compared to the new one; PlanningError naming the runs deleted
    since. The plan keeps the recorded catalog version (its prices are that catalog's)."""
    record = scenarios.get_plan_record(engine, record_id)
    plan_basis.refuse_missing_runs(engine, record)
    scenario = scenario_from_yaml(record.scenario_yaml, f"plan record {record_id}")
    curves = run_curves(engine, record.basis_run_ids)
    plan = make_plan(scenario, curves, record.prices_used)
    plan = replace(plan, catalog_version=record.catalog_version)
    summary = plan_summary(plan)
    return Regenerated(record, plan, summary, summary == record.summary)


def renamed_yaml(yaml_text: str, name: str) -> str:
    """The YAML with its `name` set; a YAML that no longer validates is kept as it is (the
    name column is what lists and loads it)."""
    try:
        scenario = scenario_from_yaml(yaml_text, "saved scenario")
    except ScenarioError:
        return yaml_text
    return scenario_to_yaml(scenario.model_copy(update={"name": name}))


def rename_scenario(engine: Engine, old: str, new: str, *, actor: Actor) -> ScenarioRecord:
    """Rename a saved scenario and the name in its YAML; its plan history follows it."""
    return scenarios.rename_scenario(engine, old, new, rename_yaml=renamed_yaml, actor=actor)


def clone_scenario(engine: Engine, name: str, new_name: str, *, actor: Actor) -> ScenarioRecord:
    """Copy a saved scenario under a new name (no plan history), owned by actor."""
    return scenarios.clone_scenario(engine, name, new_name, rename_yaml=renamed_yaml, actor=actor)


def basis_now(engine: Engine, record: PlanRecord) -> BasisNow:
    """How the runs and prices a recorded plan rested on stand now (db.plan_basis)."""
    return plan_basis.basis_now(engine, record)
