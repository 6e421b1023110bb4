"""The Curves page's "Compare the clients" section: one deployment and workload measured by
several tools on one chart, their numbers side by side, and what each tool means by them."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from planner.fitting.fit import CurveFit
from reports.client_compare import HEADINGS, ClientComparison, compare_clients
from reports.tool_definitions import WHY_THEY_DIFFER, definitions_for
from ui import charts
from ui.text import plain


def show_comparisons(fits: Sequence[CurveFit]) -> None:
    """Draw every comparison among the shown curves (nothing when one tool measured them all)."""
    comparisons = compare_clients([fit.curve for fit in fits])
    if not comparisons:
        return
    st.subheader("Compare the clients")
    st.caption(WHY_THEY_DIFFER)
    for comparison in comparisons:
        unshared = comparison.no_shared_load_text()
        if unshared:
            st.info(plain(unshared))
        st.plotly_chart(charts.client_comparison_figure(comparison))
        st.dataframe(comparison_rows(comparison), hide_index=True)
        st.markdown("\n".join(definition_lines(comparison)))


def comparison_rows(comparison: ClientComparison) -> list[dict[str, object]]:
    """One row per tool and load (a concurrency or a request rate): each value (2 decimals)
    beside its ratio to the reference tool at the same load (3 decimals)."""
    rows: list[dict[str, object]] = []
    for row in comparison.rows():
        rate = row.kind != "concurrency"
        cells: dict[str, object] = {
            "concurrency": None if rate else row.concurrency,
            "request rate (req/s)": row.concurrency if rate else None,
            "tool": row.client or row.tool,
        }
        for column, value, ratio in zip(HEADINGS, row.values, row.ratios, strict=True):
            cells[column] = None if value is None else round(value, 2)
            cells[f"{column} / {comparison.reference}"] = None if ratio is None else round(ratio, 3)
        rows.append(cells)
    return rows


def definition_lines(comparison: ClientComparison) -> list[str]:
    """A markdown bullet per tool: how it defines output tok/s, duration, TTFT, TPOT and tokens."""
    lines = []
    for trace in comparison.traces:
        d = definitions_for(trace.tool)
        runs = trace.runs_text("at {}")
        text = (
            f"({runs}): output tok/s is {d.output_tok_s}; duration: {d.duration}. "
            f"TTFT: {d.ttft}. TPOT: {d.tpot}. Chunk gap: {d.chunk_gap}. Output tokens: {d.tokens}."
        )
        # The client names come from the files; the definitions are capplan's own Markdown.
        lines.append(f"- **{plain(trace.client or d.name)}** {text}")
    return lines
