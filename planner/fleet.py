"""The fleet hour by hour: demand per hour -> replicas and nodes, start-up lead time, and the
monthly compute bill of a static or autoscaled fleet at on-demand, reserved or mixed prices.

A day of 24 hours stands for every day of the month (hours_per_month / 24 days).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from planner.curves import LoadCurve
from planner.families import Array
from planner.scenario import HOURS_PER_DAY, DemandSpec, OptionsSpec, Scenario

SECONDS_PER_HOUR = 3600.0
Counts = npt.NDArray[np.int64]
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
class GpuPrices:
    """USD per GPU-hour: on-demand, and reserved (None: no reserved price, on-demand is used)."""

    on_demand: float
    reserved: float | None


@dataclass(frozen=True, slots=True)
class FleetSpec:
    """One option's sizing facts: load one replica carries, node packing, start-up, prices."""

    load_per_replica: float  # peak-load units (streams or output tok/s) at target utilisation
    gpus_per_node: int
    replicas_per_node: int
    startup_s: float
    prices: GpuPrices


@dataclass(frozen=True, slots=True)
class FleetCost:
    """A month of one fleet: nodes per hour, GPU-hours and the compute bill by pricing type."""

    hourly_replicas: tuple[int, ...]
    hourly_nodes: tuple[int, ...]
    reserved_nodes: int
    gpu_hours: float
    on_demand_usd: float
    reserved_usd: float

    @property
    def total_usd(self) -> float:
        """Compute cost for the month, on-demand plus reserved."""
        return self.on_demand_usd + self.reserved_usd


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


def static_cost(spec: FleetSpec, replicas: int, options: OptionsSpec, reserved: bool) -> FleetCost:
    """The same fleet every hour of the month, all on-demand or all reserved."""
    hourly = np.full(HOURS_PER_DAY, replicas, dtype=np.int64)
    return _bill(spec, hourly, options, reserved_nodes=_nodes(spec, replicas) if reserved else 0)


def autoscaled_cost(spec: FleetSpec, hourly: Counts, options: OptionsSpec) -> FleetCost:
    """Replicas follow the hours; start-ups are billed for their lead time before each rise."""
    mode = options.pricing_mode
    if mode == "reserved" and spec.prices.reserved is not None:
        # Reserved GPUs are paid every hour, so the fleet is reserved at its peak.
        return _bill(spec, hourly, options, reserved_nodes=_nodes(spec, int(hourly.max())))
    baseline = _nodes(spec, int(hourly.min())) if mode == "mix" else 0
    return _bill(spec, hourly, options, reserved_nodes=baseline)


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
    """Monthly cost (compute + fixed extras) of an autoscaled fleet at k x the demand, as a
    function of k (what `budget_scale` searches)."""

    __slots__ = ("extra_usd", "floor", "options", "peak_load", "spec", "weights")

    def __init__(
        self,
        spec: FleetSpec,
        shape: Shape,
        peak_load: float,
        options: OptionsSpec,
        extra_usd: float,
    ) -> None:
        self.spec, self.weights, self.peak_load = spec, shape.weights, peak_load
        self.options, self.extra_usd = options, extra_usd
        self.floor = options.floor_replicas()

    def __call__(self, scale: float) -> float:
        serving = hourly_replicas(self.spec, self.peak_load * scale, self.weights, 0)
        spare = serving + self.options.redundancy_replicas
        hourly = np.maximum(spare, self.floor)
        return autoscaled_cost(self.spec, hourly, self.options).total_usd + self.extra_usd


def autoscale_notes(
    options: OptionsSpec, fleets: tuple[FleetCost, FleetCost], shape: Shape, startup: Startup
) -> list[str]:
    """The autoscaled fleet (first of `fleets`) against the static one, in words."""
    fleet, static = fleets
    saving = static.total_usd - fleet.total_usd
    notes = [
        f"autoscaled: {min(fleet.hourly_replicas)}-{max(fleet.hourly_replicas)} replicas over "
        f"the day (floor {options.floor_replicas()}), {fleet.gpu_hours:,.0f} GPU-hours/month vs "
        f"{static.gpu_hours:,.0f} static; saves ${saving:,.0f}/month vs a static fleet "
        f"(${static.total_usd:,.0f})",
        f"scale-up lead time: {startup.text}, billed before each rise",
    ]
    return notes if shape.note is None else [*notes, shape.note]


def pricing_note(options: OptionsSpec, fleet: FleetCost, prices: GpuPrices, gpu: str) -> str:
    """How the compute bill splits between on-demand and reserved GPUs."""
    if prices.reserved is None:
        return (
            f"{options.pricing_mode} pricing asked, but no reserved price for {gpu}: all "
            f"${fleet.on_demand_usd:,.0f} priced on-demand (${prices.on_demand:g}/GPU-hour)"
        )
    return (
        f"compute ${fleet.on_demand_usd:,.0f} on-demand (${prices.on_demand:g}/GPU-hour) + "
        f"${fleet.reserved_usd:,.0f} reserved ({fleet.reserved_nodes} node(s) all month at "
        f"${prices.reserved:g}/GPU-hour)"
    )


def _nodes(spec: FleetSpec, replicas: int) -> int:
    return math.ceil(replicas / spec.replicas_per_node - 1e-9)


def _bill(spec: FleetSpec, hourly: Counts, options: OptionsSpec, reserved_nodes: int) -> FleetCost:
    """Node-hours of a day priced and scaled to the month; rises pay their start-up lead."""
    nodes = np.ceil(hourly / spec.replicas_per_node - 1e-9).astype(np.int64)
    reserved_price = spec.prices.reserved
    if reserved_price is None:
        reserved_nodes, reserved_price = 0, spec.prices.on_demand
    # Only on-demand nodes start and stop; reserved ones run all month and never warm up again.
    on_demand_by_hour = np.maximum(nodes - reserved_nodes, 0)
    rises = np.maximum(on_demand_by_hour - np.roll(on_demand_by_hour, 1), 0)
    warming_node_h = float(rises.sum()) * spec.startup_s / SECONDS_PER_HOUR
    # Mean nodes per hour x hours_per_month, so a static fleet costs exactly nodes x hours.
    on_demand_nodes = (float(on_demand_by_hour.sum()) + warming_node_h) / HOURS_PER_DAY
    gpus, hours = spec.gpus_per_node, options.hours_per_month
    on_demand = on_demand_nodes * gpus * spec.prices.on_demand * hours
    reserved = reserved_nodes * gpus * reserved_price * hours
    gpu_hours = (on_demand_nodes + reserved_nodes) * gpus * hours
    return FleetCost(
        hourly_replicas=tuple(int(r) for r in hourly),
        hourly_nodes=tuple(int(n) for n in nodes),
        reserved_nodes=reserved_nodes,
        gpu_hours=gpu_hours,
        on_demand_usd=on_demand,
        reserved_usd=reserved,
    )


def peak_demand(scenario: Scenario, c_star: float, t_lo: float) -> tuple[int, float, float]:
    """(serving replicas, peak output tok/s, monthly output tokens) for the scenario's demand."""
    demand, opts = scenario.demand, scenario.options
    seconds = opts.hours_per_month * SECONDS_PER_HOUR
    u = opts.target_utilization
    if demand.kind == "peak_concurrent_streams":
        peak_tok_s = demand.amount * t_lo / c_star
        serving = _ceil(demand.amount / (c_star * u))
    else:
        if demand.kind == "peak_requests_per_s":
            peak_tok_s = demand.amount * scenario.workload.osl
        else:
            peak_tok_s = demand.amount / seconds * demand.peak_to_average
        serving = _ceil(peak_tok_s / (t_lo * u))
    if demand.kind == "monthly_output_tokens":
        monthly_tokens = demand.amount
    else:
        monthly_tokens = peak_tok_s / demand.peak_to_average * seconds
    return max(serving, 1), peak_tok_s, monthly_tokens


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
