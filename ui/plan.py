"""Plan page: scenario inputs (sidebar) -> recommendation, options table, warnings, downloads;
scenarios saved to and loaded from the store.
"""

from __future__ import annotations

import json

import streamlit as st

from planner.capacity import Plan
from planner.export import options_table, plan_to_csv, plan_to_dict, plan_to_xlsx
from planner.scenario import Scenario, scenario_from_dict, scenario_to_yaml
from ui import plan_form
from ui import resources as res

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _load_saved(url: str, name: str) -> None:
    """Button callback: fill the widgets from a saved scenario (runs before the widgets exist)."""
    scenario = res.guarded(lambda: res.load_scenario(url, name))
    if scenario is not None:
        plan_form.apply_scenario(scenario)
        st.session_state["plan_flash"] = f"loaded scenario {name!r}"


def _saved_scenarios(url: str, version: int) -> None:
    saved = [record.name for record in res.saved_scenarios(url, version)]
    if not saved:
        return
    left, right = st.columns([3, 1])
    name = left.selectbox("Saved scenarios", saved, key="plan_saved")
    right.button("Load", on_click=_load_saved, args=(url, name), key="plan_load")


def _planned(url: str, version: int, scenario: Scenario) -> Plan | None:
    return res.guarded(lambda: res.plan_for(scenario, url, version))


def _recommendation(plan: Plan) -> None:
    rec = plan.recommendation
    if rec.choice is None:
        st.error(rec.reason)
        return
    st.success(rec.reason)
    cost, nodes, margin = st.columns(3)
    cost.metric("Monthly cost ($/month)", f"${rec.choice.total_monthly_cost_usd or 0:,.0f}")
    nodes.metric(
        "Nodes (8-GPU)" if plan.scenario.options.gpus_per_node == 8 else "Nodes",
        f"{rec.choice.nodes}",
        f"{rec.choice.replicas} replicas",
        delta_color="off",
    )
    if rec.margin_usd is not None and rec.runner_up is not None:
        margin.metric(
            "Margin over runner-up ($/month)",
            f"${rec.margin_usd:,.0f}",
            f"{rec.margin_pct or 0:.1f}% vs {rec.runner_up.title()}",
            delta_color="off",
        )


def _scenario_file(url: str) -> None:
    """Upload a scenario YAML (the file `capplan plan` reads) to fill the inputs."""
    upload = st.file_uploader("Open a scenario file (YAML)", type=["yaml", "yml"], key="plan_yaml")
    if upload is None or st.session_state.get("plan_yaml_done") == upload.file_id:
        return
    st.session_state["plan_yaml_done"] = upload.file_id
    scenario = res.guarded(lambda: res.scenario_from_upload(upload.name, upload.getvalue()))
    if scenario is not None:
        plan_form.apply_scenario(scenario)
        st.session_state["plan_flash"] = f"opened scenario file {upload.name!r}"
        st.rerun()


def _downloads(plan: Plan, scenario: Scenario) -> None:
    stem = scenario.name.replace(" ", "_")
    yaml_file, xlsx, csv, document = st.columns(4)
    yaml_file.download_button(
        "Scenario as YAML", scenario_to_yaml(scenario), f"{stem}.yaml", "application/yaml"
    )
    xlsx.download_button("Plan as XLSX", plan_to_xlsx(plan), f"{stem}.xlsx", XLSX)
    csv.download_button("Plan as CSV", plan_to_csv(plan), f"{stem}.csv", "text/csv")
    document.download_button(
        "Plan as JSON",
        json.dumps(plan_to_dict(plan), indent=2, default=str),
        f"{stem}.json",
        "application/json",
    )


def _save(url: str, scenario: Scenario) -> None:
    if st.button(f"Save scenario as {scenario.name!r}", key="plan_save"):
        record = res.guarded(lambda: res.save_scenario(url, scenario))
        if record is not None:
            st.success(f"saved scenario {record.name!r}")


url = res.open_store()
version = res.store_version(url)
st.title("Plan capacity")
if flash := st.session_state.pop("plan_flash", None):
    st.info(flash)
_saved_scenarios(url, version)
_scenario_file(url)
raw = plan_form.draw_inputs(res.load_curves(url, version), res.price_catalog(url, version))
scenario = res.guarded(lambda: scenario_from_dict(raw, "plan inputs"))
if scenario is None:
    st.stop()
plan = _planned(url, version, scenario)
if plan is None:
    st.stop()
_recommendation(plan)
st.subheader("Options")
st.caption(f"Sorted by cost; price catalog version {plan.catalog_version}.")
st.dataframe(options_table(plan), hide_index=True)
for warning in plan.warnings:
    st.warning(warning)
_downloads(plan, scenario)
_save(url, scenario)
