"""Runs page: upload result files (a planner's), browse the stored runs a page at a time (filters,
search), inspect one, delete it (an admin's; to the trash, with an undo)."""

from __future__ import annotations

import streamlit as st

from measurements.run_file import Origin
from team.roles import Action, Actor
from ui import resources as res
from ui import tables, team_actions, upload
from ui.team import refused_line, role_caption
from ui.text import plain
from workflows.curves import NOT_STATED
from workflows.store import RunFilter, RunSummary

PAGE_SIZES = (100, 250, 1000)


def _filters(url: str) -> RunFilter:
    choices = res.run_choices(url, res.store_version(url))
    options = {
        "engine": list(choices.engines),
        "gpu": [gpu or NOT_STATED for gpu in choices.gpus],
        "model": list(choices.models),
        "provenance": list(choices.provenances),
    }
    columns = st.columns(5)
    wanted = {
        name: column.multiselect(f"Filter: {name}", values, key=f"filter_{name}")
        for (name, values), column in zip(options.items(), columns, strict=False)
    }
    text = columns[4].text_input("Search label, file, notes", key="filter_text")
    return RunFilter(
        engines=tuple(wanted["engine"]),
        gpus=tuple(None if gpu == NOT_STATED else gpu for gpu in wanted["gpu"]),
        models=tuple(wanted["model"]),
        provenances=tuple(wanted["provenance"]),
        text=text,
    )


def _runs_table(url: str) -> list[RunSummary]:
    header, refresh = st.columns([5, 1])
    header.subheader("Stored runs")
    if refresh.button("Reload from store", help="Pick up runs imported from the CLI meanwhile."):
        res.bump_version(url)
    filters = _filters(url)
    size_column, page_column, count_column = st.columns([1, 1, 3])
    size = size_column.selectbox("Runs per page", PAGE_SIZES, index=1, key="runs_page_size")
    total = res.run_page(url, res.store_version(url), filters, 1, 0).total
    pages = max(1, -(-total // size))
    if st.session_state.get("runs_page", 1) > pages:  # the filters narrowed the list
        st.session_state["runs_page"] = pages
    page = int(page_column.number_input("Page", 1, pages, 1, key="runs_page"))
    shown = res.run_page(url, res.store_version(url), filters, size, (page - 1) * size)
    first = (page - 1) * size + 1
    count_column.caption(
        f"runs {first}-{first + len(shown.summaries) - 1} of {shown.total}, newest first"
        if shown.summaries
        else "no stored run matches these filters"
    )
    st.dataframe(tables.run_rows(shown.summaries), hide_index=True)
    return list(shown.summaries)


def _inspect(url: str, shown: list[RunSummary], actor: Actor) -> None:
    labels = {s.run_id: f"run {s.run_id} · {s.engine} · {s.model} · {s.gpu or '?'}" for s in shown}
    run_id = st.selectbox(
        "Inspect run", list(labels), format_func=labels.__getitem__, key="inspect_run"
    )
    if run_id is None:
        return
    stored = res.guarded(lambda: res.stored_run(url, res.store_version(url), run_id))
    if stored is None:
        return
    facts, levels = st.columns([1, 3])
    facts.dataframe(tables.deployment_rows(stored.run), hide_index=True)
    levels.markdown("**Levels: values the source reported**")
    levels.dataframe(tables.level_rows(stored.run, Origin.REPORTED), hide_index=True)
    for origin, caption in (
        (Origin.RECOMPUTED, "recomputed by capplan from per-request samples"),
        (Origin.DERIVED, "derived by capplan from other reported values"),
    ):
        rows = tables.level_rows(stored.run, origin)
        if rows:
            levels.markdown(f"**Levels: {caption}**")
            levels.dataframe(rows, hide_index=True)
    if not actor.may(Action.DELETE_RUNS):
        refused_line(actor, Action.DELETE_RUNS)
        return
    confirm = st.checkbox(
        f"Yes, delete run {run_id} (to the trash: undo on this page or the Audit page)",
        key=f"confirm_delete_{run_id}",
    )
    clicked = st.button(f"Delete run {run_id}", disabled=not confirm, type="primary")
    if not clicked:
        return
    deleted = res.guarded(lambda: res.delete_run(url, run_id))
    if deleted is False:
        st.warning(f"run {run_id} was not in the store any more (deleted elsewhere?)")
    elif deleted:
        st.session_state["runs_flash"] = f"run {run_id} deleted (in the trash)"
        st.session_state["runs_undo"] = run_id
        st.rerun()


def _undo(url: str) -> None:
    """The undo of the delete just made, until the page is left."""
    run_id = st.session_state.get("runs_undo")
    if run_id is None or not st.button(f"Undo: bring run {run_id} back", key="runs_undo_button"):
        return
    if res.guarded(lambda: team_actions.undo_delete(url, "run", str(run_id))) is not None:
        st.session_state.pop("runs_undo", None)
        st.session_state["runs_flash"] = f"run {run_id} is back"
        st.rerun()


url = res.open_store()
actor = res.actor(url)
role_caption(actor)
st.title("Runs")
if flash := st.session_state.pop("runs_flash", None):
    st.success(plain(flash))
_undo(url)
if actor.may(Action.IMPORT_RUNS):
    upload.section(url)
else:
    refused_line(actor, Action.IMPORT_RUNS)
_inspect(url, _runs_table(url), actor)
