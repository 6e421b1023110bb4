"""Scenarios page: the saved scenarios (rename, clone, delete), two or more side by side, and a
scenario's plan history (record a plan now, regenerate an old one and check it matches).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from planner.analysis.capacity import Plan
from team.roles import Action, Actor
from ui import resources as res
from ui import scenario_compare as compare
from ui import scenario_edit, team_actions
from ui.team import refused_line, role_caption
from ui.text import plain
from workflows.history import Regenerated
from workflows.store import PlanRecord, ScenarioRecord

EMPTY = (
    "No saved scenarios yet. On the Plan page, set the workload, SLA and demand, then press "
    "**Save scenario as ...**; saved scenarios appear here to rename, clone, compare and audit."
)

# Whole dollars for monthly costs, cents for per-token prices (the stored values stay exact).
MONEY_COLUMNS = {
    "scenario": st.column_config.TextColumn("Scenario"),
    "recommended": st.column_config.TextColumn("Recommended"),
    "nodes": st.column_config.NumberColumn("Nodes"),
    "usd_per_month": st.column_config.NumberColumn("Cost ($/month)", format="$%,.0f"),
    "usd_per_1m_output_tokens": st.column_config.NumberColumn(
        "Cost per 1M output tokens ($)", format="$%.2f"
    ),
    "binding_constraint": st.column_config.TextColumn("Limited by"),
}


def _flash(message: str) -> None:
    st.session_state["scenarios_flash"] = message


def _done(message: str) -> None:
    """A write went through: say so after the rerun."""
    _flash(message)
    st.rerun()


def _act(action: Callable[[], object], message: str) -> None:
    """Run a write; on success say so after the rerun, on failure the error stays in place."""
    if res.guarded(action) is not None:
        _flash(message)
        st.rerun()


def _manage(url: str, saved: list[ScenarioRecord], actor: Actor) -> None:
    st.subheader("Saved scenarios")
    st.dataframe([_owner_row(record) for record in saved], hide_index=True)
    if not actor.may(Action.SAVE_SCENARIOS):
        refused_line(actor, Action.SAVE_SCENARIOS)
        return
    st.subheader("Rename, clone or delete")
    names = [record.name for record in saved]
    name = st.selectbox("Scenario", names, key="manage_name")
    owner = next(record.created_by for record in saved if record.name == name)
    new_name = st.text_input("New name (for rename or clone)", key="manage_new_name")
    rename, clone, delete = st.columns(3)
    if clone.button("Clone", key="clone"):
        _act(lambda: res.clone_scenario(url, name, new_name), f"cloned {name!r} as {new_name!r}")
    if not actor.may_change(owner):
        st.caption(
            plain(
                f"{name!r} is {owner or 'nobody'}'s: only its owner or an admin may rename, "
                "replace or delete it; clone it to make your own."
            )
        )
        return
    if rename.button("Rename", key="rename"):
        _act(lambda: res.rename_scenario(url, name, new_name), f"renamed {name!r} to {new_name!r}")
    sure = delete.checkbox("Yes, delete it", key="delete_confirm")
    if delete.button("Delete", key="delete", disabled=not sure):
        _act(
            lambda: res.delete_scenario(url, name),
            f"deleted {name!r} (in the trash: undo on the Audit page; its recorded plans stay)",
        )


def _owner_row(record: ScenarioRecord) -> dict[str, object]:
    return {
        "scenario": record.name,
        "owner": record.created_by or "(saved before owners were kept)",
        "last changed by": record.updated_by or "",
        "last changed (UTC)": record.updated_at.strftime("%Y-%m-%d %H:%M"),
    }


def _compare(url: str, version: int, names: list[str]) -> None:
    st.subheader("Compare side by side")
    picked = st.multiselect("Scenarios to compare (two or more)", names, key="compare_names")
    if len(picked) < 2:
        st.info("Pick two or more scenarios to see their inputs and answers side by side.")
        return
    with st.spinner("Planning each scenario..."):
        plans = [_plan(url, version, name) for name in picked]
    ready = [plan for plan in plans if plan is not None]
    if len(ready) < 2:
        return
    diff = compare.inputs_diff_rows([plan.scenario for plan in ready])
    st.markdown("**Inputs that differ**")
    if diff:
        st.dataframe(diff, hide_index=True, column_config={"input": "Input"})
    else:
        st.caption("These scenarios have the same inputs.")
    st.markdown("**Answers**")
    st.dataframe(compare.results_rows(ready), hide_index=True, column_config=MONEY_COLUMNS)
    st.plotly_chart(compare.cost_chart(ready), key="compare_chart")


def _plan(url: str, version: int, name: str) -> Plan | None:
    scenario = res.guarded(lambda: res.load_scenario(url, name))
    if scenario is None:
        return None
    return res.guarded(lambda: res.plan_for(scenario, url, version))


def _history(url: str, version: int, names: list[str]) -> None:
    st.subheader("Plan history")
    name = st.selectbox("Scenario", names, key="history_name")
    if res.actor(url).may(Action.RECORD_PLANS) and st.button(
        "Record a plan run now", key="record_now"
    ):
        record = res.guarded(lambda: res.record_plan_now(url, name))
        if record is not None:
            _flash(f"recorded plan {record.record_id} of {name!r}")
            st.rerun()
    records = res.guarded(lambda: res.plan_history(url, version, name)) or []
    if not records:
        st.info(plain(f"No plan of {name!r} recorded yet: press 'Record a plan run now'."))
        return
    st.dataframe(compare.history_rows(records), hide_index=True, column_config=MONEY_COLUMNS)
    ids = [record.record_id for record in records]
    record_id = st.selectbox("Recorded plan", ids, key="history_record")
    _basis(url, next(r for r in records if r.record_id == record_id))
    if st.button("Regenerate", key="regenerate"):
        with st.spinner("Re-planning from the recorded scenario, runs and prices..."):
            result = res.guarded(lambda: res.regenerate_record(url, record_id))
        if result is not None:
            show = st.success if result.matches else st.warning
            show("Regenerated plan matches the record." if result.matches else "It differs:")
            st.dataframe(compare.regenerated_rows(result), hide_index=True)
            st.session_state["history_regenerated"] = result
    result = st.session_state.get("history_regenerated")
    if result is not None and result.record.record_id == record_id:
        _record_report(url, result)


def _basis(url: str, record: PlanRecord) -> None:
    """What the record rested on, as of then, and what has moved since."""
    basis = res.guarded(lambda: team_actions.basis_now(url, record))
    if basis is None:
        return
    then = record.created_at.strftime("%Y-%m-%d %H:%M UTC")
    rested = (
        f"Plan {record.record_id} rests on runs {', '.join(map(str, record.run_ids))} and "
        f"{len(record.prices_used)} prices (catalog {record.catalog_version}), as of {then}"
    )
    if not basis.hashed:
        st.caption(plain(f"{rested}; recorded before capplan kept their hashes."))
    elif basis.unchanged:
        st.caption(plain(f"{rested}: every one of them is as it was."))
    else:
        st.warning(plain(f"{rested}. Since then: " + "; ".join(basis.moved) + "."))


def _record_report(url: str, result: Regenerated) -> None:
    """The PDF report of a regenerated record, for audit (built on request: it takes seconds)."""
    if st.button("Build the PDF report of this record", key="record_report_build"):
        with st.spinner("Building the PDF report..."):
            content = res.guarded(lambda: res.record_report_bytes(url, result, "pdf"))
        if content is not None:
            st.download_button(
                f"Download the report of plan record {result.record.record_id}",
                content,
                f"{result.record.scenario_name}-record-{result.record.record_id}.pdf",
                "application/pdf",
                key="record_report_download",
            )


st.title("Scenarios")
store = res.open_store()
store_version = res.store_version(store)
me = res.actor(store)
role_caption(me)
if flash := st.session_state.pop("scenarios_flash", None):
    st.success(plain(flash))
records = res.saved_scenarios(store, store_version)
saved = [record.name for record in records]
if not saved:
    st.info(EMPTY)
    st.stop()
_manage(store, records, me)
scenario_edit.draw(store, [r.name for r in records if me.may_change(r.created_by)], _done)
_compare(store, store_version, saved)
_history(store, store_version, saved)
