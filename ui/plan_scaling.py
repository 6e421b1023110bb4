"""The Plan page's autoscaled-against-static comparison (when the demand has a daily shape): the
two fleets' cost and GPU-hours, and the risk an autoscaler that reacts to load takes."""

from __future__ import annotations

import streamlit as st

from planner.analysis.autoscale import ScalingView
from reports.scaling_view import scaling_lines
from ui.text import plain


def draw(view: ScalingView | None) -> None:
    """Two metrics and the sentences (nothing without a daily shape)."""
    if view is None:
        return
    st.subheader("Autoscaled against static")
    auto, static = view.autoscaled, view.static
    left, middle, right = st.columns(3)
    left.metric(
        "Autoscaled ($/month)",
        f"${auto.total_monthly_cost_usd:,.0f}",
        f"{min(auto.hourly_replicas)}-{max(auto.hourly_replicas)} replicas over the day",
        delta_color="off",
        delta_arrow="off",
    )
    middle.metric(
        "Static for the peak ($/month)",
        f"${static.total_monthly_cost_usd:,.0f}",
        f"{static.replicas} replicas all day",
        delta_color="off",
        delta_arrow="off",
    )
    right.metric(
        "Requests in a reacting autoscaler's lag",
        f"{view.late_share:.1%}",
        f"up to {view.worst_load:.2f}x the sized load",
        delta_color="inverse" if view.over_capacity else "off",
        delta_arrow="off",
    )
    st.caption("\n".join(f"- {plain(line)}" for line in scaling_lines(view)))
