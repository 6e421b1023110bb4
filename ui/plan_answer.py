"""The Plan page's answer: the recommendation in two sentences plus bullets, the options table a
person decides on (every other column behind "details"), and the plan's warnings grouped."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import streamlit as st

from planner.analysis.capacity import Plan
from planner.analysis.uncertainty import PlanRanges
from planner.analysis.what_if import MONTHS_PER_YEAR
from reports.brief import recommendation_brief, tie_sentence, unstable_sentence
from reports.export import options_table
from reports.flag_text import group_warnings
from reports.lead_table import options_lead_table
from reports.names import option_name
from reports.price_rows import mix_flags, price_rows
from ui.text import plain

# Widths in pixels that fit the page at 1440 px beside the sidebar, every column in view.
LEAD_FORMAT = {
    "Option": st.column_config.TextColumn(width=290),
    "Meets SLA": st.column_config.TextColumn(width=130),
    "Nodes": st.column_config.NumberColumn(width=55),
    "GPUs": st.column_config.NumberColumn(width=55),
    "Cost ($/month)": st.column_config.NumberColumn(format="$%,.0f", width=105),
    "Cost per 1M output tokens ($)": st.column_config.NumberColumn(
        "$/1M output tokens", format="$%.2f", width=120
    ),
    "Limited by": st.column_config.TextColumn(width=210),
}


def whole_counts(frame: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """Count columns as whole numbers with gaps (pandas would make '3' with a gap '3.00')."""
    for column in columns:
        if column in frame.columns:
            frame[column] = frame[column].astype("Int64")
    return frame


def md(text: str) -> str:
    """Text for st.markdown and the alert boxes, shown as written (ui/text.py)."""
    return plain(text)


def recommendation(plan: Plan) -> None:
    """What to run (success box) or that nothing is recommended (warning), with its bullets and
    the money in three figures."""
    brief = recommendation_brief(plan)
    box = st.success if brief.sound else st.warning
    box(md(brief.headline))
    if brief.bullets:
        st.markdown("\n".join(f"- {md(line)}" for line in brief.bullets))
    rec = plan.recommendation
    if rec.choice is None:
        return
    cost, yearly, nodes, margin = st.columns(4)
    choice = rec.choice
    cost.metric(
        "Monthly cost ($)",
        f"${choice.total_monthly_cost_usd:,.0f}",
        f"expected ${choice.expected_monthly_cost_usd:,.0f}",
        delta_color="off",
        help=f"The fleet meets the SLA at the planned demand with {choice.confidence:.0%} "
        "probability given the fits' held-out error (sizing confidence); the expected cost is "
        "the median fleet over the same error samples.",
    )
    yearly.metric(
        "Yearly cost ($)",
        f"${choice.total_monthly_cost_usd * MONTHS_PER_YEAR:,.0f}",
        f"expected ${choice.expected_monthly_cost_usd * MONTHS_PER_YEAR:,.0f}",
        delta_color="off",
        help=f"Twelve months of the monthly cost (the fleet sized to meet the SLA with "
        f"{choice.confidence:.0%} probability) at today's prices and demand.",
    )
    nodes.metric(
        f"Nodes ({rec.choice.node_words}s)",
        f"{rec.choice.nodes:d}",
        f"{rec.choice.gpus:d} GPUs, {rec.choice.replicas:d} replicas",
        delta_color="off",
    )
    if rec.margin_usd is not None and rec.runner_up is not None:
        overridden = rec.overridden_cheapest is not None
        label = "Premium over the cheapest" if overridden else "Margin over the runner-up"
        margin.metric(
            f"{label} ($/month)",
            f"${rec.margin_usd:,.0f}",
            f"{rec.margin_pct or 0:.1f}% vs {option_name(rec.runner_up.key)}",
            delta_color="off",
        )


def stability_note(plan: Plan, ranges: PlanRanges | None) -> str | None:
    """A tie the resampling splits, or a pick that changes often, in one sentence (else None)."""
    return unstable_sentence(plan, ranges) or tie_sentence(plan, ranges)


def options(plan: Plan) -> None:
    """The lead table (seven columns), then every column behind a 'details' expander."""
    lead = whole_counts(pd.DataFrame(options_lead_table(plan)), ("Nodes", "GPUs"))
    st.dataframe(lead, hide_index=True, column_config=LEAD_FORMAT)
    with st.expander("Details: every column (as in the CSV, XLSX and JSON exports)"):
        full = pd.DataFrame(options_table(plan))
        counts = ("tp", "replicas", "gpus_per_replica", "gpus", "replicas_per_node", "nodes")
        st.dataframe(whole_counts(full, counts), hide_index=True)


def warnings(plan: Plan) -> None:
    """The plan's warnings, repeats merged, in one box."""
    lines = group_warnings(plan.warnings)
    if len(lines) == 1:
        st.warning(md(lines[0]))
    elif lines:
        st.warning("\n".join(f"- {md(line)}" for line in lines))


def price_notes(plan: Plan) -> None:
    """Quotes older than six months, undated, or of different kinds and sizes side by side: said
    on the page, not only in the reports (the Prices page holds the dated catalog)."""
    rows = price_rows(plan, datetime.now(UTC))
    lines = [*(flag for row in rows for flag in row.flags), *mix_flags(rows)]
    if lines:
        st.warning(
            "\n".join(f"- {md(line)}" for line in lines)
            + "\n\nCheck these prices on the Prices page, or type current ones under "
            "Candidates and prices.",
            icon=":material/schedule:",
        )
