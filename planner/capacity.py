"""Scenario + curves + prices -> one Option per engine x GPU x TP, and the Plan that ranks them.

SLA targets pick the concurrency per replica (never beyond the measured range, conservative side
of every band); demand and utilisation pick replicas; replicas pack whole nodes; nodes cost money.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from errors import PlanningError
from planner.curves import LoadCurve, canonical_model
from planner.fit import CurveFit, fit_curve
from planner.prices import PriceEntry, catalog_version, default_price
from planner.recommend import Recommendation, recommend
from planner.scenario import Scenario
from planner.selection import Candidate, select_curves
from planner.sla import binding_constraint, never_holds_text, sla_checks, throughput_grid

SECONDS_PER_HOUR = 3600.0


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


@dataclass(frozen=True, slots=True)
class _Price:
    usd_per_gpu_hour: float
    source: str
    entry: PriceEntry | None


def make_plan(
    scenario: Scenario, curves: Sequence[LoadCurve], prices: Sequence[PriceEntry]
) -> Plan:
    """Size and price every candidate for the scenario and recommend the cheapest that fits."""
    candidates, warnings = select_curves(scenario, curves)
    if not candidates:
        raise PlanningError(_no_candidate_message(scenario, curves, warnings))
    price_by_gpu = {gpu: _price(scenario, prices, gpu) for gpu in {c.gpu for c in candidates}}
    options = [_option(scenario, c, price_by_gpu[c.gpu]) for c in candidates]
    options.sort(key=_sort_key)
    budget = scenario.budget.monthly_usd if scenario.budget else None
    used = tuple(p.entry for p in price_by_gpu.values() if p.entry is not None)
    return Plan(
        scenario=scenario,
        options=tuple(options),
        recommendation=recommend(options, budget),
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


def _price(scenario: Scenario, prices: Sequence[PriceEntry], gpu: str) -> _Price:
    if gpu in scenario.pricing:
        return _Price(scenario.pricing[gpu], "scenario pricing", None)
    entry = default_price(tuple(prices), gpu)
    return _Price(entry.usd_per_gpu_hour, f"catalog default: {entry.describe()}", entry)


# --- one option -----------------------------------------------------------------------------


def _option(scenario: Scenario, candidate: Candidate, price: _Price) -> Option:
    fit = fit_curve(candidate.curve)
    cap = _stream_cap(scenario, candidate.curve)
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
            f"max {cap:g} streams per replica is below every measured concurrency"
            if cap is not None
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
    binding = binding_constraint(checks, index, grid.size, cap)
    return base.sized(float(grid[index]), float(throughput_lo[index]), binding)


def _stream_cap(scenario: Scenario, curve: LoadCurve) -> float | None:
    """The scenario's streams-per-replica cap when it cuts into the measured range."""
    cap = scenario.options.max_streams_per_replica
    if cap is None or cap >= max(curve.concurrencies()):
        return None
    return float(cap)


def _ceil(value: float) -> int:
    # Float noise (4.0000000001) must not buy a whole extra replica.
    return max(math.ceil(value - 1e-9), 0)


@dataclass(frozen=True, slots=True)
class _Base:
    """What every Option of one candidate shares, whether it is sized or rejected."""

    scenario: Scenario
    candidate: Candidate
    fit: CurveFit
    price: _Price
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
        )

    def sized(self, c_star: float, t_lo: float, binding: str) -> Option:
        """Replicas, nodes and cost at concurrency c_star with throughput t_lo per replica."""
        if t_lo <= 0:
            return self.rejected(f"throughput lower band is 0 at {c_star:g} streams", ())
        sc = self.scenario
        opts = sc.options
        serving, peak_tok_s, monthly_tokens = _demand(sc, c_star, t_lo)
        replicas = serving + opts.redundancy_replicas
        per_node = opts.gpus_per_node // self.candidate.gpus_per_replica
        nodes = _ceil(replicas / per_node)
        monthly = nodes * opts.gpus_per_node * self.price.usd_per_gpu_hour * opts.hours_per_month
        ops, ops_note = self._ops_cost()
        total = monthly + ops
        budget = sc.budget.monthly_usd if sc.budget else None
        notes = [
            f"{c_star:g} concurrent streams per replica at {t_lo:,.0f} output tok/s "
            f"(lower band); peak demand {peak_tok_s:,.0f} output tok/s at "
            f"{opts.target_utilization:.0%} target utilisation needs {serving} replica(s) "
            f"+ {opts.redundancy_replicas} spare",
            f"{replicas} replica(s) x {self.candidate.gpus_per_replica} GPU(s), "
            f"{per_node} per {opts.gpus_per_node}-GPU node -> {nodes} node(s)",
        ]
        notes.extend(note for note in (ops_note, self._startup_note()) if note)
        return replace(
            self.rejected("", ()),
            concurrency_per_replica=c_star,
            binding_constraint=binding,
            output_tok_s_per_replica=t_lo,
            replicas=replicas,
            gpus=replicas * self.candidate.gpus_per_replica,
            nodes=nodes,
            monthly_cost_usd=monthly,
            ops_cost_usd=ops,
            total_monthly_cost_usd=total,
            monthly_output_tokens=monthly_tokens,
            usd_per_million_output_tokens=total / (monthly_tokens / 1e6),
            budget_capacity=self._budget_capacity(budget, ops, c_star, t_lo),
            meets_sla=True,
            within_budget=None if budget is None else total <= budget,
            rejected_reason=None,
            failed_targets=(),
            notes=tuple(notes),
        )

    def _ops_cost(self) -> tuple[float, str | None]:
        updates = self.scenario.options.model_updates_per_month
        build_s = self.candidate.curve.engine_build_s
        if updates == 0:
            return 0.0, None
        if build_s is None:
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
        self, budget: float | None, ops: float, c_star: float, t_lo: float
    ) -> float | None:
        """Demand served within the budget, in the scenario's demand unit."""
        if budget is None:
            return None
        opts = self.scenario.options
        node_cost = opts.gpus_per_node * self.price.usd_per_gpu_hour * opts.hours_per_month
        nodes = math.floor(max(budget - ops, 0.0) / node_cost + 1e-12)
        per_node = opts.gpus_per_node // self.candidate.gpus_per_replica
        serving = max(nodes * per_node - opts.redundancy_replicas, 0)
        return _serving_to_demand(self.scenario, serving, c_star, t_lo)


def _demand(scenario: Scenario, c_star: float, t_lo: float) -> tuple[int, float, float]:
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


def _serving_to_demand(scenario: Scenario, serving: int, c_star: float, t_lo: float) -> float:
    demand, opts = scenario.demand, scenario.options
    u = opts.target_utilization
    peak_tok_s = serving * t_lo * u
    if demand.kind == "peak_concurrent_streams":
        return serving * c_star * u
    if demand.kind == "peak_requests_per_s":
        return peak_tok_s / scenario.workload.osl
    return peak_tok_s / demand.peak_to_average * opts.hours_per_month * SECONDS_PER_HOUR
