"""A site's power limit as a constraint the plan chooses within: each sized option's peak fleet
in facility kW (nodes x the node's IT power x PUE x (1 + headroom)), so the recommendation
passes over what the site cannot host (planner.analysis.recommend), and says so.

The node's IT power is a run's measured watts per GPU at the option's sized load where its curve
has them (planner.analysis.measured_power), else TDP x the stated utilisation
(planner.analysis.owning.node_it_kw); the limit and the power assumptions are the scenario's
`horizon` fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from planner.analysis.measured_power import measured_power
from planner.analysis.owning import node_it_kw
from planner.inputs.horizon_spec import HorizonSpec
from planner.inputs.scenario import Scenario
from planner.sizing.nodes import node_shape
from planner.sizing.options import Option, SizedOption

__all__ = ["node_facility_kw", "with_power_limit"]


def node_facility_kw(option: SizedOption, scenario: Scenario, horizon: HorizonSpec) -> float:
    """What one node of the option takes from the site's limit, kW."""
    gpus = node_shape(scenario.options, option.gpu).gpus
    it_kw, _ = node_it_kw(option.gpu, gpus, horizon, measured_power(option))
    return it_kw * horizon.pue * (1.0 + horizon.power_headroom_pct / 100.0)


def with_power_limit(options: Sequence[Option], scenario: Scenario) -> list[Option]:
    """The options, each sized one carrying its peak facility kW and the site's limit when the
    scenario states a limit (unchanged otherwise)."""
    horizon = scenario.horizon
    if horizon is None or horizon.power_limit_kw is None:
        return list(options)
    limit = horizon.power_limit_kw
    return [
        replace(
            option,
            facility_kw=option.nodes * node_facility_kw(option, scenario, horizon),
            power_limit_kw=limit,
        )
        if isinstance(option, SizedOption)
        else option
        for option in options
    ]
