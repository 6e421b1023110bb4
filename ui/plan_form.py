"""The Plan page's inputs: widgets (in the sidebar) -> a raw scenario mapping, and a saved
Scenario -> widget state, so loading a scenario fills the same widgets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from errors import CapplanError, InputError, preview
from hardware.gpus import gpu_catalog
from planner.curves.load import LoadCurve
from planner.inputs.prices import PriceEntry
from planner.inputs.scenario import (
    DEMAND_KINDS,
    BudgetSpec,
    DemandKind,
    DemandSpec,
    Scenario,
    WorkloadSpec,
)
from planner.inputs.sla_targets import SLA_TARGETS
from reports.names import engine_name, gpu_name
from ui import (
    plan_fleet_form,
    plan_horizon,
    plan_model_form,
    plan_prices,
    plan_sla_form,
    plan_what_if,
)
from ui.input_labels import input_label
from ui.plan_model_form import ANY_PRECISION, DEFAULT_MODEL, PRECISION_OWNER
from workflows.names import canonical_engine, canonical_gpu, same_or_twin

__all__ = ["DEFAULT_MODEL", "apply_scenario", "draw_inputs", "problem_words", "widget_state"]
from ui.plan_sla_form import OPTIONAL
from workflows import limits

# Beyond this a monthly budget rules nothing out (a thousand 8-GPU nodes cost ~$20M a month).
PLAUSIBLE_USD_PER_MONTH = 1e9
DEFAULT_ISL = DEFAULT_OSL = 1024  # tokens: the page's first workload
DEMAND_LABELS: dict[DemandKind, str] = {
    "peak_requests_per_s": "Peak requests per second (req/s)",
    "peak_concurrent_streams": "Peak concurrent streams (users reading at once)",
    "monthly_output_tokens": "Output tokens per month (tokens)",
}
DEMAND_DEFAULTS: dict[DemandKind, float] = {
    "peak_requests_per_s": 10.0,
    "peak_concurrent_streams": 200.0,
    "monthly_output_tokens": 1e10,
}
DEMAND_HELP: dict[DemandKind, str] = {
    "peak_requests_per_s": "New requests arriving per second in the busiest hour.",
    "peak_concurrent_streams": "Answers being generated at the same moment in the busiest hour "
    "(about the number of users waiting on a reply at once).",
    "monthly_output_tokens": "Tokens the model writes in a month, all users together (a token "
    "is about 3/4 of an English word).",
}


def draw_inputs(
    models_stored: Sequence[str],
    curves_of: Callable[[str], Sequence[LoadCurve]],
    catalog: Sequence[PriceEntry],
) -> dict[str, object]:
    """Draw the scenario widgets in the sidebar and return the raw scenario mapping they give.
    `models_stored`: the stored model names; `curves_of(model)`: that model's curves only."""
    bar = st.sidebar
    bar.header("Scenario")
    name = bar.text_input(
        "Scenario name",
        value="my-plan",
        key="plan_name",
        help="Names the plan in reports and the saved scenario list.",
    )
    model, precision, curves = plan_model_form.model_and_precision(models_stored, curves_of)
    isl = bar.number_input(
        "Prompt length, ISL (tokens)",
        min_value=1,
        max_value=int(limits.highest(WorkloadSpec, "isl")),
        value=DEFAULT_ISL,
        step=128,
        key="plan_isl",
        help="Average prompt size per request in tokens (a token is about 3/4 of an English "
        "word), including any system prompt and chat history sent along.",
    )
    osl = bar.number_input(
        "Output length, OSL (tokens)",
        min_value=1,
        max_value=int(limits.highest(WorkloadSpec, "osl")),
        value=DEFAULT_OSL,
        step=128,
        key="plan_osl",
        help="Average answer length per request in tokens (a token is about 3/4 of an "
        "English word).",
    )
    return {
        "name": name,
        "model": model,
        "precision": None if precision == ANY_PRECISION else precision,
        "workload": {"isl": int(isl), "osl": int(osl)},
        "demand": _demand(),
        "what_if": plan_what_if.inputs(),
        "horizon": plan_horizon.inputs(),
        "sla": plan_sla_form.targets(),
        "budget": _budget(),
        **_candidates_and_pricing(curves, model, catalog),
        "options": _options() | plan_fleet_form.fleet_options(),
        "factors": plan_fleet_form.factors(),
    }


def _with_loaded(key: str, options: set[str]) -> list[str]:
    """Options plus any value a loaded scenario put in the widget's state."""
    loaded = st.session_state.get(key)
    return sorted(options | set(loaded if isinstance(loaded, list) else []))


def _demand() -> dict[str, object]:
    bar = st.sidebar
    bar.subheader("Demand")
    kind: DemandKind = bar.radio(
        "Demand given as",
        DEMAND_KINDS,
        key="plan_demand_kind",
        format_func=DEMAND_LABELS.__getitem__,
    )
    amount = bar.number_input(
        DEMAND_LABELS[kind],
        min_value=0.0,
        max_value=limits.highest(DemandSpec, kind),
        key=f"plan_demand_{kind}",
        value=DEMAND_DEFAULTS[kind],
        help=DEMAND_HELP[kind],
    )
    if amount <= 0:
        bar.error(
            f"{DEMAND_LABELS[kind].split(' (')[0]} must be more than 0: with no demand there is "
            "nothing to size. Not applied: the plan shown is for the last valid inputs."
        )
    ratio = bar.number_input(
        "Peak-to-average ratio (x)",
        min_value=1.0,
        max_value=limits.highest(DemandSpec, "peak_to_average"),
        value=1.0,
        step=0.5,
        key="plan_peak_to_average",
        help="Busiest-hour load divided by the average load (2 means the peak is twice the "
        "average): turns monthly tokens into a peak, and a peak into the tokens served per "
        "month. 1 means flat, round the clock.",
    )
    weights = plan_fleet_form.profile()
    if weights is None:
        return {kind: amount, "peak_to_average": ratio}
    return {kind: amount, "hourly_profile": list(weights)}


def _budget() -> dict[str, object] | None:
    monthly = st.sidebar.number_input(
        "Monthly budget ($/month)",
        min_value=0.0,
        max_value=limits.highest(BudgetSpec, "monthly_usd"),
        value=None,
        step=1000.0,
        key="plan_budget",
        help=f"Spend limit for GPUs per month. {OPTIONAL}",
    )
    if monthly is not None and monthly > PLAUSIBLE_USD_PER_MONTH:
        st.sidebar.warning(
            f"${monthly:,.0f}/month is beyond any plausible GPU spend (over "
            f"${PLAUSIBLE_USD_PER_MONTH:,.0f} a month): every option fits it, so the budget "
            "rules nothing out."
        )
    return None if monthly is None else {"monthly_usd": monthly}


def problem_words(exc: CapplanError) -> str:
    """An input the scenario refused, in words: 'Peak requests per second (req/s) must be
    greater than 0 (you entered 0.0)'."""
    if not isinstance(exc, InputError):
        return str(exc)
    said = exc.message.replace("Input should be", "must be")
    got = "" if exc.value is None else f" (you entered {preview(exc.value)})"
    return f"{input_label(exc.field)} {said}{got}" if exc.field else f"{said}{got}"


def _candidates_and_pricing(
    curves: Sequence[LoadCurve], model: str, catalog: Sequence[PriceEntry]
) -> dict[str, object]:
    bar = st.sidebar
    bar.subheader("Candidates and prices")
    mine = [c for c in curves if same_or_twin(c.key.model, model)]
    engines = _with_loaded("plan_engines", {"vllm", "tensorrt-llm", *(c.key.engine for c in mine)})
    known = gpu_catalog()
    gpus = _with_loaded("plan_gpus", {*known.names(), *(c.key.gpu for c in mine if c.key.gpu)})
    tps = sorted({c.key.tp for c in mine if c.key.tp} | set(st.session_state.get("plan_tp", [])))
    chosen_engines = bar.multiselect(
        "Engines",
        engines,
        default=["vllm", "tensorrt-llm"],
        format_func=engine_name,
        key="plan_engines",
        help="Serving software to compare; only engines with measurements for the model count.",
    )
    chosen_gpus = bar.multiselect(
        "GPUs",
        gpus,
        default=list(known.default_names()),
        format_func=gpu_name,
        key="plan_gpus",
        help="GPU types to compare; each is priced below from the catalog or as typed.",
    )
    chosen_tp = bar.multiselect(
        "Tensor-parallel sizes (TP, GPUs per replica)",
        tps,
        key="plan_tp",
        help="How many GPUs one copy of the model (a replica) is split across. Empty: every "
        "TP that was measured.",
    )
    candidates = {"engines": chosen_engines, "gpus": chosen_gpus, "tp": chosen_tp or None}
    return {"candidates": candidates, **plan_prices.pricing(chosen_gpus, catalog)}


def _confidence() -> float:
    """The sizing confidence: how sure the plan must be that its fleet meets the SLA."""
    return st.sidebar.slider(
        "Sizing confidence (% chance the fleet meets the SLA)",
        min_value=0.5,
        max_value=0.99,
        value=0.9,
        step=0.01,
        format="percent",
        key="plan_confidence",
        help="How sure the plan must be that the fleet meets the SLA at the planned demand, "
        "given how far the fitted curves missed measurements they had not seen. 50% plans "
        "the expected fleet; 90% buys enough to be right nine times in ten. Unlike the "
        "utilisation ceiling (headroom for bursts) and spares (for failures), this covers "
        "measurement and fit error only.",
    )


def _options() -> dict[str, object]:
    bar = st.sidebar
    bar.subheader("Planning options")
    return {
        "gpus_per_node": bar.number_input(
            "GPUs per node (GPUs; blank: each GPU's own)",
            min_value=1,
            max_value=int(limits.GPUS_PER_NODE.high),
            value=None,
            placeholder="from the GPU catalog",
            key="plan_gpus_per_node",
            help="GPUs in the unit you rent or buy (a node); the plan rounds up to whole nodes. "
            "Blank: each GPU's own shape from the catalog: an 8-GPU HGX node for H100, H200, "
            "B200 and B300; a 4-GPU compute tray for GB200 and GB300 NVL72, where one replica "
            "may span up to the 72 GPUs of the rack. A number applies to every GPU, and then a "
            "replica never spans two nodes.",
        ),
        "sizing_confidence": _confidence(),
        "target_utilization": bar.slider(
            "Utilisation ceiling (% of measured capacity)",
            min_value=0.1,
            max_value=1.0,
            value=0.8,
            step=0.05,
            format="percent",
            key="plan_utilization",
            help="How hard each replica is driven, as a share of the load it carried within the "
            "SLA when measured. 80% keeps 20% headroom for bursts and measurement error; 100% "
            "keeps none.",
        ),
        **_replica_options(),
    }


def _replica_options() -> dict[str, object]:
    bar = st.sidebar
    return {
        "redundancy_replicas": bar.number_input(
            "Spare replicas, N+k (replicas)",
            min_value=0,
            max_value=int(limits.SPARE_REPLICAS.high),
            value=1,
            key="plan_redundancy",
            help="Whole replicas added on top of what the demand needs (the k in N+k), so one "
            "can fail or be upgraded without missing the SLA. A count of replicas, not of "
            "nodes and not a share; 0 means no spare.",
        ),
        "model_updates_per_month": bar.number_input(
            "Model updates (per month)",
            min_value=0.0,
            max_value=float(limits.UPDATES_PER_MONTH.high),
            value=0.0,
            key="plan_updates",
            help="How often a new model version is rolled out. Each update rebuilds TensorRT-LLM "
            "engines and the measured build time is billed; vLLM loads weights directly.",
        ),
        "hours_per_month": bar.number_input(
            "Billed hours per month (h)",
            min_value=1.0,
            max_value=744.0,
            value=730.0,
            key="plan_hours",
            help="Hours each GPU is paid for in a month: 730 is an average month round the clock "
            "(365 x 24 / 12); 744 is a 31-day month.",
        ),
        "max_streams_per_replica": bar.number_input(
            "Max streams per replica (streams, optional)",
            min_value=1,
            max_value=int(limits.STREAMS_PER_REPLICA.high),
            value=None,
            key="plan_max_streams",
            help="Cap on concurrent requests one replica serves, as set by vLLM --max-num-seqs "
            "or TensorRT-LLM --max_batch_size. Empty: as many as the SLA allows.",
        ),
    }


def apply_scenario(scenario: Scenario) -> None:
    """Make the widgets show a saved scenario (call from a callback, before they are drawn)."""
    # Prices the scenario does not set fall back to the catalog default, not the last edit.
    for key in [k for k in st.session_state if str(k).startswith("plan_price_")]:
        del st.session_state[key]
    st.session_state.update(widget_state(scenario))


def widget_state(scenario: Scenario) -> dict[str, object]:
    """Session-state values that make the widgets above show a saved scenario."""
    demand = scenario.demand
    state: dict[str, object] = {
        "plan_name": scenario.name,
        "plan_model": scenario.model,
        "plan_precision": scenario.precision or ANY_PRECISION,
        PRECISION_OWNER: scenario.model_id,
        "plan_isl": scenario.workload.isl,
        "plan_osl": scenario.workload.osl,
        "plan_demand_kind": demand.kind,
        f"plan_demand_{demand.kind}": demand.amount,
        "plan_peak_to_average": demand.peak_to_average,
        "plan_budget": scenario.budget.monthly_usd if scenario.budget else None,
        "plan_engines": [canonical_engine(e) for e in scenario.candidates.engines],
        "plan_gpus": [canonical_gpu(g) for g in scenario.candidates.gpus],
        "plan_gpus_per_node": scenario.options.gpus_per_node,
        "plan_confidence": scenario.options.sizing_confidence,
        "plan_utilization": scenario.options.target_utilization,
        "plan_redundancy": scenario.options.redundancy_replicas,
        "plan_updates": float(scenario.options.model_updates_per_month),
        "plan_hours": float(scenario.options.hours_per_month),
        "plan_max_streams": scenario.options.max_streams_per_replica,
        "plan_tp": list(scenario.candidates.tp or ()),
        "plan_what_if": plan_what_if.multipliers_text(scenario.what_if.demand_multipliers),
    }
    sla = scenario.sla.model_dump()
    state.update({f"plan_sla_{t.field}": sla[t.field] for t in SLA_TARGETS})
    state.update(plan_prices.widget_state(scenario))
    state.update(plan_fleet_form.widget_state(scenario))
    state.update(plan_horizon.widget_state(scenario))
    return state
