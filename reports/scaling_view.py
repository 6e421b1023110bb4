"""Autoscaled against static (planner.analysis.autoscale) for people: the JSON document's
`scaling` section and the sentences the terminal, the page and the report say."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reports.names import option_name

if TYPE_CHECKING:
    from planner.analysis.autoscale import ScalingView

__all__ = ["scaling_lines", "scaling_to_dict"]


def scaling_to_dict(view: ScalingView) -> dict[str, object]:
    """The comparison as plain JSON values."""
    auto, static = view.autoscaled, view.static
    return {
        "pick": option_name(auto.key),
        "autoscaled": {
            "hourly_replicas": list(auto.hourly_replicas),
            "gpu_hours_per_month": auto.gpu_hours_per_month,
            "monthly_cost_usd": auto.total_monthly_cost_usd,
        },
        "static": {
            "replicas": static.replicas,
            "gpu_hours_per_month": static.gpu_hours_per_month,
            "monthly_cost_usd": static.total_monthly_cost_usd,
        },
        "saving_usd_per_month": view.saving_usd,
        "scale_up_lead_s": view.lead_s,
        "scale_up_lead": view.lead_text,
        "floor_replicas": min(auto.hourly_replicas),
        "reacting_autoscaler": {
            "late_request_share": view.late_share,
            "worst_load_vs_sized": view.worst_load,
            "past_capacity": view.over_capacity,
        },
        "text": scaling_lines(view),
    }


def scaling_lines(view: ScalingView) -> list[str]:
    """The comparison in sentences: the two fleets and their cost, then the risk."""
    auto, static = view.autoscaled, view.static
    lines = [
        f"autoscaled: {min(auto.hourly_replicas)}-{max(auto.hourly_replicas)} replicas over the "
        f"day, {auto.gpu_hours_per_month:,.0f} GPU-hours and ${auto.total_monthly_cost_usd:,.0f} "
        f"a month; static for the peak: {static.replicas} replicas, "
        f"{static.gpu_hours_per_month:,.0f} GPU-hours and ${static.total_monthly_cost_usd:,.0f}: "
        f"autoscaling saves ${view.saving_usd:,.0f} a month",
        f"scale-up lead time: {view.lead_text}" if view.lead_text else "",
        view.risk_text(),
    ]
    if view.shape_note:
        lines.append(view.shape_note)
    return [line for line in lines if line]
