"""The fleet hour by hour: demand per hour -> replicas, start-up lead time, peak demand, and
the search for the demand a budget buys (the money itself is planner.sizing.costs' CostModel).

A day of 24 hours stands for every day of the month (hours_per_month / 24 days).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from planner.curves.load import LoadCurve
from planner.fitting.families import Array
from planner.inputs.hourly import HOURS_PER_DAY
from planner.inputs.scenario import DemandSpec, OptionsSpec, Scaling, Scenario
from planner.sizing.costs import SECONDS_PER_HOUR, Counts, Fleet, FleetCost, Packing

_BISECTIONS = 24
_MAX_DOUBLINGS = 60


@dataclass(frozen=True, slots=True)
class Shape:
    """Demand per hour as a share of the peak (peak hour = 1.0) and where the shape came from."""

    weights: Array
    note: str | None  # set when the shape is assumed rather than given


@dataclass(frozen=True, slots=True)
class Startup:
    """How long a new replica takes to serve, and whether that was measured or assumed."""

    seconds: float
    text: str
    assumed: bool


@dataclass(frozen=True, slots=True)
class FleetSpec:
    """One option's sizing facts: the load one replica carries and its hardware packing."""

    load_per_replica: float  # peak-load units (streams or output tok/s) at target utilisation
    packing: Packing


def demand_shape(demand: DemandSpec) -> Shape:
    """The scenario's hourly profile, or an assumed one-peak-hour day with its peak_to_average."""
    weights = demand.hourly_weights()
    if weights is not None:
        return Shape(np.asarray(weights, dtype=np.float64), None)
    ratio = demand.peak_to_average
    rest = max((HOURS_PER_DAY / ratio - 1.0) / (HOURS_PER_DAY - 1), 0.0)
    note = (
        f"assumed daily shape (no hourly_profile): one hour at the peak, 23 hours at "
        f"{rest:.0%} of it, which gives peak_to_average {ratio:g}"
    )
    if ratio > HOURS_PER_DAY:
        note = (
            f"assumed daily shape (no hourly_profile): one hour at the peak and none otherwise; "
            f"peak_to_average {ratio:g} is above 24, which one day of hours cannot show"
        )
    return Shape(np.array([1.0] + [rest] * (HOURS_PER_DAY - 1)), note)


def startup_time(curve: LoadCurve, options: OptionsSpec) -> Startup:
    """Replica start-up: measured cold start plus TensorRT-LLM's engine build unless prebuilt."""
    needs_build = curve.key.engine == "tensorrt-llm" and not options.prebuilt_engines
    parts = [("cold start", curve.cold_start_s)]
    if needs_build:
        parts.append(("engine build", curve.engine_build_s))
    known = [(name, s) for name, s in parts if s is not None]
    if not known:
        default = options.startup_s_if_unknown
        missing = " or ".join(name for name, _ in parts)
        text = f"assumed {default:g} s start-up (no {missing} time measured; startup_s_if_unknown)"
        return Startup(default, text, True)
    text = " + ".join(f"measured {name} {s:g} s" for name, s in known)
    missing_names = [name for name, s in parts if s is None]
    if missing_names:
        text += f" ({' and '.join(missing_names)} not measured: not counted)"
    return Startup(sum(s for _, s in known), text, False)


def hourly_replicas(spec: FleetSpec, peak_load: float, weights: Array, floor: int) -> Counts:
    """Replicas serving each hour: enough for that hour's load, never below `floor`."""
    serving = np.ceil(peak_load * weights / spec.load_per_replica - 1e-9)
    return np.maximum(serving, floor).astype(np.int64)


def autoscaled_replicas(
    spec: FleetSpec, peak_load: float, weights: Array, options: OptionsSpec
) -> Counts:
    """Replicas each hour of an autoscaled fleet: the hour's load, the spares, the floor."""
    serving = hourly_replicas(spec, peak_load, weights, 0)
    return np.maximum(serving + options.redundancy_replicas, options.floor_replicas())


def budget_scale(budget_usd: float, cost_at: AutoscaleCostAt) -> float:
    """Largest factor k on the demand whose monthly cost stays within the budget (0: none),
    to a relative precision of about 1e-7."""
    if cost_at(0.0) > budget_usd:
        return 0.0
    low, high = 0.0, 1.0
    for _ in range(_MAX_DOUBLINGS):
        if cost_at(high) > budget_usd:
            break
        low, high = high, high * 2.0
    else:
        return math.inf
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2.0
        low, high = (middle, high) if cost_at(middle) <= budget_usd else (low, middle)
    return low


class AutoscaleCostAt:
    """Monthly cost (compute + fixed extras, as `cost_of` prices a fleet) of an autoscaled fleet
    at k x the demand, as a function of k (what `budget_scale` searches)."""

    __slots__ = ("cost_of", "options", "peak_load", "spec", "weights")

    def __init__(
        self,
        spec: FleetSpec,
        shape: Shape,
        peak_load: float,
        options: OptionsSpec,
        cost_of: Callable[[Fleet], float],
    ) -> None:
        self.spec, self.weights, self.peak_load = spec, shape.weights, peak_load
        self.options, self.cost_of = options, cost_of

    def __call__(self, scale: float) -> float:
        hourly = autoscaled_replicas(self.spec, self.peak_load * scale, self.weights, self.options)
        return self.cost_of(Fleet(self.spec.packing, hourly))


def autoscale_notes(
    options: OptionsSpec,
    hourly: tuple[int, ...],
    bills: tuple[FleetCost, FleetCost],
    shape: Shape,
    startup: Startup,
) -> list[str]:
    """The autoscaled fleet (`hourly`, the first of `bills`) against the static one, in words."""
    fleet, static = bills
    saving = static.total_usd - fleet.total_usd
    notes = [
        f"autoscaled: {min(hourly)}-{max(hourly)} replicas over "
        f"the day (floor {options.floor_replicas()}), {fleet.gpu_hours:,.0f} GPU-hours/month vs "
        f"{static.gpu_hours:,.0f} static; saves ${saving:,.0f}/month vs a static fleet "
        f"(${static.total_usd:,.0f})",
        f"scale-up lead time: {startup.text}, billed before each rise",
    ]
    return notes if shape.note is None else [*notes, shape.note]


def peak_demand(scenario: Scenario, c_star: float, t_lo: float) -> tuple[int, float, float]:
    """(serving replicas, peak output tok/s, monthly output tokens) for the scenario's demand."""
    demand, opts = scenario.demand, scenario.options
    seconds = opts.hours_per_month * SECONDS_PER_HOUR
    u = opts.target_utilization
    if demand.kind == "peak_concurrent_streams":
        peak_tok_s = demand.amount * t_lo / c_star
        serving = _ceil(demand.amount / (c_star * u))
    else:
        peak_tok_s = _peak_tok_s(scenario)
        serving = _ceil(peak_tok_s / (t_lo * u))
    if demand.kind == "monthly_output_tokens":
        monthly_tokens = demand.amount
    else:
        monthly_tokens = peak_tok_s / demand.peak_to_average * seconds
    return max(serving, 1), peak_tok_s, monthly_tokens


def sample_fleets(scenario: Scenario, c_star: Array, t: Array) -> tuple[Counts, Counts]:
    """Replicas per hour (samples x 24) and the static fleet's replicas (per sample) at each
    sample's streams c_star and output tok/s t per replica: peak_demand's serving replicas plus
    the spares, autoscaled as autoscaled_replicas does, for every sample at once."""
    demand, opts = scenario.demand, scenario.options
    u = opts.target_utilization
    if demand.kind == "peak_concurrent_streams":
        peak, load = demand.amount, c_star * u
    else:
        peak, load = _peak_tok_s(scenario), t * u
    with np.errstate(divide="ignore", invalid="ignore"):
        serving = np.maximum(np.ceil(peak / load - 1e-9), 1).astype(np.int64)
    static = serving + opts.redundancy_replicas
    if opts.scaling is not Scaling.AUTOSCALE:
        return np.repeat(static[:, None], HOURS_PER_DAY, axis=1).astype(np.int64), static
    weights = demand_shape(demand).weights
    with np.errstate(divide="ignore", invalid="ignore"):
        hourly = np.maximum(np.ceil(peak * weights[None, :] / load[:, None] - 1e-9), 0)
    hourly = np.maximum(hourly + opts.redundancy_replicas, opts.floor_replicas())
    return hourly.astype(np.int64), static


def _peak_tok_s(scenario: Scenario) -> float:
    """Peak output tok/s of a demand given in requests/s or monthly tokens."""
    demand, opts = scenario.demand, scenario.options
    if demand.kind == "peak_requests_per_s":
        return demand.amount * scenario.workload.osl
    seconds = opts.hours_per_month * SECONDS_PER_HOUR
    return demand.amount / seconds * demand.peak_to_average


def serving_to_demand(scenario: Scenario, serving: int, c_star: float, t_lo: float) -> float:
    """Peak demand, in the scenario's unit, that `serving` replicas carry at c_star and t_lo."""
    demand, opts = scenario.demand, scenario.options
    u = opts.target_utilization
    peak_tok_s = serving * t_lo * u
    if demand.kind == "peak_concurrent_streams":
        return serving * c_star * u
    if demand.kind == "peak_requests_per_s":
        return peak_tok_s / scenario.workload.osl
    return peak_tok_s / demand.peak_to_average * opts.hours_per_month * SECONDS_PER_HOUR


def _ceil(value: float) -> int:
    # Float noise (4.0000000001) must not buy a whole extra replica.
    return max(math.ceil(value - 1e-9), 0)
