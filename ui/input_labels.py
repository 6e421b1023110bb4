"""Plain names for a scenario's inputs ('Peak requests per second (req/s)' for
`demand.peak_requests_per_s`), for pages that list inputs by name (the Scenarios compare)."""

from __future__ import annotations

from pydantic import BaseModel

from planner.inputs.scenario import Scenario
from planner.inputs.sla_targets import SLA_TARGETS
from reports.names import gpu_name

LABELS = {
    "model": "Model",
    "precision": "Precision",
    "workload.isl": "Prompt length, ISL (tokens)",
    "workload.osl": "Output length, OSL (tokens)",
    "demand.peak_requests_per_s": "Peak requests per second (req/s)",
    "demand.peak_concurrent_streams": "Peak concurrent streams",
    "demand.monthly_output_tokens": "Output tokens per month",
    "demand.peak_to_average": "Peak-to-average ratio (x)",
    "demand.hourly_profile": "Hourly demand profile (24 weights)",
    "budget.monthly_usd": "Monthly budget ($/month)",
    "candidates.engines": "Engines",
    "candidates.gpus": "GPUs",
    "candidates.tp": "Tensor-parallel sizes (TP)",
    "options.gpus_per_node": "GPUs per node",
    "options.target_utilization": "Utilisation ceiling (share of measured capacity)",
    "options.redundancy_replicas": "Spare replicas (N+k)",
    "options.model_updates_per_month": "Model updates per month",
    "options.hours_per_month": "Billed hours per month",
    "options.max_streams_per_replica": "Max streams per replica",
    "options.sizing_confidence": "Sizing confidence",
    "options.pricing_mode": "Pricing (on-demand, reserved or a mix)",
    "options.scaling": "Fleet (static or autoscaled)",
    "what_if.demand_multipliers": "What if demand grows (multiples)",
    **{f"sla.{target.field}": target.form_label for target in SLA_TARGETS},
}


def input_label(key: str) -> str:
    """The plain name of a dotted scenario input; prices name their GPU; anything else its
    field's own description, else its words."""
    if key in LABELS:
        return LABELS[key]
    parts = key.split(".")
    if parts[0] in ("pricing", "price_quotes") and len(parts) > 1:
        what = "Price" if parts[0] == "pricing" else "Price quote"
        kind = f", {' '.join(parts[2:]).replace('_', ' ')}" if len(parts) > 2 else ""
        return f"{what} of {gpu_name(parts[1])} ($/GPU-hour{kind})"
    described = _description(Scenario, parts)
    return described or key.replace("_", " ").replace(".", ": ")


def _description(model: type[BaseModel], parts: list[str]) -> str | None:
    field = model.model_fields.get(parts[0])
    if field is None:
        return None
    if len(parts) == 1:
        text = field.description
        return text.split(";")[0].strip() if text else None
    inner = field.annotation
    if isinstance(inner, type) and issubclass(inner, BaseModel):
        return _description(inner, parts[1:])
    return None
