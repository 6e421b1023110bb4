"""The Runs page's upload section: the files, the facts they lack, the format, and an Import
button; then one row per file stored or refused, with each long message in full.

No st.form: in a form, Enter in any text field submits it, so a half-filled import was stored and
the complete one then refused as already stored (issue 32 item 2). Outside a form, Enter only
commits the field (the page reruns) and nothing is imported until the button is clicked."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from measurements.importers import IMPORTERS
from ui import resources as res
from ui import upload_budget, upload_form
from ui.text import plain

AUTO = "auto"
FORMAT_HELP = (
    "auto: capplan recognises the tool from the file. Choose a format when auto does not "
    "recognise a file you know is one of these: the import then says what does not match."
)
# Widths that fit the grid in the wide layout at 1440 px with the sidebar open (~1050 px).
OUTCOME_COLUMNS = {
    "file": st.column_config.TextColumn("file", width=230),
    "detected": st.column_config.TextColumn("detected", width=170),
    "status": st.column_config.TextColumn("status", width=80),
    "run_id": st.column_config.NumberColumn("run_id", width=60),
    "levels": st.column_config.NumberColumn("levels", width=55),
    "message": st.column_config.TextColumn("message", width=430),
}
# About what the message column shows before it cuts a line; a longer message is also written out.
MESSAGE_FITS_CHARS = 60


def section(url: str) -> None:
    """Draw the upload fields; import the chosen files when (and only when) Import is clicked."""
    st.subheader("Upload results")
    files = st.file_uploader(
        "Result files (or a .zip of a results folder): vLLM bench serve, trtllm-bench, "
        "AIPerf, GenAI-Perf, guidellm, llmperf, inference-perf, vLLM nightly table, "
        "InferenceX, curve CSV, capplan RunFile",
        accept_multiple_files=True,
        key="upload_files",
    )
    folder = st.file_uploader(
        "...or a results folder, as the tools leave it (one run per tool run: warm-ups, "
        "other exports of the run and logs are left out)",
        accept_multiple_files="directory",
        key="upload_folder",
    )
    facts = upload_form.deployment_facts()
    provenance = upload_form.provenance()
    format_id = st.selectbox(
        upload_form.FORMAT_LABEL, (AUTO, *IMPORTERS), key="upload_format", help=FORMAT_HELP
    )
    store_anyway = upload_form.store_unplannable()
    if st.button("Import", type="primary", key="upload_import"):
        chosen = [*(files or []), *(folder or [])]
        options = upload_form.UploadChoices(facts, provenance, format_id or AUTO, store_anyway)
        _import(url, chosen, options)
    _outcomes()


def _import(url: str, files: Sequence[UploadedFile], choices: upload_form.UploadChoices) -> None:
    if not files:
        st.warning("Choose one or more files first.")
        return
    overrides = res.guarded(lambda: res.deployment_overrides(choices.facts))
    if overrides is None:
        return
    # Files over the session's budget or the upload limits are refused in place, each naming
    # the limit.
    kept = upload_budget.within_budget(files)
    pairs = upload_form.within_limits([(f.name, f.getvalue()) for f in kept])
    outcomes = (
        res.import_uploads(
            url,
            pairs,
            overrides,
            choices.provenance,
            refuse=not choices.store_unplannable,
            format_id=choices.format_id,
        )
        if pairs
        else []
    )
    st.session_state["upload_outcomes"] = upload_form.upload_rows(outcomes)
    st.session_state["upload_unplannable"] = upload_form.unplannable_notes(outcomes)
    if any(outcome.created for outcome in outcomes):
        # The new runs head the list (newest first): show its first page and inspect the newest.
        st.session_state["runs_page"] = 1
        st.session_state.pop("inspect_run", None)


def _outcomes() -> None:
    for note in st.session_state.get("upload_unplannable", ()):
        st.warning(plain(note))
    rows = st.session_state.get("upload_outcomes")
    if not rows:
        return
    st.dataframe(rows, hide_index=True, column_config=OUTCOME_COLUMNS)
    for row in rows:
        message, file = str(row["message"] or ""), str(row["file"])
        if len(message) > MESSAGE_FITS_CHARS:
            named = message if message.startswith(f"{file}: ") else f"{file}: {message}"
            st.caption(plain(f"{row['status']}: {named}"))
