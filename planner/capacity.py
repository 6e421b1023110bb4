"""Scenario + curves + prices -> one Option per engine x GPU x TP, and the Plan that ranks them.

SLA targets pick the concurrency per replica (never beyond the measured range, conservative side
of every band); demand and utilisation pick replicas; replicas pack whole nodes; nodes cost money.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from errors import PlanningError
from planner.curves import LoadCurve, canonical_model
from planner.fit import CurveFit
from planner.fleet import (
    SECONDS_PER_HOUR,
    AutoscaleCostAt,
    FleetCost,
    FleetSpec,
    GpuPrices,
    Shape,
    Startup,
    autoscale_notes,
    autoscaled_cost,
    budget_scale,
    demand_shape,
    hourly_replicas,
    peak_demand,
    pricing_note,
    serving_to_demand,
    startup_time,
    static_cost,
)
from planner.prices import PriceEntry, ScenarioPrice, catalog_version, scenario_price
from planner.recommend import Recommendation, recommend
from planner.scenario import Scenario
from planner.selection import Candidate, select_curves
from planner.shapes import shaped_fitter
from planner.sla import (
    binding_constraint,
    never_holds_text,
    sla_checks,
    stream_cap,
    throughput_grid,
)


@dataclass(frozen=True, slots=True)
class Option:
    """One engine x GPU x TP candidate, sized and priced (None fields when it is rejected)."""

    engine: str
    gpu: str
    tp: int | None
    curve: LoadCurve
    fit: CurveFit
    concurrency_per_replica: float | None
    binding_constraint: str | None
    output_tok_s_per_replica: float | None
    replicas: int | None
    gpus_per_replica: int
    gpus: int | None
    replicas_per_node: int
    nodes: int | None
    usd_per_gpu_hour: float
    price_source: str
    monthly_cost_usd: float | None
    ops_cost_usd: float
    total_monthly_cost_usd: float | None
    monthly_output_tokens: float | None
    usd_per_million_output_tokens: float | None
    budget_capacity: float | None
    budget_capacity_unit: str
    meets_sla: bool
    within_budget: bool | None
    rejected_reason: str | None
    failed_targets: tuple[str, ...]
    flags: tuple[str, ...]
    notes: tuple[str, ...]
    # Fleet over the day and the bill by pricing type (see planner.fleet); defaults = not sized.
    scaling: str = "static"
    pricing_mode: str = "on_demand"
    reserved_usd_per_gpu_hour: float | None = None  # None: no reserved price, on-demand used
    compute_on_demand_usd: float | None = None
    compute_reserved_usd: float | None = None
    gpu_hours_per_month: float | None = None
    hourly_replicas: tuple[int, ...] = ()  # hour 0-23, replicas running (peak = `replicas`)
    startup_s: float | None = None
    startup_assumed: bool = False
    static_monthly_cost_usd: float | None = None  # the same demand on a static fleet
    autoscale_saving_usd: float | None = None  # static_monthly_cost_usd - monthly_cost_usd
    # Its data has points above a physical ceiling of the stated hardware (planner.physics):
    # the source likely misstates GPUs, precision or model; recommended only when nothing else is.
    above_ceiling: bool = False

    def title(self) -> str:
        """Short name, e.g. 'tensorrt-llm on H100-SXM-80GB (TP 1, fp8)'."""
        tp = f"TP {self.tp}" if self.tp else "TP not stated"
        precision = self.curve.key.precision or "precision not stated"
        return f"{self.engine} on {self.gpu} ({tp}, {precision})"


@dataclass(frozen=True, slots=True)
class Plan:
    """Options cheapest first (rejected ones last), the recommendation and plan-wide warnings."""

    scenario: Scenario
    options: tuple[Option, ...]
    recommendation: Recommendation
    warnings: tuple[str, ...]
    catalog_version: str
    prices_used: tuple[PriceEntry, ...]


def make_plan(
    scenario: Scenario,
    curves: Sequence[LoadCurve],
    prices: Sequence[PriceEntry],
    *,
    fitter: Callable[[LoadCurve], CurveFit] | None = None,
) -> Plan:
    """Size and price every candidate for the scenario and recommend the cheapest that fits.

    Each chosen curve's output tok/s is corrected by the shared shape of its sibling curves
    (planner.shapes, said in its flags). `fitter` replaces that fit (a bootstrap passes a cheap
    refit that keeps the point plan's shape; see planner.uncertainty).
    """
    candidates, warnings = select_curves(scenario, curves)
    if not candidates:
        raise PlanningError(_no_candidate_message(scenario, curves, warnings))
    price_by_gpu = {
        gpu: scenario_price(scenario, prices, gpu) for gpu in sorted({c.gpu for c in candidates})
    }
    fit = fitter or shaped_fitter(curves, [c.curve for c in candidates])
    options = [_option(scenario, c, price_by_gpu[c.gpu], fit(c.curve)) for c in candidates]
    if scenario.options.pricing_mode != "on_demand":
        warnings.extend(
            p.reserved_note
            for p in price_by_gpu.values()
            if p.reserved_note and p.reserved_usd_per_gpu_hour is None
        )
    options.sort(key=_sort_key)
    budget = scenario.budget.monthly_usd if scenario.budget else None
    used = tuple(
        entry
        for p in price_by_gpu.values()
        for entry in (p.entry, p.reserved_entry)
        if entry is not None
    )
    rec = recommend(
        options,
        budget,
        factors=scenario.factors,
        preference_tolerance_pct=scenario.factors.preference_tolerance_pct,
    )
    if rec.choice is None and warnings:
        # Nothing fits: what was never considered (too far a workload, no data) belongs in the
        # answer, not only in the warnings.
        rec = replace(rec, reason=f"{rec.reason} Not considered: {' '.join(warnings)}")
    return Plan(
        scenario=scenario,
        options=tuple(options),
        recommendation=rec,
        warnings=tuple(warnings),
        catalog_version=catalog_version(tuple(prices)),
        prices_used=used,
    )


def _sort_key(option: Option) -> tuple[int, float, int, int]:
    cost = option.total_monthly_cost_usd
    feasible = option.meets_sla and cost is not None
    return (
        0 if feasible else 1,
        cost if cost is not None else math.inf,
        option.gpus or 0,
        option.replicas or 0,
    )


def _no_candidate_message(
    scenario: Scenario, curves: Sequence[LoadCurve], warnings: list[str]
) -> str:
    wanted = canonical_model(scenario.model)
    models = sorted({canonical_model(c.key.model) for c in curves})
    if wanted not in models:
        known = ", ".join(models[:12]) or "none"
        return (
            f"no measured curve matches model {scenario.model!r} (compared as {wanted!r}); "
            f"models with curves: {known}. Import or probe runs for this model first"
        )
    detail = "; ".join(warnings[:6])
    return f"no curve for {scenario.model!r} fits the scenario's candidates: {detail}"


# --- one option -----------------------------------------------------------------------------


def _option(
    scenario: Scenario, candidate: Candidate, price: ScenarioPrice, fit: CurveFit
) -> Option:
    cap, cap_text = stream_cap(scenario, candidate)
    grid, throughput_lo = throughput_grid(fit, cap)
    checks = sla_checks(scenario, fit, grid, throughput_lo)
    flags = [*candidate.flags, *fit.curve.flags, *fit.flags]
    for check in checks:
        flags.extend(check.flags)
    base = _Base(scenario, candidate, fit, price, tuple(dict.fromkeys(flags)))
    unverifiable = [c for c in checks if c.values is None]
    gpus_per_node = scenario.options.gpus_per_node
    if candidate.gpus_per_replica > gpus_per_node:
        reason = (
            f"a replica needs {candidate.gpus_per_replica} GPUs, more than the "
            f"{gpus_per_node} GPUs of one node (a replica never spans nodes)"
        )
        return base.rejected(reason, ())
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
    ok = np.ones(grid.size, dtype=bool)
    for check in checks:
        ok &= check.holds()
    if not ok.any():
        failing = [c for c in checks if not c.holds().any()] or checks
        reason = "; ".join(never_holds_text(c, grid) for c in failing)
        return base.rejected(reason, tuple(c.name for c in failing))
    index = int(np.flatnonzero(ok)[-1])
    binding = binding_constraint(checks, index, grid.size, cap_text)
    return base.sized(float(grid[index]), float(throughput_lo[index]), binding)


@dataclass(frozen=True, slots=True)
class _Base:
    """What every Option of one candidate shares, whether it is sized or rejected."""

    scenario: Scenario
    candidate: Candidate
    fit: CurveFit
    price: ScenarioPrice
    flags: tuple[str, ...]

    def rejected(self, reason: str, failed: tuple[str, ...]) -> Option:
        """An option that cannot serve the scenario, with the reason (sizing fields None)."""
        curve = self.candidate.curve
        return Option(
            engine=self.candidate.engine,
            gpu=self.candidate.gpu,
            tp=self.candidate.tp,
            curve=curve,
            fit=self.fit,
            concurrency_per_replica=None,
            binding_constraint=None,
            output_tok_s_per_replica=None,
            replicas=None,
            gpus_per_replica=self.candidate.gpus_per_replica,
            gpus=None,
            replicas_per_node=self.scenario.options.gpus_per_node
            // self.candidate.gpus_per_replica,
            nodes=None,
            usd_per_gpu_hour=self.price.usd_per_gpu_hour,
            price_source=self.price.source,
            monthly_cost_usd=None,
            ops_cost_usd=0.0,
            total_monthly_cost_usd=None,
            monthly_output_tokens=None,
            usd_per_million_output_tokens=None,
            budget_capacity=None,
            budget_capacity_unit=self.scenario.demand.unit,
            meets_sla=False,
            within_budget=None,
            rejected_reason=reason,
            failed_targets=failed,
            flags=self.flags,
            notes=(),
            above_ceiling=bool(self.candidate.above_ceiling),
        )

    def sized(self, c_star: float, t_lo: float, binding: str) -> Option:
        """Replicas, nodes and cost at concurrency c_star with throughput t_lo per replica."""
        if t_lo <= 0:
            return self.rejected(f"throughput lower band is 0 at {c_star:g} streams", ())
        sc = self.scenario
        opts = sc.options
        serving, peak_tok_s, monthly_tokens = peak_demand(sc, c_star, t_lo)
        startup = startup_time(self.candidate.curve, opts)
        spec, peak_load = self._fleet_spec(c_star, t_lo, peak_tok_s, startup)
        static = static_cost(
            spec,
            serving + opts.redundancy_replicas,
            opts,
            reserved=opts.pricing_mode != "on_demand",
        )
        shape = demand_shape(sc.demand)
        fleet = static if opts.scaling == "static" else self._autoscaled(spec, peak_load, shape)
        autoscaled = opts.scaling == "autoscale"
        replicas = max(fleet.hourly_replicas)
        nodes = max(fleet.hourly_nodes)
        ops, ops_note = self._ops_cost()
        total = fleet.total_usd + ops
        budget = sc.budget.monthly_usd if sc.budget else None
        notes = [
            f"{c_star:g} concurrent streams per replica at {t_lo:,.0f} output tok/s "
            f"(lower band); peak demand {peak_tok_s:,.0f} output tok/s at "
            f"{opts.target_utilization:.0%} target utilisation needs {serving} replica(s) "
            f"+ {opts.redundancy_replicas} spare",
            f"{replicas} replica(s) x {self.candidate.gpus_per_replica} GPU(s), "
            f"{spec.replicas_per_node} per {opts.gpus_per_node}-GPU node -> {nodes} node(s)"
            + (" at the peak hour" if opts.scaling == "autoscale" else ""),
        ]
        if opts.scaling == "autoscale":
            notes.extend(autoscale_notes(opts, (fleet, static), shape, startup))
        notes.extend(note for note in (self._startup_note(),) if note and not autoscaled)
        if opts.pricing_mode != "on_demand":
            notes.append(pricing_note(opts, fleet, spec.prices, self.candidate.gpu))
            if self.price.reserved_usd_per_gpu_hour is not None and self.price.reserved_note:
                notes.append(self.price.reserved_note)  # where the reserved price came from
        if budget is not None and autoscaled:
            notes.append(
                f"budget capacity: the largest multiple of the demand (same daily shape) whose "
                f"autoscaled fleet, {opts.pricing_mode} pricing and operations cost fit "
                f"${budget:,.0f}/month"
            )
        notes.extend(note for note in (ops_note, self._memory_note(binding)) if note)
        return replace(
            self.rejected("", ()),
            concurrency_per_replica=c_star,
            binding_constraint=binding,
            output_tok_s_per_replica=t_lo,
            replicas=replicas,
            gpus=replicas * self.candidate.gpus_per_replica,
            nodes=nodes,
            monthly_cost_usd=fleet.total_usd,
            ops_cost_usd=ops,
            total_monthly_cost_usd=total,
            monthly_output_tokens=monthly_tokens,
            usd_per_million_output_tokens=total / (monthly_tokens / 1e6),
            budget_capacity=self._budget_capacity(budget, ops, (c_star, t_lo), (spec, peak_load)),
            meets_sla=True,
            within_budget=None if budget is None else total <= budget,
            rejected_reason=None,
            failed_targets=(),
            flags=self.flags + ((startup.text,) if autoscaled and startup.assumed else ()),
            notes=tuple(notes),
            above_ceiling=bool(self.candidate.above_ceiling),
            scaling=opts.scaling,
            pricing_mode=opts.pricing_mode,
            reserved_usd_per_gpu_hour=self.price.reserved_usd_per_gpu_hour,
            compute_on_demand_usd=fleet.on_demand_usd,
            compute_reserved_usd=fleet.reserved_usd,
            gpu_hours_per_month=fleet.gpu_hours,
            hourly_replicas=fleet.hourly_replicas,
            startup_s=startup.seconds if autoscaled else None,
            startup_assumed=autoscaled and startup.assumed,
            static_monthly_cost_usd=static.total_usd,
            autoscale_saving_usd=static.total_usd - fleet.total_usd if autoscaled else None,
        )

    def _fleet_spec(
        self, c_star: float, t_lo: float, peak_tok_s: float, startup: Startup
    ) -> tuple[FleetSpec, float]:
        """The option's fleet facts, and the peak load in the unit one replica's share uses."""
        opts = self.scenario.options
        streams = self.scenario.demand.kind == "peak_concurrent_streams"
        spec = FleetSpec(
            load_per_replica=(c_star if streams else t_lo) * opts.target_utilization,
            gpus_per_node=opts.gpus_per_node,
            replicas_per_node=opts.gpus_per_node // self.candidate.gpus_per_replica,
            startup_s=startup.seconds,
            prices=GpuPrices(self.price.usd_per_gpu_hour, self.price.reserved_usd_per_gpu_hour),
        )
        return spec, self.scenario.demand.amount if streams else peak_tok_s

    def _autoscaled(self, spec: FleetSpec, peak_load: float, shape: Shape) -> FleetCost:
        opts = self.scenario.options
        serving = hourly_replicas(spec, peak_load, shape.weights, 0)
        hourly = np.maximum(serving + opts.redundancy_replicas, opts.floor_replicas())
        return autoscaled_cost(spec, hourly, opts)

    def _memory_note(self, binding: str) -> str | None:
        memory = self.candidate.max_streams_memory
        if memory is None or not binding.startswith("memory"):
            return None
        return (
            f"memory limits a replica to {memory} streams: an estimate of KV-cache capacity "
            "from model and GPU specs (planner.physics), not a measurement"
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
        cost = updates * build_s / SECONDS_PER_HOUR * gpus * self.price.usd_per_gpu_hour
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
        kind (static or autoscaled) and pricing mode as the plan."""
        if budget is None:
            return None
        spec, peak_load = fleet
        opts = self.scenario.options
        if opts.scaling == "autoscale":
            shape = demand_shape(self.scenario.demand)
            cost_at = AutoscaleCostAt(spec, shape, peak_load, opts, ops)
            return budget_scale(budget, cost_at) * self.scenario.demand.amount
        price = spec.prices.on_demand
        if opts.pricing_mode != "on_demand" and spec.prices.reserved is not None:
            price = spec.prices.reserved  # a static fleet is always-on: reserved in both modes
        node_cost = opts.gpus_per_node * price * opts.hours_per_month
        nodes = math.floor(max(budget - ops, 0.0) / node_cost + 1e-12)
        serving = max(nodes * spec.replicas_per_node - opts.redundancy_replicas, 0)
        return serving_to_demand(self.scenario, serving, *operating)
