"""Models page: every model capplan knows (its shipped config.json files and the ones this store
added), with the facts the physics uses; add a model from a local config.json, never a download."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from planner.physics.config_layers import ConfigError
from team.roles import Action
from ui import resources as res
from ui import upload_budget
from ui.team import refused_line, role_caption
from ui.text import plain
from workflows.models import (
    add_config,
    catalog_entries,
    is_model_config_name,
    remove_model,
    sync_catalog,
)

st.title("Models")
st.caption(
    "What capplan knows about each model, read from its Hugging Face config.json: size, the "
    "parameters one token uses (mixture-of-experts models route each token to a few experts), "
    "the attention kind and the KV cache a token of context takes. The physics checks, the "
    "serving model and projections use these numbers; a model without a config gets none and "
    "says so."
)
url = res.open_store()
engine = res.store_engine(url)
res.guarded(lambda: sync_catalog(engine))


def _rows() -> pd.DataFrame:
    rows = []
    for e in catalog_entries():
        f = e.facts
        rows.append(
            {
                "model": e.model,
                "from": e.origin,
                "total (B params)": round(f.total_params / 1e9, 1) if f else None,
                "active per token (B)": round(f.active_params / 1e9, 1) if f else None,
                "experts (used of routed)": f"{f.top_k} of {f.experts}" if f and f.is_moe else "",
                "attention": f.attention if f else "",
                "KV cache (KB per token, 16-bit)": (
                    round(f.kv_bytes_per_token(2.0) / 1024, 1) if f else None
                ),
                "checkpoint": f.checkpoint if f else "",
                "notes": "; ".join(f.notes) if f else (e.problem or ""),
                "config": e.source,
            }
        )
    return pd.DataFrame(rows)


st.dataframe(_rows(), hide_index=True, key="models_table")


def _add_section() -> None:
    st.subheader("Add a model")
    st.caption(
        "Upload the model's config.json from its folder (or from the hub's Files tab, saved "
        "locally). The name defaults to the config's _name_or_path, else the file name."
    )
    with st.form("add_model", clear_on_submit=True):
        picked = st.file_uploader(
            "config.json file(s)", type=["json"], accept_multiple_files=True, key="model_files"
        )
        folder = st.file_uploader(
            "...or a folder of them",
            type=["json"],
            accept_multiple_files="directory",
            key="model_folder",
            help="Its config.json and <org>--<model>_config.json files are read; nothing else.",
        )
        name = st.text_input(
            "Model name (one file only; optional)",
            key="model_name",
            help="The name runs and scenarios use for it, e.g. acme/Llama-3.1-70B-Support.",
        )
        submitted = st.form_submit_button("Add")
    files = [*(picked or []), *(f for f in folder or [] if is_model_config_name(f.name))]
    if submitted:
        if not files:
            st.warning("Choose a config.json first.")
        for upload in upload_budget.within_budget(files):
            try:
                config = json.loads(upload.getvalue().decode("utf-8"))
                if not isinstance(config, dict):
                    raise ConfigError("expected a JSON object (a config.json)", file=upload.name)
                chosen = name.strip() if name.strip() and len(files) == 1 else None
                added = add_config(engine, config, upload.name, chosen, actor=res.actor(url))
            except (ValueError, UnicodeDecodeError) as error:
                st.error(plain(f"{upload.name}: not JSON: {error}"))
                continue
            except ConfigError as error:
                st.error(plain(str(error)))
                continue
            assert added.facts is not None
            st.success(plain(f"Added {added.name}: {added.facts.summary()}"))
            res.bump_version(url)


def _remove_section() -> None:
    added_names = [e.model for e in catalog_entries() if e.origin == "added"]
    if added_names:
        st.subheader("Remove an added model")
        gone = st.selectbox("Added model", added_names, key="model_remove_choice")
        if st.button("Remove", key="model_remove") and res.guarded(
            lambda: remove_model(engine, gone, actor=res.actor(url))
        ):
            st.success(plain(f"Removed {gone}."))
            res.bump_version(url)
            st.rerun()


actor = res.actor(url)
role_caption(actor)
if actor.may(Action.ADD_MODELS):
    _add_section()
else:
    refused_line(actor, Action.ADD_MODELS)
if actor.may(Action.REMOVE_MODELS):
    _remove_section()
