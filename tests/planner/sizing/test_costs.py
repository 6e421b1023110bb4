"""The cost-model seam: today's rented-GPU models by hand, and a new model (owned GPUs, defined
here) that plans without any change to the sizing code."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from hardware.gpus import load_gpu_specs
from planner.analysis.capacity import make_plan
from planner.analysis.recommend import recommend
from planner.inputs.hourly import HOURS_PER_DAY
from planner.inputs.prices import ScenarioPrice, load_catalog_csv
from planner.inputs.scenario import OptionsSpec, PricingMode
from planner.sizing.costs import (
    CostLine,
    CostModel,
    Fleet,
    FleetCost,
    MixedGpus,
    OnDemandGpus,
    Packing,
    ReservedGpus,
    cost_model_for,
    node_month_usd,
)
from planner.sizing.options import SizedOption
from tests.planner.builders import scenario, seed_curves, trusted

CATALOG = load_catalog_csv()
PACKING = Packing(
    gpu="H100-SXM-80GB",
    gpus_per_replica=2,
    gpus_per_node=8,
    replicas_per_node=4,
    startup_s=1800.0,
    hours_per_month=730.0,
)
PRICE = ScenarioPrice(2.0, "test", None, reserved_usd_per_gpu_hour=1.5, reserved_note="test")
# 4 replicas (1 node) for 12 hours, 8 replicas (2 nodes) for 12: one rise a day.
DAY = np.array([4] * 12 + [8] * 12, dtype=np.int64)


def _fleet(hourly: np.ndarray = DAY) -> Fleet:
    return Fleet(PACKING, hourly)


def test_the_scenarios_pricing_mode_picks_the_cost_model() -> None:
    kinds = {mode: type(cost_model_for(OptionsSpec(pricing_mode=mode))) for mode in PricingMode}
    assert kinds == {
        PricingMode.ON_DEMAND: OnDemandGpus,
        PricingMode.RESERVED: ReservedGpus,
        PricingMode.MIX: MixedGpus,
    }
    assert [cost_model_for(OptionsSpec(pricing_mode=m)).name for m in PricingMode] == list(
        PricingMode
    )


def test_on_demand_pays_node_hours_and_half_an_hour_per_rise() -> None:
    cost = OnDemandGpus().fleet_cost(_fleet(), PRICE)
    node_hours_a_day = 12 * 1 + 12 * 2 + 1 * 0.5  # the rise warms one node for 30 minutes
    assert cost.total_usd == pytest.approx(node_hours_a_day / 24 * 8 * 2.0 * 730)
    assert cost.gpu_hours == pytest.approx(node_hours_a_day / 24 * 8 * 730)
    assert [line.name for line in cost.lines] == ["on-demand", "reserved"]
    assert cost.usd("reserved") == 0 and cost.notes == ()


def test_reserved_pays_the_peak_all_month_and_never_a_start_up() -> None:
    cost = ReservedGpus().fleet_cost(_fleet(), PRICE)
    assert cost.usd("reserved") == pytest.approx(2 * 8 * 1.5 * 730)
    assert cost.usd("on-demand") == 0
    assert "2 node(s) all month" in cost.notes[0]


def test_mix_reserves_the_quiet_hours_and_rents_the_peak() -> None:
    cost = MixedGpus().fleet_cost(_fleet(), PRICE)
    assert cost.usd("reserved") == pytest.approx(1 * 8 * 1.5 * 730)
    assert cost.usd("on-demand") == pytest.approx((12 + 0.5) / 24 * 8 * 2.0 * 730)


def test_without_a_reserved_price_every_model_rents_on_demand_and_says_so() -> None:
    bare = ScenarioPrice(2.0, "test", None, reserved_note="no reserved quote")
    on_demand = OnDemandGpus().fleet_cost(_fleet(), bare).total_usd
    for model in (ReservedGpus(), MixedGpus()):
        cost = model.fleet_cost(_fleet(), bare)
        assert cost.total_usd == pytest.approx(on_demand)
        assert "no reserved price for H100-SXM-80GB" in cost.notes[0]
        assert model.price_warnings(bare) == ("no reserved quote",)
    assert OnDemandGpus().price_warnings(bare) == ()


def test_a_node_for_a_month_is_its_gpus_times_the_price_times_the_hours() -> None:
    assert node_month_usd(OnDemandGpus(), PACKING, PRICE) == 8 * 2.0 * 730
    assert node_month_usd(ReservedGpus(), PACKING, PRICE) == 8 * 1.5 * 730
    assert node_month_usd(MixedGpus(), PACKING, PRICE) == 8 * 1.5 * 730


# --- a new cost model, defined here, plans without a change to planner.sizing.size ---------------


@dataclass(frozen=True)
class OwnedGpus(CostModel):
    """GPUs bought outright: the peak fleet's capex spread over `months`, plus the power the
    running GPUs draw (TDP x PUE) at a flat electricity price; idle GPUs are taken as off."""

    capex_usd_per_gpu: float
    months: int
    usd_per_kwh: float
    pue: float
    name: str = "owned"

    def fleet_cost(self, fleet: Fleet, price: ScenarioPrice) -> FleetCost:
        packing = fleet.packing
        owned_gpus = int(fleet.hourly_nodes.max()) * packing.gpus_per_node
        running_gpus = float(fleet.hourly_nodes.mean()) * packing.gpus_per_node
        gpu_hours = running_gpus * packing.hours_per_month
        tdp_kw = _tdp_w(packing.gpu) / 1000
        lines = (
            CostLine("capex", owned_gpus * self.capex_usd_per_gpu / self.months),
            CostLine("power", gpu_hours * tdp_kw * self.pue * self.usd_per_kwh),
        )
        note = f"{owned_gpus} GPUs owned, {self.months}-month amortisation"
        return FleetCost(lines, gpu_hours, (note,))


def _tdp_w(gpu: str) -> float:
    return next(spec.tdp_w for spec in load_gpu_specs() if spec.gpu == gpu)


OWNED = OwnedGpus(capex_usd_per_gpu=30_000, months=36, usd_per_kwh=0.12, pue=1.3)


def _sized(plan_options: object) -> dict[str, SizedOption]:
    assert isinstance(plan_options, tuple)
    return {o.engine: o for o in plan_options if isinstance(o, SizedOption)}


def test_owned_gpus_plan_the_same_fleet_and_price_it_as_capex_plus_power() -> None:
    sc = scenario(budget={"monthly_usd": 200_000}, options={"model_updates_per_month": 2})
    rented = _sized(make_plan(sc, seed_curves(), CATALOG).options)
    plan = make_plan(sc, seed_curves(), CATALOG, cost_model=OWNED)
    owned = _sized(plan.options)
    assert owned.keys() == rented.keys() == {"vllm", "tensorrt-llm"}
    for engine, option in owned.items():
        other = rented[engine]
        # Sizing does not depend on how the GPUs are paid for.
        assert (option.concurrency_per_replica, option.replicas, option.nodes) == (
            other.concurrency_per_replica,
            other.replicas,
            other.nodes,
        )
        gpus = option.nodes * 8
        capex = gpus * 30_000 / 36
        power = gpus * 730 * 0.700 * 1.3 * 0.12  # H100 TDP 700 W, every hour of a static fleet
        assert option.monthly_cost_usd == pytest.approx(capex + power)
        assert option.total_monthly_cost_usd == pytest.approx(capex + power + other.ops_cost_usd)
        assert option.pricing_mode == "owned"
        assert [line.name for line in option.cost.fleet.lines] == ["capex", "power"]
        assert f"{gpus} GPUs owned, 36-month amortisation" in option.notes
        # The budget buys whole owned nodes at the owned model's node cost.
        nodes = math.floor((200_000 - option.ops_cost_usd) / ((capex + power) / option.nodes))
        serving = nodes * option.replicas_per_node - 1
        assert option.budget_capacity == pytest.approx(
            serving * option.output_tok_s_per_replica * 0.8 / 500
        )
    # The recommendation compares owned costs (a 1% tie goes to fewer GPUs, then replicas);
    # the seed's table is taken at its word here (it is above one H100's ceilings).
    rec = recommend(trusted(plan.options), 200_000)
    choice = rec.choice
    assert choice is not None and choice.key in {o.key for o in owned.values()}
    cheapest = min(o.total_monthly_cost_usd for o in owned.values())
    assert choice.total_monthly_cost_usd <= cheapest * 1.01
    assert f"${choice.total_monthly_cost_usd:,.0f}/month" in rec.reason


def test_owned_gpus_autoscaled_pay_capex_for_the_peak_and_power_for_the_hours() -> None:
    day = [1, 1, 1, 1, 1, 2, 3, 5, 7, 8, 9, 10, 10, 9, 8, 8, 7, 6, 5, 4, 3, 2, 1, 1]
    sc = scenario(
        demand={"peak_requests_per_s": 20, "hourly_profile": day},
        options={"gpus_per_node": 1, "scaling": "autoscale"},
    )
    for option in _sized(make_plan(sc, seed_curves(), CATALOG, cost_model=OWNED).options).values():
        hourly = np.array(option.hourly_replicas)  # one GPU per node and per replica
        assert len(hourly) == HOURS_PER_DAY
        capex = hourly.max() * 30_000 / 36
        power = hourly.mean() * 730 * 0.700 * 1.3 * 0.12
        assert option.monthly_cost_usd == pytest.approx(capex + power)
        static = option.static_monthly_cost_usd
        assert static == pytest.approx(capex + option.replicas * 730 * 0.700 * 1.3 * 0.12)
        assert option.autoscale_saving_usd == pytest.approx(static - capex - power)
