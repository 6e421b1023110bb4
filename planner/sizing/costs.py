"""Money for a fleet: the CostModel seam and today's models (rented GPUs on-demand, reserved, or
a reserved baseline with on-demand peaks), chosen once from the scenario's pricing_mode.

Sizing (planner.sizing.size, the budget search in planner.sizing.fleet) builds a Fleet (replicas per
hour, GPUs per replica, node packing, start-up lead time) and asks a CostModel for its FleetCost; it
never looks at how the GPUs are paid for. A new way of paying (owned GPUs, commitments, a hosted
API) is one more CostModel subclass passed to make_plan (planner.analysis.capacity).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from planner.inputs.hourly import HOURS_PER_DAY
from planner.inputs.prices import ScenarioPrice
from planner.inputs.scenario import OptionsSpec, PricingMode

SECONDS_PER_HOUR = 3600.0
ON_DEMAND = "on-demand"  # cost line names of rented GPUs
RESERVED = "reserved"
Counts = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Packing:
    """How one option's replicas sit on hardware, and how long a new replica takes to serve."""

    gpu: str
    gpus_per_replica: int
    gpus_per_node: int
    replicas_per_node: int
    startup_s: float  # lead time of a scale-up, paid before the replica serves
    hours_per_month: float
    nodes_per_replica: int = 1  # >1: a replica spans nodes of one NVLink domain (NVL72 trays)

    def nodes(self, replicas: int) -> int:
        """Whole nodes that hold `replicas` (a replica never spans NVLink domains)."""
        return math.ceil(replicas / self.replicas_per_node - 1e-9) * self.nodes_per_replica


@dataclass(frozen=True, slots=True, eq=False)
class Fleet:
    """One option's fleet for a month: replicas running each hour of a day that stands for
    every day of the month (hours_per_month / 24 days), on its packing."""

    packing: Packing
    hourly_replicas: Counts  # 24 counts, hour 0-23

    @property
    def hourly_nodes(self) -> Counts:
        """Nodes running each hour."""
        per_node = self.packing.replicas_per_node
        nodes = np.ceil(self.hourly_replicas / per_node - 1e-9) * self.packing.nodes_per_replica
        return nodes.astype(np.int64)


@dataclass(frozen=True, slots=True)
class CostLine:
    """One part of a monthly bill, e.g. ('on-demand', 41_000.0) or ('power', 3_100.0)."""

    name: str
    usd: float


@dataclass(frozen=True, slots=True)
class FleetCost:
    """A fleet's month in money: the bill by line, the GPU-hours it runs, and notes in words."""

    lines: tuple[CostLine, ...]
    gpu_hours: float
    notes: tuple[str, ...] = ()  # how the bill was made, for the option's notes

    @property
    def total_usd(self) -> float:
        """The fleet's monthly bill, every line together."""
        return sum(line.usd for line in self.lines)

    def usd(self, name: str) -> float:
        """The bill's lines called `name` (0.0 when it has none)."""
        return sum(line.usd for line in self.lines if line.name == name)


@dataclass(frozen=True, slots=True)
class OptionCost:
    """One sized option's month: its fleet's bill, engine operations, and tokens served."""

    pricing: str  # the cost model's name, e.g. "on_demand"
    fleet: FleetCost
    static_fleet: FleetCost  # the same demand on a fleet sized for the peak all month
    ops_usd: float  # engine rebuilds for model updates
    monthly_output_tokens: float
    reserved_usd_per_gpu_hour: float | None  # None: no reserved price was asked for or found

    @property
    def compute_usd(self) -> float:
        """The fleet's monthly bill."""
        return self.fleet.total_usd

    @property
    def total_usd(self) -> float:
        """Fleet plus operations, USD per month."""
        return self.compute_usd + self.ops_usd

    @property
    def usd_per_million_output_tokens(self) -> float:
        """Total monthly cost over the output tokens served in the month, per million."""
        return self.total_usd / (self.monthly_output_tokens / 1e6)


class CostModel(ABC):
    """Turns a fleet over a month into money. Subclasses say how GPUs are paid for.

    A static fleet's cost is taken to grow with its whole nodes (the budget capacity of a static
    fleet divides the budget by `node_month_usd`); autoscaled fleets are billed hour by hour.
    """

    name: str  # shown in notes ("... on_demand pricing ...") and the pricing_mode column

    @abstractmethod
    def fleet_cost(self, fleet: Fleet, price: ScenarioPrice) -> FleetCost:
        """The fleet's monthly bill at the GPU's prices."""

    def price_warnings(self, price: ScenarioPrice) -> tuple[str, ...]:
        """What the plan should warn about one GPU's prices under this model (none by default)."""
        return ()


def node_month_usd(model: CostModel, packing: Packing, price: ScenarioPrice) -> float:
    """What one node running all month costs: a full node every hour of the day (a replica that
    spans nodes: its cost over the nodes it takes)."""
    full = np.full(HOURS_PER_DAY, packing.replicas_per_node, dtype=np.int64)
    return model.fleet_cost(Fleet(packing, full), price).total_usd / packing.nodes_per_replica


class RentedGpus(CostModel):
    """GPUs rented from a provider: reserved nodes are paid every hour of the month; the rest
    are paid on-demand for the hours they run, and each on-demand rise pays its start-up lead.
    Subclasses say how many nodes are reserved."""

    @abstractmethod
    def reserved_nodes(self, fleet: Fleet) -> int:
        """Nodes bought reserved, all month."""

    def fleet_cost(self, fleet: Fleet, price: ScenarioPrice) -> FleetCost:
        """On-demand and reserved lines, and how they split in words."""
        cost, reserved_nodes = _rented_bill(fleet, price, self.reserved_nodes(fleet))
        notes = [_split_note(self.name, cost, (price, reserved_nodes), fleet.packing.gpu)]
        if price.reserved_usd_per_gpu_hour is not None and price.reserved_note:
            notes.append(price.reserved_note)  # where the reserved price came from
        return FleetCost(cost.lines, cost.gpu_hours, tuple(notes))

    def price_warnings(self, price: ScenarioPrice) -> tuple[str, ...]:
        """Why a GPU's reserved nodes are priced on-demand, when no reserved price was found."""
        if price.reserved_note and price.reserved_usd_per_gpu_hour is None:
            return (price.reserved_note,)
        return ()


class OnDemandGpus(RentedGpus):
    """Every node on-demand, paid for the hours it runs."""

    name = PricingMode.ON_DEMAND

    def reserved_nodes(self, fleet: Fleet) -> int:
        """None."""
        return 0

    def fleet_cost(self, fleet: Fleet, price: ScenarioPrice) -> FleetCost:
        """The on-demand bill (a reserved line of $0 kept for the export's columns)."""
        return _rented_bill(fleet, price, 0)[0]

    def price_warnings(self, price: ScenarioPrice) -> tuple[str, ...]:
        """None: no reserved price is asked for."""
        return ()


class ReservedGpus(RentedGpus):
    """Every node reserved: the fleet is reserved at its peak hour (paid all month)."""

    name = PricingMode.RESERVED

    def reserved_nodes(self, fleet: Fleet) -> int:
        """The peak hour's nodes."""
        return fleet.packing.nodes(int(fleet.hourly_replicas.max()))


class MixedGpus(RentedGpus):
    """The always-on baseline reserved (the quietest hour's nodes), the peaks on-demand."""

    name = PricingMode.MIX

    def reserved_nodes(self, fleet: Fleet) -> int:
        """The quietest hour's nodes."""
        return fleet.packing.nodes(int(fleet.hourly_replicas.min()))


_BY_MODE: dict[PricingMode, CostModel] = {
    PricingMode.ON_DEMAND: OnDemandGpus(),
    PricingMode.RESERVED: ReservedGpus(),
    PricingMode.MIX: MixedGpus(),
}


def cost_model_for(options: OptionsSpec) -> CostModel:
    """The cost model the scenario's pricing_mode names."""
    return _BY_MODE[options.pricing_mode]


def _rented_bill(fleet: Fleet, price: ScenarioPrice, reserved_nodes: int) -> tuple[FleetCost, int]:
    """Node-hours of a day priced and scaled to the month; rises pay their start-up lead.
    Without a reserved price every node is on-demand (the reserved node count says 0)."""
    packing = fleet.packing
    on_demand_price = price.usd_per_gpu_hour
    reserved_price = price.reserved_usd_per_gpu_hour
    if reserved_price is None:
        reserved_nodes, reserved_price = 0, on_demand_price
    on_demand_nodes = uncovered_node_months(fleet, reserved_nodes)
    gpus, hours = packing.gpus_per_node, packing.hours_per_month
    on_demand = on_demand_nodes * gpus * on_demand_price * hours
    reserved = reserved_nodes * gpus * reserved_price * hours
    gpu_hours = (on_demand_nodes + reserved_nodes) * gpus * hours
    lines = (CostLine(ON_DEMAND, on_demand), CostLine(RESERVED, reserved))
    return FleetCost(lines, gpu_hours), reserved_nodes


def uncovered_node_months(fleet: Fleet, covered_nodes: float) -> float:
    """Node-months the fleet runs beyond `covered_nodes` (reserved, committed or owned: running
    all month), each on-demand rise paying its start-up lead; the mean nodes per hour, so a
    static fleet above its cover costs exactly its extra nodes all month."""
    # Only on-demand nodes start and stop; covered ones run all month and never warm up again.
    on_demand_by_hour = np.maximum(fleet.hourly_nodes - covered_nodes, 0)
    rises = np.maximum(on_demand_by_hour - np.roll(on_demand_by_hour, 1), 0)
    warming_node_h = float(rises.sum()) * fleet.packing.startup_s / SECONDS_PER_HOUR
    return (float(on_demand_by_hour.sum()) + warming_node_h) / HOURS_PER_DAY


def _split_note(mode: str, cost: FleetCost, priced: tuple[ScenarioPrice, int], gpu: str) -> str:
    """How the compute bill splits between on-demand and reserved GPUs."""
    price, reserved_nodes = priced
    on_demand, reserved = cost.usd(ON_DEMAND), cost.usd(RESERVED)
    if price.reserved_usd_per_gpu_hour is None:
        return (
            f"{mode} pricing asked, but no reserved price for {gpu}: all "
            f"${on_demand:,.0f} priced on-demand (${price.usd_per_gpu_hour:g}/GPU-hour)"
        )
    return (
        f"compute ${on_demand:,.0f} on-demand (${price.usd_per_gpu_hour:g}/GPU-hour) + "
        f"${reserved:,.0f} reserved ({reserved_nodes} node(s) all month at "
        f"${price.reserved_usd_per_gpu_hour:g}/GPU-hour)"
    )
