"""One candidate -> one option: in every error sample of its fits (planner.sizing.draws) the SLA
targets pick the concurrency per replica (never beyond the measured range), demand and
utilisation pick replicas, replicas pack whole nodes and the scenario's CostModel
(planner.sizing.costs) turns the fleet into money; the option is the sample at the scenario's sizing
confidence (the fleet that meets the SLA in that share of the samples), with the rest kept as
its Spread (planner.sizing.confidence).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TypedDict

import numpy as np

from planner.curves.load import LoadCurve
from planner.fitting.families import Array
from planner.fitting.fit import CurveFit
from planner.inputs.hourly import HOURS_PER_DAY
from planner.inputs.prices import ScenarioPrice
from planner.inputs.scenario import Scaling, Scenario
from planner.sizing.confidence import MISSED, SampleFleet, Spread, share_below
from planner.sizing.costs import (
    SECONDS_PER_HOUR,
    CostModel,
    Fleet,
    FleetCost,
    OptionCost,
    Packing,
    node_month_usd,
)
from planner.sizing.draws import Draws, quantile_index
from planner.sizing.fleet import (
    AutoscaleCostAt,
    FleetSpec,
    Shape,
    Startup,
    autoscale_notes,
    budget_scale,
    demand_shape,
    peak_demand,
    sample_fleets,
    serving_to_demand,
    startup_time,
)
from planner.sizing.nodes import NodeShape, node_shape
from planner.sizing.options import Option, OptionKey, RejectedOption, SizedOption
from planner.sizing.selection import Candidate
from planner.sizing.sla import (
    SampledGrid,
    SlaCheck,
    binding_constraint,
    never_holds_text,
    sampled_grid,
    sla_checks,
    stream_cap,
    throughput_grid,
)


@dataclass(frozen=True, slots=True)
class Pricing:
    """How one candidate is paid for: the plan's cost model and the GPU's prices."""

    model: CostModel
    price: ScenarioPrice

    def bill(self, fleet: Fleet) -> FleetCost:
        """The fleet's monthly bill."""
        return self.model.fleet_cost(fleet, self.price)


def size_option(
    scenario: Scenario, candidate: Candidate, pricing: Pricing, fit: CurveFit, draws: Draws
) -> Option:
    """The candidate sized and priced for the scenario at its sizing confidence, or rejected
    with the reason."""
    cap, cap_text = stream_cap(scenario, candidate)
    grid = throughput_grid(fit, cap)
    key = _key(candidate)
    at = sampled_grid(scenario, fit, grid, draws.normals(key.title()))
    checks = sla_checks(at)
    flags = [*candidate.flags, *fit.curve.flags, *fit.flags]
    for check in checks:
        flags.extend(check.flags)
    base = _Base(scenario, candidate, fit, pricing, tuple(dict.fromkeys(flags)))
    unverifiable = [c for c in checks if c.values is None]
    shape = node_shape(scenario.options, candidate.gpu)
    if not shape.fits(candidate.gpus_per_replica):
        return base.rejected(shape.too_big(candidate.gpus_per_replica), ())
    if grid.size == 0:
        reason = (
            f"{cap_text} is below every measured concurrency"
            if cap_text is not None
            else "no output tok/s measured"
        )
        return base.rejected(reason, ())
    if unverifiable:
        reason = "; ".join(f"cannot verify {c.text}: {c.why_unverifiable}" for c in unverifiable)
        return base.rejected(reason, tuple(c.name for c in unverifiable))
    return base.at_confidence(at, checks, cap_text)


def _key(candidate: Candidate) -> OptionKey:
    key = candidate.curve.key
    return OptionKey(
        candidate.engine, candidate.gpu, candidate.tp, key.precision or None,
        key.parallel_text().strip(),
    )  # fmt: skip


class _Shared(TypedDict):
    """The fields every option of one candidate has (see planner.sizing.options)."""

    key: OptionKey
    curve: LoadCurve
    fit: CurveFit
    gpus_per_replica: int
    replicas_per_node: int
    nodes_per_replica: int
    node_words: str
    usd_per_gpu_hour: float
    price_source: str
    budget_capacity_unit: str
    above_ceiling: bool


@dataclass(frozen=True, slots=True)
class _Base:
    """What every option of one candidate shares, whether it is sized or rejected."""

    scenario: Scenario
    candidate: Candidate
    fit: CurveFit
    pricing: Pricing
    flags: tuple[str, ...]

    def _shared(self) -> _Shared:
        candidate = self.candidate
        return {
            "key": _key(candidate),
            "curve": candidate.curve,
            "fit": self.fit,
            "gpus_per_replica": candidate.gpus_per_replica,
            "replicas_per_node": self._shape.replicas_per_node(candidate.gpus_per_replica),
            "nodes_per_replica": self._shape.nodes_per_replica(candidate.gpus_per_replica),
            "node_words": self._shape.words,
            "usd_per_gpu_hour": self.pricing.price.usd_per_gpu_hour,
            "price_source": self.pricing.price.source,
            "budget_capacity_unit": self.scenario.demand.unit,
            "above_ceiling": bool(candidate.above_ceiling),
        }

    def rejected(self, reason: str, failed: tuple[str, ...]) -> RejectedOption:
        """An option that cannot serve the scenario, with the reason."""
        return RejectedOption(
            **self._shared(),
            flags=self.flags,
            reason=reason,
            failed_targets=failed,
        )

    def at_confidence(
        self, at: SampledGrid, checks: list[SlaCheck], cap_text: str | None
    ) -> Option:
        """Size every error sample; the option is the sample at the sizing confidence."""
        ok = np.ones_like(at.t, dtype=bool)
        for check in checks:
            ok &= check.holds()
        size = at.grid.size
        index = size - 1 - np.argmax(ok[:, ::-1], axis=1)  # highest concurrency that holds
        rows = np.arange(len(ok))
        t = at.t[rows, index]
        met = ok.any(axis=1) & np.isfinite(t) & (t > 0)
        c_star = at.grid[index]
        spread = self._spread(c_star, t, met)
        streams = self.scenario.demand.kind == "peak_concurrent_streams"
        capacity = np.where(met, c_star if streams else t, 0.0)
        row = 1 + quantile_index(capacity[1:], spread.confidence)  # row 0: the fitted curve
        if not met[row]:
            return self._missed(checks, at.grid, ok, spread)
        binding = binding_constraint(checks, (row, int(index[row])), size, cap_text)
        return self.sized(float(at.grid[index[row]]), float(t[row]), binding, spread)

    def _missed(self, checks: list[SlaCheck], grid: Array, ok: Array, spread: Spread) -> Option:
        """Rejected: the SLA is met in fewer samples than the sizing confidence asks."""
        central = [c for c in checks if not c.holds()[0].any()]
        if central:
            reason = "; ".join(never_holds_text(c, grid) for c in central)
            return self.rejected(reason, tuple(c.name for c in central))
        missed = ~ok[1:].any(axis=1)
        failing = [c for c in checks if (~c.holds()[1:].any(axis=1) & missed).any()] or checks
        reason = (
            f"meets the SLA in {share_below(spread.feasible_share, spread.confidence)} of the "
            "samples of its fits' error, "
            f"fewer than the {spread.confidence:.0%} sizing confidence asks "
            f"({' and '.join(c.text for c in failing)} fails at every measured concurrency "
            "in the rest)"
        )
        return self.rejected(reason, tuple(c.name for c in failing))

    def _spread(self, c_star: Array, t: Array, met: Array) -> Spread:
        """The fleet each sample (rows 1..) needs, samples sharing a fleet sharing its bill."""
        ops = self._ops_cost()[0]
        packing = self._packing(startup_time(self.candidate.curve, self.scenario.options))
        hourly, static = sample_fleets(self.scenario, c_star[1:], t[1:])
        autoscaled = self.scenario.options.scaling is Scaling.AUTOSCALE
        if autoscaled:
            slots: dict[tuple[int, ...], int] = {}
            rows = [(*r, p) for r, p in zip(hourly.tolist(), static.tolist(), strict=True)]
            inverse = np.array([slots.setdefault(row, len(slots)) for row in rows])
            unique = list(slots)
        else:  # a static fleet is its peak all day: one number says it
            peaks, inverse = np.unique(static, return_inverse=True)
            unique = [(p,) * HOURS_PER_DAY + (p,) for p in peaks.tolist()]
        found = []
        for row in unique:
            fleet = self.pricing.bill(Fleet(packing, np.asarray(row[:-1], np.int64)))
            static_row = np.full(HOURS_PER_DAY, row[-1], np.int64)
            static_fleet = self.pricing.bill(Fleet(packing, static_row)) if autoscaled else fleet
            found.append(SampleFleet(row[:-1], fleet, static_fleet, fleet.total_usd + ops))
        chosen = np.where(met[1:], inverse.reshape(-1), MISSED)
        return Spread(
            self.scenario.options.sizing_confidence,
            tuple(found),
            tuple(int(i) for i in chosen),
            self._shape.replicas_per_node(self.candidate.gpus_per_replica),
            self.candidate.gpus_per_replica,
            self._shape.nodes_per_replica(self.candidate.gpus_per_replica),
        )

    def sized(self, c_star: float, t_lo: float, binding: str, spread: Spread) -> Option:
        """Replicas, nodes and cost at concurrency c_star with throughput t_lo per replica."""
        sc = self.scenario
        opts = sc.options
        serving, peak_tok_s, monthly_tokens = peak_demand(sc, c_star, t_lo)
        startup = startup_time(self.candidate.curve, opts)
        spec, peak_load = self._fleet_spec(c_star, t_lo, peak_tok_s, startup)
        shape = demand_shape(sc.demand)
        # The same arithmetic as every sample's fleet (planner.sizing.fleet.sample_fleets).
        hours, peak = sample_fleets(sc, np.array([c_star]), np.array([t_lo]))
        static_hourly = np.full(HOURS_PER_DAY, peak[0], np.int64)
        static = self.pricing.bill(Fleet(spec.packing, static_hourly))
        autoscaled = opts.scaling is Scaling.AUTOSCALE
        hourly, bill = static_hourly, static
        if autoscaled:
            hourly = hours[0]
            bill = self.pricing.bill(Fleet(spec.packing, hourly))
        ops, ops_note = self._ops_cost()
        reserved_price = self.pricing.price.reserved_usd_per_gpu_hour
        cost = OptionCost(
            self.pricing.model.name, bill, static, ops, monthly_tokens, reserved_price
        )
        budget = sc.budget.monthly_usd if sc.budget else None
        option = SizedOption(
            **self._shared(),
            flags=self.flags + ((startup.text,) if autoscaled and startup.assumed else ()),
            concurrency_per_replica=c_star,
            binding_constraint=binding,
            output_tok_s_per_replica=t_lo,
            scaling=opts.scaling,
            hourly_replicas=tuple(int(r) for r in hourly),
            startup=startup if autoscaled else None,
            cost=cost,
            budget_usd=budget,
            budget_capacity=self._budget_capacity(budget, ops, (c_star, t_lo), (spec, peak_load)),
            notes=(),
            spread=spread,
        )
        notes = self._notes(option, (serving, peak_tok_s), shape, startup)
        notes.extend(note for note in (ops_note, self._memory_note(binding)) if note)
        return replace(option, notes=tuple(notes))

    def _notes(
        self, option: SizedOption, demand: tuple[int, float], shape: Shape, startup: Startup
    ) -> list[str]:
        """How the option was sized and priced, in words (operations and memory notes aside)."""
        serving, peak_tok_s = demand
        opts = self.scenario.options
        autoscaled = option.scaling is Scaling.AUTOSCALE
        notes = [
            f"{option.concurrency_per_replica:g} concurrent streams per replica at "
            f"{option.output_tok_s_per_replica:,.0f} output tok/s "
            f"(the fits' error sample at {option.confidence:.0%} confidence); peak demand "
            f"{peak_tok_s:,.0f} output tok/s at "
            f"{opts.target_utilization:.0%} target utilisation needs {serving} replica(s) "
            f"+ {opts.redundancy_replicas} spare",
            f"{option.replicas} replica(s) x {option.gpus_per_replica} GPU(s), "
            f"{self._placement(option.replicas_per_node, option.nodes_per_replica)} -> "
            f"{option.nodes} node(s)" + (" at the peak hour" if autoscaled else ""),
        ]
        cost = option.cost
        if autoscaled:
            bills = (cost.fleet, cost.static_fleet)
            notes.extend(autoscale_notes(opts, option.hourly_replicas, bills, shape, startup))
        notes.extend(note for note in (self._startup_note(),) if note and not autoscaled)
        notes.extend(cost.fleet.notes)
        if option.budget_usd is not None and autoscaled:
            notes.append(
                f"budget capacity: the largest multiple of the demand (same daily shape) whose "
                f"autoscaled fleet, {cost.pricing} pricing and operations cost fit "
                f"${option.budget_usd:,.0f}/month"
            )
        return notes

    def _fleet_spec(
        self, c_star: float, t_lo: float, peak_tok_s: float, startup: Startup
    ) -> tuple[FleetSpec, float]:
        """The option's fleet facts, and the peak load in the unit one replica's share uses."""
        opts = self.scenario.options
        streams = self.scenario.demand.kind == "peak_concurrent_streams"
        load = (c_star if streams else t_lo) * opts.target_utilization
        peak_load = self.scenario.demand.amount if streams else peak_tok_s
        return FleetSpec(load, self._packing(startup)), peak_load

    def _packing(self, startup: Startup) -> Packing:
        opts, gpus = self.scenario.options, self.candidate.gpus_per_replica
        return Packing(
            gpu=self.candidate.gpu,
            gpus_per_replica=gpus,
            gpus_per_node=self._shape.gpus,
            replicas_per_node=self._shape.replicas_per_node(gpus),
            startup_s=startup.seconds,
            hours_per_month=opts.hours_per_month,
            nodes_per_replica=self._shape.nodes_per_replica(gpus),
        )

    @property
    def _shape(self) -> NodeShape:
        return node_shape(self.scenario.options, self.candidate.gpu)

    def _placement(self, replicas_per_node: int, nodes_per_replica: int) -> str:
        if nodes_per_replica > 1:
            return (
                f"{nodes_per_replica} {self._shape.words}s per replica (one NVLink domain of "
                f"{self._shape.domain_gpus} GPUs)"
            )
        return f"{replicas_per_node} per {self._shape.words}"

    def _memory_note(self, binding: str) -> str | None:
        memory = self.candidate.max_streams_memory
        if memory is None or not binding.startswith("memory"):
            return None
        return (
            f"memory limits a replica to {memory} streams: an estimate of KV-cache capacity "
            "from model and GPU specs (planner.physics.roofline), not a measurement"
        )

    def _ops_cost(self) -> tuple[float, str | None]:
        updates = self.scenario.options.model_updates_per_month
        build_s = self.candidate.curve.engine_build_s
        if updates == 0:
            return 0.0, None
        if build_s is None:
            if self.candidate.engine != "tensorrt-llm":
                return 0.0, f"{self.candidate.engine} loads weights directly: no engine build"
            return 0.0, "no engine build time measured: model-update cost counted as $0"
        gpus = self.candidate.gpus_per_replica
        price = self.pricing.price.usd_per_gpu_hour
        cost = updates * build_s / SECONDS_PER_HOUR * gpus * price
        note = (
            f"engine build {build_s / 60:.0f} min x {updates:g} model update(s)/month x "
            f"{gpus} GPU(s) = ${cost:,.2f}/month"
        )
        return cost, note

    def _startup_note(self) -> str | None:
        cold = self.candidate.curve.cold_start_s
        return None if cold is None else f"cold start {cold:g} s (matters for autoscaling)"

    def _budget_capacity(
        self,
        budget: float | None,
        ops: float,
        operating: tuple[float, float],
        fleet: tuple[FleetSpec, float],
    ) -> float | None:
        """Demand served within the budget, in the scenario's demand unit, on the same fleet
        kind (static or autoscaled) and cost model as the plan."""
        if budget is None:
            return None
        spec, peak_load = fleet
        opts = self.scenario.options
        if opts.scaling is Scaling.AUTOSCALE:
            shape = demand_shape(self.scenario.demand)

            def cost_of(fleet: Fleet) -> float:
                return self.pricing.bill(fleet).total_usd + ops

            cost_at = AutoscaleCostAt(spec, shape, peak_load, opts, cost_of)
            return budget_scale(budget, cost_at) * self.scenario.demand.amount
        # A static fleet runs whole nodes all month: the budget buys whole nodes.
        node_cost = node_month_usd(self.pricing.model, spec.packing, self.pricing.price)
        nodes = math.floor(max(budget - ops, 0.0) / node_cost + 1e-12)
        whole = nodes // spec.packing.nodes_per_replica
        serving = max(whole * spec.packing.replicas_per_node - opts.redundancy_replicas, 0)
        return serving_to_demand(self.scenario, serving, *operating)
