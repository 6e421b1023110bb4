"""The Plan page's what-if: the demand multiples box (sidebar) and, under the recommendation, the
plan at each multiple side by side (nodes, monthly and yearly cost, the budget, where the pick
changes)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from planner.analysis.what_if import WhatIfRow
from planner.inputs.what_if_spec import DEFAULT_DEMAND_MULTIPLIERS
from reports.what_if_view import what_if_sentence, what_if_table
from ui.text import plain
from workflows.scenario_files import parse_multipliers


def multipliers_text(values: Sequence[float]) -> str:
    """(1.0, 1.5, 2.0) -> '1, 1.5, 2' (what the box shows)."""
    return ", ".join(f"{value:g}" for value in values)


def inputs() -> dict[str, object]:
    """The box's multiples as the scenario's what_if; a bad entry is said under the box and the
    default multiples are planned meanwhile."""
    text = st.sidebar.text_input(
        "What if demand grows (multiples of the demand)",
        value=multipliers_text(DEFAULT_DEMAND_MULTIPLIERS),
        key="plan_what_if",
        help="Each multiple is planned side by side with the demand above: 1.5 and 2 answer "
        "'what if traffic grows by half, or doubles'. Up to 8 numbers, separated by commas.",
    )
    try:
        return {"demand_multipliers": list(parse_multipliers(text))}
    except ValueError as exc:
        st.sidebar.error(plain(f"What if demand grows: {exc}. Planning 1x, 1.5x and 2x."))
        return {}


def draw(rows: Sequence[WhatIfRow]) -> None:
    """The rows as a table, then one sentence on how the cost grows and whether the pick moves."""
    if len(rows) < 2:
        return
    st.subheader("What if demand grows")
    table = pd.DataFrame(what_if_table(rows))
    unit = table.columns[1]
    formats = {
        unit: st.column_config.NumberColumn(format="localized"),
        "Nodes": st.column_config.NumberColumn(format="%d"),
        "GPUs": st.column_config.NumberColumn(format="%d"),
        "$/month": st.column_config.NumberColumn(format="$%,.0f"),
        "$/year": st.column_config.NumberColumn(format="$%,.0f"),
        "Pick": st.column_config.TextColumn(width=320),
    }
    st.dataframe(table, hide_index=True, column_config=formats)
    if (note := what_if_sentence(rows)) is not None:
        st.caption(plain(note))
