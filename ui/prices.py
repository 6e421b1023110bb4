"""Prices page: edit the GPU price catalog ($/GPU-hour quotes), save it, or restore the shipped
one; rows the shipped catalog could not use are listed with the reason."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from hardware.gpus import load_gpu_specs
from hardware.prices import (
    MAX_GPUS_PER_INSTANCE,
    MAX_USD_PER_GPU_HOUR,
    catalog_version,
    skipped_rows,
)
from team.roles import Action
from ui import resources as res
from ui import tables
from ui.team import refused_line, role_caption
from ui.text import plain

COLUMNS = {
    "provider": st.column_config.TextColumn("provider", required=True),
    "sku": st.column_config.TextColumn("SKU"),
    "gpu": st.column_config.TextColumn("GPU", required=True),
    "pricing_type": st.column_config.TextColumn("pricing type", required=True),
    "usd_per_gpu_hour": st.column_config.NumberColumn(
        "$/GPU-hour",
        format="%.3f",
        min_value=0.001,
        max_value=MAX_USD_PER_GPU_HOUR,
        help=f"USD per GPU per hour; above 0, at most {MAX_USD_PER_GPU_HOUR:,.0f}",
    ),
    "as_of": st.column_config.TextColumn("as of"),
    "source": st.column_config.TextColumn("source"),
    "confidence": st.column_config.TextColumn("confidence"),
    "is_default": st.column_config.CheckboxColumn(
        "default",
        help="The price plans use for this GPU unless the scenario sets one; exactly one per GPU.",
    ),
    "gpus_per_instance": st.column_config.NumberColumn(
        "GPUs per instance", step=1, min_value=1, max_value=MAX_GPUS_PER_INSTANCE
    ),
    "usd_per_instance_hour": st.column_config.NumberColumn(
        "$/instance-hour",
        format="%.2f",
        min_value=0.001,
        max_value=MAX_USD_PER_GPU_HOUR * MAX_GPUS_PER_INSTANCE,
    ),
}

url = res.open_store()
version = res.store_version(url)
actor = res.actor(url)
role_caption(actor)
st.title("GPU prices")
if flash := st.session_state.pop("prices_flash", None):
    st.success(plain(flash))
catalog = res.price_catalog(url, version)
st.caption(
    f"Catalog version {catalog_version(catalog)} ({len(catalog)} prices). Plans record the "
    "version they used. Edit cells, add or delete rows, then save."
)
frame = pd.DataFrame(tables.price_rows(catalog), columns=list(tables.PRICE_COLUMNS))
if not actor.may(Action.CHANGE_PRICES):
    st.dataframe(frame, column_config=COLUMNS, hide_index=True)
    refused_line(actor, Action.CHANGE_PRICES)
    edited = None
else:  # Keyed by the store version so edits start afresh from the catalog just saved.
    edited = st.data_editor(
        frame,
        column_config=COLUMNS,
        num_rows="dynamic",
        hide_index=True,
        key=f"price_editor_{version}",
    )
save, restore = st.columns(2)
if edited is not None and save.button("Save catalog", type="primary"):
    rows = tables.records(edited)
    count = res.guarded(lambda: res.save_price_rows(url, rows))
    if count is not None:
        st.session_state["prices_flash"] = f"catalog saved: {count} prices"
        st.rerun()
if edited is not None and restore.button("Restore shipped catalog"):
    count = res.guarded(lambda: res.restore_shipped_prices(url))
    if count is not None:
        st.session_state["prices_flash"] = (
            f"shipped catalog restored: {count} prices (the catalog before is in the Audit "
            "page's trail, with an undo)"
        )
        st.rerun()
st.subheader("Shipped rows without a usable price")
st.caption("Quotes given only as a range (or blank) cannot price a plan; they are left out.")
st.dataframe(tables.skipped_price_rows(skipped_rows()), hide_index=True)
st.subheader("GPU specs")
st.caption("Datasheet numbers (dense tensor-core peaks) with their sources; read-only.")
st.dataframe(tables.gpu_spec_rows(load_gpu_specs()), hide_index=True)
