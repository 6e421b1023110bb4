"""Autoscaled against static, for the plan's pick: the fleet an autoscaler runs hour by hour over
the day's traffic shape (its floor, spares and scale-up lead time), its GPU-hours and cost beside
the fleet sized for the peak all day, and the risk to the SLA it takes.

The plan bills an autoscaled fleet as if each rise were started one lead time ahead, on the
day's schedule: followed so, the SLA holds as planned. An autoscaler that reacts to the load it
sees instead starts replicas when the hour's load arrives, and serves that hour's first lead time
with the previous hour's replicas. The risk is said in those terms: the share of the day's
requests that arrive while the fleet is short, and how far past the load each replica was sized
for (its target utilisation) the short fleet runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner.analysis.capacity import Plan
from planner.analysis.horizon import Resizer, picked
from planner.fitting.families import Array
from planner.inputs.scenario import Scaling
from planner.sizing.costs import SECONDS_PER_HOUR
from planner.sizing.fleet import demand_shape
from planner.sizing.options import SizedOption

__all__ = ["ScalingView", "compare_scaling"]


@dataclass(frozen=True, slots=True)
class ScalingView:
    """The pick autoscaled and static, side by side."""

    autoscaled: SizedOption
    static: SizedOption
    lead_s: float  # a new replica's start-up (measured or assumed: see lead_text)
    lead_text: str
    target_utilization: float
    late_share: float  # of the day's requests, arriving while a reacting fleet is still short
    worst_load: float  # the short fleet's load per replica / the load it was sized for
    shape_note: str | None  # set when the daily shape was assumed

    @property
    def saving_usd(self) -> float:
        """What autoscaling saves a month against the static fleet (compute and operations)."""
        return self.static.total_monthly_cost_usd - self.autoscaled.total_monthly_cost_usd

    @property
    def over_capacity(self) -> bool:
        """True when, in the lag, the short fleet runs past what a replica can carry (the load
        it was sized for divided by the target utilisation)."""
        return self.worst_load * self.target_utilization > 1.0 + 1e-9

    def risk_text(self) -> str:
        """The SLA risk in one sentence."""
        if self.late_share == 0:
            return (
                "no hour needs more replicas than the one before: an autoscaler that reacts to "
                "load takes no risk the schedule does not"
            )
        edge = (
            "past what a replica can carry: the SLA is missed in those minutes"
            if self.over_capacity
            else "still within what a replica can carry"
        )
        return (
            f"followed on the day's schedule (replicas started {self.lead_s:,.0f} s ahead, as "
            f"billed), the SLA holds as planned; an autoscaler that reacts to load instead "
            f"serves the first {self.lead_s:,.0f} s of each rising hour with the hour before's "
            f"replicas: {self.late_share:.1%} of the day's requests, at up to "
            f"{self.worst_load:.2f}x the load each replica was sized for ({edge})"
        )


def compare_scaling(plan: Plan) -> ScalingView:
    """The pick autoscaled and static over the scenario's daily shape (NoHorizonError when
    the plan has no pick)."""
    pick = picked(plan)
    resize = Resizer(plan, pick)
    scenario = plan.scenario

    def sized(scaling: Scaling) -> SizedOption:
        if scenario.options.scaling is scaling:
            return pick
        options = scenario.options.model_copy(update={"scaling": scaling})
        return resize.size(scenario.model_copy(update={"options": options}))

    autoscaled, static = sized(Scaling.AUTOSCALE), sized(Scaling.STATIC)
    lead = autoscaled.startup
    lead_s = 0.0 if lead is None else lead.seconds  # an autoscaled option states its lead time
    shape = demand_shape(scenario.demand)
    late, worst = _reacting(autoscaled, shape.weights, lead_s)
    return ScalingView(
        autoscaled=autoscaled,
        static=static,
        lead_s=lead_s,
        lead_text="" if lead is None else lead.text,
        target_utilization=scenario.options.target_utilization,
        late_share=late,
        worst_load=worst,
        shape_note=shape.note,
    )


def _reacting(option: SizedOption, weights: Array, lead_s: float) -> tuple[float, float]:
    """(share of the day's requests in the lag of each rising hour, the worst ratio of the
    replicas an hour needs to the replicas it has in that lag)."""
    replicas = np.asarray(option.hourly_replicas, dtype=np.float64)
    before = np.roll(replicas, 1)
    rising = replicas > before
    lag = min(lead_s, SECONDS_PER_HOUR) / SECONDS_PER_HOUR
    total = float(np.sum(weights))
    late = float(np.sum(weights[rising]) * lag / total) if total > 0 else 0.0
    worst = float(np.max(replicas[rising] / before[rising])) if rising.any() else 1.0
    return late, worst
