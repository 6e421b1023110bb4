"""Edit a saved scenario in place on the Scenarios page: the inputs a planning session changes
most (workload, demand, SLA targets, budget, what-if multiples) in a form, every input as YAML
behind "details", saved under the same name; then open it on the Plan page."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import streamlit as st

from errors import CapplanError
from planner.inputs.scenario import DEMAND_UNITS, BudgetSpec, DemandSpec, Scenario, WorkloadSpec
from planner.inputs.sla_targets import SLA_TARGETS
from ui import plan_state
from ui import resources as res
from ui.plan_sla_form import sla_bound
from ui.plan_what_if import multipliers_text
from ui.text import plain
from workflows import limits
from workflows.scenario_files import parse_multipliers, scenario_from_dict, scenario_from_yaml
from workflows.scenario_files import scenario_to_yaml as to_yaml


def draw(url: str, names: list[str], done: Callable[[str], None]) -> None:
    """The editor of one saved scenario (`names`: those this person may change); `done(message)`
    reports a save (and reruns)."""
    if not names:
        return
    st.subheader("Edit a scenario")
    name = st.selectbox("Scenario to edit", names, key="edit_name")
    scenario = res.guarded(lambda: res.load_scenario(url, name))
    if scenario is None:
        return
    with st.form(key=f"edit_form_{name}"):
        raw = _fields(scenario)
        saved = st.form_submit_button("Save changes")
    if saved:
        edited = res.guarded(lambda: _edited(scenario, raw))
        if edited is not None and _saved(url, edited, name):
            _forget(name)
            done(f"saved the changes to {name!r}")
    with st.expander("Details: every input as YAML"):
        current = to_yaml(scenario)
        # Keyed by the saved text too: after a save the box shows the new YAML, not the old.
        digest = hashlib.sha256(current.encode("utf-8")).hexdigest()[:12]
        text = st.text_area("Scenario YAML", current, height=320, key=f"edit_yaml_{digest}")
        if st.button("Save the YAML", key=f"edit_yaml_save_{name}"):
            parsed = res.guarded(lambda: scenario_from_yaml(text, f"the YAML of {name!r}"))
            if parsed is not None and _saved(url, parsed, name):
                _forget(name)
                done(f"saved scenario {parsed.name!r} from its YAML")
    if st.button("Open it on the Plan page", key=f"edit_open_{name}"):
        st.session_state[plan_state.KEPT] = scenario
        st.session_state.pop(plan_state.ALIVE, None)
        st.switch_page("ui/plan.py")


def _forget(name: str) -> None:
    """Drop the form's widget values so it shows the scenario as saved."""
    for key in [k for k in st.session_state if str(k).startswith(f"edit_{name}_")]:
        del st.session_state[key]


def _saved(url: str, scenario: Scenario, edited: str) -> bool:
    """Save it over the scenario being edited (a new name is a new scenario); False (the error
    shown) when the store refused."""
    replace = scenario.name == edited
    return res.guarded(lambda: res.save_scenario(url, scenario, replace=replace)) is not None


def _fields(scenario: Scenario) -> dict[str, object]:
    """The form's widgets, filled from the scenario; their values as a partial scenario."""
    key = scenario.name
    demand = scenario.demand
    left, right = st.columns(2)
    values: dict[str, object] = {
        "isl": left.number_input(
            "Prompt length, ISL (tokens)", min_value=1, value=scenario.workload.isl,
            max_value=int(limits.highest(WorkloadSpec, "isl")), key=f"edit_{key}_isl",
        ),
        "osl": right.number_input(
            "Output length, OSL (tokens)", min_value=1, value=scenario.workload.osl,
            max_value=int(limits.highest(WorkloadSpec, "osl")), key=f"edit_{key}_osl",
        ),
        "demand": left.number_input(
            f"Demand ({DEMAND_UNITS[demand.kind]})", min_value=0.0, value=float(demand.amount),
            max_value=limits.highest(DemandSpec, demand.kind), key=f"edit_{key}_demand",
        ),
        "budget": right.number_input(
            "Monthly budget ($/month; empty: none)", min_value=0.0, step=1000.0,
            value=scenario.budget.monthly_usd if scenario.budget else None,
            max_value=limits.highest(BudgetSpec, "monthly_usd"), key=f"edit_{key}_budget",
        ),
        "what_if": left.text_input(
            "What if demand grows (multiples of the demand)",
            multipliers_text(scenario.what_if.demand_multipliers), key=f"edit_{key}_what_if",
        ),
    }  # fmt: skip
    sla = scenario.sla.model_dump()
    targets: dict[str, float | None] = {}
    for metric in dict.fromkeys(target.metric for target in SLA_TARGETS):
        row = [target for target in SLA_TARGETS if target.metric == metric]
        for target, column in zip(row, st.columns(4), strict=False):
            targets[target.field] = column.number_input(
                f"{target.form_label}; empty: not checked",
                min_value=0.0,
                max_value=float(sla_bound(target.field).high),
                value=sla[target.field],
                key=f"edit_{key}_sla_{target.field}",
            )
    values["sla"] = targets
    return values


def _edited(scenario: Scenario, values: dict[str, object]) -> Scenario:
    """The scenario with the form's values (validated: a bad one is a CapplanError naming it)."""
    raw = scenario.model_dump(mode="json", exclude_none=True)
    raw["workload"] = {"isl": values["isl"], "osl": values["osl"]}
    raw["demand"][scenario.demand.kind] = values["demand"]
    raw["budget"] = None if values["budget"] is None else {"monthly_usd": values["budget"]}
    sla = values["sla"]
    assert isinstance(sla, dict)
    raw["sla"] = {field: value for field, value in sla.items() if value is not None}
    try:
        multiples = parse_multipliers(str(values["what_if"]))
    except ValueError as exc:
        raise CapplanError(f"What if demand grows: {exc}") from None
    raw["what_if"] = {"demand_multipliers": list(multiples)}
    return scenario_from_dict(raw, plain(f"the edited scenario {scenario.name!r}"))
