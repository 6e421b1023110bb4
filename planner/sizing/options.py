"""The options a plan compares: one per engine x GPU x TP x precision, either sized and priced
(SizedOption) or rejected with its reasons (RejectedOption), both named by an OptionKey.

Re-plans (bootstrap samples, sensitivity moves, the report's demand series) find an option
again by its key, never by its display title.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.curves.load import LoadCurve
from planner.fitting.fit import CurveFit
from planner.inputs.scenario import Scaling
from planner.sizing.confidence import Spread
from planner.sizing.costs import ON_DEMAND, RESERVED, OptionCost
from planner.sizing.fleet import Startup


@dataclass(frozen=True, slots=True)
class OptionKey:
    """What identifies a candidate across re-plans: engine x GPU x TP x precision (selection
    keeps one curve per key; which run backs it may differ from one re-plan to the next)."""

    engine: str
    gpu: str
    tp: int | None
    precision: str | None
    layout: str = ""  # attention DP and expert parallel beyond TP ("DP8 EP8"); "" none

    @classmethod
    def of_curve(cls, curve: LoadCurve) -> OptionKey:
        """The key of the candidate a curve would back on its own GPU."""
        key = curve.key
        layout = key.parallel_text().strip()
        return cls(key.engine, key.gpu or "", key.tp, key.precision or None, layout)

    def title(self) -> str:
        """Short name, e.g. 'tensorrt-llm on H100-SXM-80GB (TP 1, fp8)'."""
        tp = f"TP {self.tp}" if self.tp else "TP not stated"
        tp += f" {self.layout}" if self.layout else ""
        precision = self.precision or "precision not stated"
        return f"{self.engine} on {self.gpu} ({tp}, {precision})"


class Keyed:
    """engine, GPU and TP read from the `key` (an OptionKey) of what mixes this in."""

    __slots__ = ()
    key: OptionKey

    @property
    def engine(self) -> str:
        """Serving engine, e.g. 'vllm'."""
        return self.key.engine

    @property
    def gpu(self) -> str:
        """GPU SKU, e.g. 'H100-SXM-80GB'."""
        return self.key.gpu

    @property
    def tp(self) -> int | None:
        """Tensor-parallel size (None: not stated)."""
        return self.key.tp


@dataclass(frozen=True, slots=True)
class _OptionBase(Keyed):
    """What every option of one candidate has, sized or rejected."""

    key: OptionKey
    curve: LoadCurve
    fit: CurveFit
    gpus_per_replica: int
    replicas_per_node: int
    nodes_per_replica: int  # >1: one replica spans nodes of an NVLink domain (NVL72 trays)
    node_words: str  # the unit the GPUs are rented or bought as ("8-GPU HGX node")
    usd_per_gpu_hour: float  # on-demand
    price_source: str
    budget_capacity_unit: str  # the scenario's demand unit
    flags: tuple[str, ...]
    # Its data has points above a physical ceiling of the stated hardware
    # (planner.physics.roofline): the source likely misstates GPUs, precision or model; recommended
    # only when nothing else is.
    above_ceiling: bool

    def title(self) -> str:
        """Short display name (see OptionKey.title)."""
        return self.key.title()

    @property
    def concerns(self) -> tuple[str, ...]:
        """Why its data cannot carry a recommendation (empty: sound): above a physical ceiling
        of the stated hardware, a workload the source did not state, a simulated engine."""
        key = self.curve.key
        found = []
        if self.above_ceiling:
            found.append(
                "its numbers are faster than the GPUs it names can physically go (the GPU "
                "count, precision or model it names is likely wrong)"
            )
        if key.isl is None or key.osl is None:
            found.append("its source did not state the workload (ISL/OSL) it measured")
        if any(flag.startswith("SIMULATED") for flag in self.curve.flags):
            found.append("it was measured on a simulated engine, not real hardware")
        return tuple(found)


@dataclass(frozen=True, slots=True)
class RejectedOption(_OptionBase):
    """A candidate that cannot serve the scenario, and why."""

    reason: str
    failed_targets: tuple[str, ...]  # SLA fields that fail or cannot be verified

    @property
    def meets_sla(self) -> bool:
        """Never."""
        return False


@dataclass(frozen=True, slots=True)
class SizedOption(_OptionBase):
    """A candidate sized for the scenario's demand within its SLA, and what that costs."""

    concurrency_per_replica: float
    binding_constraint: str  # what stops more streams per replica
    output_tok_s_per_replica: float  # at concurrency_per_replica, in the sample sized at
    # the sizing confidence (planner.sizing.draws)
    scaling: Scaling
    hourly_replicas: tuple[int, ...]  # hour 0-23, replicas running (peak = `replicas`)
    startup: Startup | None  # an autoscaled fleet's scale-up lead time (None: static)
    cost: OptionCost
    budget_usd: float | None  # the scenario's monthly budget (None: none given)
    budget_capacity: float | None  # demand the budget serves, in budget_capacity_unit
    notes: tuple[str, ...]
    spread: Spread  # the fleet every error sample needs; this option is the one at confidence
    # The peak fleet's facility power and the site's limit, kW, when the scenario states a
    # limit (planner.analysis.site_power); None: no limit given, power not a constraint.
    facility_kw: float | None = None
    power_limit_kw: float | None = None

    @property
    def confidence(self) -> float:
        """The probability that this fleet meets the SLA at the planned demand (the scenario's
        sizing_confidence; the share of error samples its fleet covers)."""
        return self.spread.confidence

    @property
    def expected_monthly_cost_usd(self) -> float:
        """The expected (median) fleet's total monthly cost over the error samples."""
        expected = self.spread.expected_total_usd
        return self.total_monthly_cost_usd if expected is None else expected

    @property
    def meets_sla(self) -> bool:
        """Always: a sized option meets every SLA target."""
        return True

    @property
    def replicas(self) -> int:
        """Replicas at the peak hour."""
        return max(self.hourly_replicas)

    @property
    def gpus(self) -> int:
        """GPUs at the peak hour."""
        return self.replicas * self.gpus_per_replica

    @property
    def nodes(self) -> int:
        """Nodes at the peak hour."""
        return math.ceil(self.replicas / self.replicas_per_node - 1e-9) * self.nodes_per_replica

    @property
    def fits_power(self) -> bool:
        """The peak fleet fits the site's power limit (True when no limit is given)."""
        if self.power_limit_kw is None or self.facility_kw is None:
            return True
        return self.facility_kw <= self.power_limit_kw + 1e-9

    @property
    def within_budget(self) -> bool | None:
        """Total monthly cost within the budget (None: no budget)."""
        return None if self.budget_usd is None else self.total_monthly_cost_usd <= self.budget_usd

    @property
    def total_monthly_cost_usd(self) -> float:
        """Compute plus operations, USD per month."""
        return self.cost.total_usd

    @property
    def monthly_cost_usd(self) -> float:
        """Compute only, USD per month."""
        return self.cost.compute_usd

    @property
    def ops_cost_usd(self) -> float:
        """Engine operations (rebuilds for model updates), USD per month."""
        return self.cost.ops_usd

    @property
    def monthly_output_tokens(self) -> float:
        """Output tokens served in a month."""
        return self.cost.monthly_output_tokens

    @property
    def usd_per_million_output_tokens(self) -> float:
        """Total monthly cost per million output tokens served."""
        return self.cost.usd_per_million_output_tokens

    @property
    def pricing_mode(self) -> str:
        """The cost model the option was priced with."""
        return self.cost.pricing

    @property
    def reserved_usd_per_gpu_hour(self) -> float | None:
        """The reserved price used (None: none asked for or found, on-demand used)."""
        return self.cost.reserved_usd_per_gpu_hour

    @property
    def compute_on_demand_usd(self) -> float:
        """The compute bill's on-demand part, USD per month."""
        return self.cost.fleet.usd(ON_DEMAND)

    @property
    def compute_reserved_usd(self) -> float:
        """The compute bill's reserved part, USD per month."""
        return self.cost.fleet.usd(RESERVED)

    @property
    def gpu_hours_per_month(self) -> float:
        """GPU-hours the fleet runs in a month (start-up leads included)."""
        return self.cost.fleet.gpu_hours

    @property
    def static_monthly_cost_usd(self) -> float:
        """The compute bill of the same demand on a static (peak) fleet."""
        return self.cost.static_fleet.total_usd

    @property
    def autoscale_saving_usd(self) -> float | None:
        """Static minus autoscaled compute bill (None: the fleet is static)."""
        if self.scaling is not Scaling.AUTOSCALE:
            return None
        return self.static_monthly_cost_usd - self.monthly_cost_usd

    @property
    def startup_s(self) -> float | None:
        """The autoscaled fleet's scale-up lead time, s (None: static)."""
        return None if self.startup is None else self.startup.seconds

    @property
    def startup_assumed(self) -> bool:
        """The lead time was assumed, not measured (False: static)."""
        return self.startup is not None and self.startup.assumed


Option = SizedOption | RejectedOption
