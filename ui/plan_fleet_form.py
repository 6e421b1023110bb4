"""The Plan page's fleet, money and factor inputs (sidebar): daily traffic shape, static fleet or
autoscaling, on-demand / reserved / mixed pricing, and the seed article's qualitative factors.
Widgets -> raw scenario parts, and a saved Scenario -> widget state."""

from __future__ import annotations

import streamlit as st

from planner.inputs.hourly import HOURS_PER_DAY
from planner.inputs.scenario import OptionsSpec, Scenario
from ui.text import plain
from workflows.limits import highest

FLAT = "flat (peak-to-average ratio only)"
# A working-day shape: quiet nights, a morning ramp, a busy afternoon (relative weights).
WORKDAY = (
    *(0.15, 0.1, 0.1, 0.1, 0.1, 0.15, 0.3, 0.55, 0.8, 0.95, 1.0, 1.0),
    *(0.95, 1.0, 1.0, 0.95, 0.9, 0.8, 0.65, 0.5, 0.4, 0.3, 0.25, 0.2),
)
CUSTOM = "custom (24 hourly weights)"
PROFILES = (FLAT, "working day", CUSTOM)
SCALING = {"static": "static fleet sized for the peak", "autoscale": "autoscale with demand"}
PRICING = {
    "on_demand": "on-demand",
    "reserved": "reserved (1-year or longer)",
    "mix": "mix: reserved baseline + on-demand peaks",
}
FACTORS = (
    ("multi_lora", "Many LoRA adapters on one base model"),
    ("structured_output", "Structured output (JSON schema, grammars)"),
    ("weekly_model_changes", "The model or its code changes weekly"),
    ("consumer_gpus", "Must also run on consumer GPUs (RTX 4090/5090)"),
)
FACTOR_HELP = (
    "From the seed article: vLLM suits multi-LoRA, weekly model changes and consumer cards; "
    "TensorRT-LLM suits a fixed model at scale. A factor never overrides silently: the "
    "recommendation says what it changed or what it costs."
)


def profile() -> tuple[float, ...] | None:
    """The daily traffic shape: None (flat), a working day, or 24 weights the user types."""
    bar = st.sidebar
    shape = bar.selectbox(
        "Daily traffic shape",
        PROFILES,
        key="plan_profile_shape",
        help="How demand moves over 24 hours; the busiest hour gets the peak demand. With a "
        "shape, the peak-to-average ratio follows from it.",
    )
    if shape == FLAT:
        return None
    if shape != CUSTOM:
        return WORKDAY
    text = bar.text_area(
        "Hourly weights, hour 0 to 23 (comma-separated)",
        value=", ".join(f"{w:g}" for w in WORKDAY),
        key="plan_profile_custom",
        help="24 numbers, one per hour from midnight, relative to each other (1 = the busiest "
        "hour, 0.5 = half as busy); only their shape matters, not their scale.",
    )
    return _weights(text)


def _weights(text: str) -> tuple[float, ...]:
    """24 numbers from the text box; bad text becomes a scenario error shown in place."""
    parts = [part.strip() for part in text.replace(";", ",").split(",") if part.strip()]
    try:
        weights = tuple(float(part) for part in parts)
    except ValueError:
        st.sidebar.error(plain(f"hourly weights must be numbers, got {text!r}"))
        return ()
    if len(weights) != HOURS_PER_DAY:
        st.sidebar.error(f"give {HOURS_PER_DAY} hourly weights, got {len(weights)}")
    return weights


def fleet_options() -> dict[str, object]:
    """Scaling mode, start-up assumptions and pricing mode."""
    bar = st.sidebar
    bar.subheader("Fleet and pricing")
    scaling = bar.radio(
        "Fleet",
        list(SCALING),
        format_func=SCALING.__getitem__,
        key="plan_scaling",
        help="Autoscaling follows the daily shape; each scale-up pays the measured cold start "
        "(and, for TensorRT-LLM, the engine build unless engines are prebuilt).",
    )
    options: dict[str, object] = {"scaling": scaling}
    if scaling == "autoscale":
        options["prebuilt_engines"] = bar.checkbox(
            "TensorRT-LLM engines are prebuilt",
            key="plan_prebuilt",
            help="Ticked: a new TensorRT-LLM replica starts from an engine built ahead of time, "
            "so scaling up does not wait for (or pay) an engine build.",
        )
        options["startup_s_if_unknown"] = bar.number_input(
            "Start-up time when not measured (s)",
            min_value=1.0,
            max_value=highest(OptionsSpec, "startup_s_if_unknown"),
            value=300.0,
            key="plan_startup_unknown",
            help="Seconds from asking for a new replica to it serving requests, paid at each "
            "scale-up. Used (and flagged as assumed) when a run has no measured cold start.",
        )
    options["pricing_mode"] = bar.radio(
        "Pricing",
        list(PRICING),
        format_func=PRICING.__getitem__,
        key="plan_pricing_mode",
        help="Reserved prices come from the price catalog; when it has none for a GPU the plan "
        "says so and uses on-demand (no discount is invented).",
    )
    return options


def factors() -> dict[str, object]:
    """The qualitative factors as checkboxes, and how much extra a preferred engine may cost."""
    bar = st.sidebar
    bar.subheader("Factors", help=FACTOR_HELP)
    chosen: dict[str, object] = {
        name: bar.checkbox(label, key=f"plan_factor_{name}", help=FACTOR_HELP)
        for name, label in FACTORS
    }
    chosen["preference_tolerance_pct"] = bar.slider(
        "Extra cost accepted for a preferred engine (%)",
        min_value=0.0,
        max_value=100.0,
        value=15.0,
        step=1.0,
        key="plan_factor_tolerance",
        help="A factor that prefers vLLM switches the choice only if vLLM costs at most this "
        "much more per month than the cheapest option.",
    )
    return chosen


def widget_state(scenario: Scenario) -> dict[str, object]:
    """Session-state values that make these widgets show a saved scenario."""
    weights = scenario.demand.hourly_profile
    if weights is None:
        shape = FLAT
    elif tuple(weights) == WORKDAY:
        shape = PROFILES[1]
    else:
        shape = CUSTOM
    options = scenario.options
    state: dict[str, object] = {
        "plan_profile_shape": shape,
        "plan_scaling": options.scaling.value,  # the radio's options are plain strings
        "plan_prebuilt": options.prebuilt_engines,
        "plan_startup_unknown": float(options.startup_s_if_unknown),
        "plan_pricing_mode": options.pricing_mode.value,
        "plan_factor_tolerance": scenario.factors.preference_tolerance_pct,
    }
    if shape == CUSTOM and weights is not None:
        state["plan_profile_custom"] = ", ".join(f"{w:g}" for w in weights)
    state.update({f"plan_factor_{name}": getattr(scenario.factors, name) for name, _ in FACTORS})
    return state
