"""Hourly fleets: demand shapes, start-up lead times, autoscaling, reserved/mixed prices, budget."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from planner.analysis.capacity import make_plan
from planner.curves.load import LoadCurve
from planner.inputs.prices import load_catalog_csv
from planner.inputs.scenario import OptionsSpec
from planner.sizing.fleet import demand_shape, startup_time
from planner.sizing.options import Option
from tests.planner.builders import scenario, seed_curves

CATALOG = load_catalog_csv()
# A working day: quiet nights, a late-morning peak (relative weights, peak hour = 10).
DAY = [1, 1, 1, 1, 1, 2, 3, 5, 7, 8, 9, 10, 10, 9, 8, 8, 7, 6, 5, 4, 3, 2, 1, 1]
DAYS = 730 / 24


def _seed_with_startup() -> list[LoadCurve]:
    """The seed curves with the article's start-up times: vLLM cold start 18 s, TRT build 14 min."""
    vllm, trt = seed_curves()
    return [dataclasses.replace(vllm, cold_start_s=18.0), trt]


def _plan(**options: object) -> dict[str, Option]:
    sc = scenario(
        demand={"peak_requests_per_s": 20, "hourly_profile": DAY},
        options={"gpus_per_node": 1, **options},
    )
    return {o.engine: o for o in make_plan(sc, _seed_with_startup(), CATALOG).options}


def test_assumed_shape_has_one_peak_hour_and_the_stated_average() -> None:
    shape = demand_shape(scenario(demand={"peak_requests_per_s": 1, "peak_to_average": 2}).demand)
    assert shape.weights.max() == 1.0 and np.count_nonzero(shape.weights == 1.0) == 1
    assert shape.weights.mean() == pytest.approx(0.5)
    assert shape.note is not None and "assumed daily shape" in shape.note
    given = demand_shape(scenario(demand={"peak_requests_per_s": 1, "hourly_profile": DAY}).demand)
    assert given.note is None and given.weights.tolist() == [w / 10 for w in DAY]


def test_startup_is_measured_cold_start_plus_engine_build_unless_prebuilt() -> None:
    vllm, trt = _seed_with_startup()
    options = OptionsSpec()
    assert startup_time(vllm, options).seconds == 18.0
    built = startup_time(trt, options)
    assert (built.seconds, built.assumed) == (840.0, False)
    assert "cold start not measured: not counted" in built.text
    prebuilt = startup_time(trt, OptionsSpec(prebuilt_engines=True, startup_s_if_unknown=120))
    assert (prebuilt.seconds, prebuilt.assumed) == (120, True)
    assert "assumed 120 s" in prebuilt.text and "startup_s_if_unknown" in prebuilt.text


def test_autoscaled_replicas_follow_the_profile_with_spares_and_a_floor() -> None:
    for option in _plan(scaling="autoscale").values():
        t_lo = option.output_tok_s_per_replica
        assert t_lo is not None
        # 20 req/s x 500 tokens = 10,000 output tok/s at the peak hour, 80% utilisation.
        expected = [max(math.ceil(10_000 * w / 10 / (t_lo * 0.8) - 1e-9) + 1, 2) for w in DAY]
        assert list(option.hourly_replicas) == expected
        assert option.replicas == max(expected)


def test_autoscaled_cost_by_hand_bills_each_rise_for_its_start_up() -> None:
    options = _plan(scaling="autoscale")
    for option, startup_s in ((options["vllm"], 18.0), (options["tensorrt-llm"], 840.0)):
        hourly = np.array(option.hourly_replicas)
        rises = np.maximum(hourly - np.roll(hourly, 1), 0).sum()
        node_hours_a_day = hourly.sum() + rises * startup_s / 3600
        assert option.startup_s == startup_s
        assert option.monthly_cost_usd == pytest.approx(node_hours_a_day * 2.95 * DAYS)
        assert option.gpu_hours_per_month == pytest.approx(node_hours_a_day * DAYS)
        static, saving = option.static_monthly_cost_usd, option.autoscale_saving_usd
        assert static is not None and saving is not None and option.replicas is not None
        assert static == pytest.approx(option.replicas * 2.95 * 730)
        assert saving == pytest.approx(static - node_hours_a_day * 2.95 * DAYS)
        assert saving > 0
        assert any(
            "measured engine build 840 s" in n or "cold start 18 s" in n for n in option.notes
        )


def test_flat_demand_autoscaled_costs_exactly_the_static_fleet() -> None:
    for demand in (
        {"peak_requests_per_s": 20},
        {"peak_requests_per_s": 20, "hourly_profile": [3] * 24},
    ):
        sc = scenario(demand=demand, options={"gpus_per_node": 1})
        static = make_plan(sc, _seed_with_startup(), CATALOG).options
        auto_sc = scenario(demand=demand, options={"gpus_per_node": 1, "scaling": "autoscale"})
        auto = make_plan(auto_sc, _seed_with_startup(), CATALOG).options
        for a, s in zip(auto, static, strict=True):
            assert a.total_monthly_cost_usd == pytest.approx(s.total_monthly_cost_usd)
            assert a.autoscale_saving_usd == pytest.approx(0)


def test_without_a_profile_autoscaling_says_the_shape_is_assumed() -> None:
    sc = scenario(
        demand={"peak_requests_per_s": 20, "peak_to_average": 3},
        options={"gpus_per_node": 1, "scaling": "autoscale"},
    )
    for option in make_plan(sc, _seed_with_startup(), CATALOG).options:
        assert any("assumed daily shape" in note for note in option.notes)


def test_unknown_start_up_is_assumed_flagged_and_used() -> None:
    vllm, _ = seed_curves()  # the test builder's vLLM curve has no cold start
    sc = scenario(
        candidates={"engines": ["vllm"], "gpus": ["H100-SXM-80GB"]},
        demand={"peak_requests_per_s": 20, "hourly_profile": DAY},
        options={"gpus_per_node": 1, "scaling": "autoscale", "startup_s_if_unknown": 600},
    )
    (option,) = make_plan(sc, [vllm], CATALOG).options
    assert option.startup_s == 600 and option.startup_assumed
    assert any("assumed 600 s start-up" in flag for flag in option.flags)


def test_prebuilt_engines_take_the_build_out_of_the_scale_up_lead() -> None:
    built = _plan(scaling="autoscale")["tensorrt-llm"]
    prebuilt = _plan(scaling="autoscale", prebuilt_engines=True, startup_s_if_unknown=60)
    trt = prebuilt["tensorrt-llm"]
    assert trt.startup_s == 60 and trt.hourly_replicas == built.hourly_replicas
    assert trt.monthly_cost_usd is not None and built.monthly_cost_usd is not None
    assert trt.monthly_cost_usd < built.monthly_cost_usd


def test_min_replicas_raises_the_floor() -> None:
    for option in _plan(scaling="autoscale", min_replicas=4).values():
        assert min(option.hourly_replicas) == 4


def test_mix_reserves_the_always_on_baseline_and_buys_the_rest_on_demand() -> None:
    pricing = {"H100-SXM-80GB": {"on_demand": 2.95, "reserved": 1.85}}
    sc = scenario(
        demand={"peak_requests_per_s": 20, "hourly_profile": DAY},
        pricing=pricing,
        options={"gpus_per_node": 1, "scaling": "autoscale", "pricing_mode": "mix"},
    )
    plan = make_plan(sc, _seed_with_startup(), CATALOG)
    on_demand_plan = {o.engine: o for o in _plan(scaling="autoscale").values()}
    for option in plan.options:
        hourly = np.array(option.hourly_replicas)
        base = hourly.min()
        assert option.compute_reserved_usd == pytest.approx(base * 1.85 * 730)
        od, reserved = option.compute_on_demand_usd, option.compute_reserved_usd
        assert od is not None and reserved is not None
        assert option.monthly_cost_usd == pytest.approx(od + reserved)
        same_fleet = on_demand_plan[option.engine]
        assert same_fleet.monthly_cost_usd is not None and option.monthly_cost_usd is not None
        saved = same_fleet.monthly_cost_usd - option.monthly_cost_usd
        assert saved == pytest.approx(base * (2.95 - 1.85) * 730)
        assert option.reserved_usd_per_gpu_hour == 1.85
        assert "H100-SXM-80GB: reserved $1.85/GPU-hour from the scenario pricing" in option.notes
    assert not any("no reserved price" in w for w in plan.warnings)


def test_reserved_static_fleet_pays_the_reserved_price_every_hour() -> None:
    sc = scenario(
        pricing={"H100-SXM-80GB": {"on_demand": 2.95, "reserved": 1.85}},
        options={"gpus_per_node": 1, "pricing_mode": "reserved"},
    )
    for option in make_plan(sc, _seed_with_startup(), CATALOG).options:
        assert option.replicas is not None
        assert option.compute_reserved_usd == pytest.approx(option.replicas * 1.85 * 730)
        assert option.compute_on_demand_usd == 0


def test_no_reserved_price_in_the_catalog_falls_back_to_on_demand_and_says_so() -> None:
    on_demand = _plan()
    reserved = _plan(pricing_mode="reserved")
    for engine, option in reserved.items():
        assert option.reserved_usd_per_gpu_hour is None and option.compute_reserved_usd == 0
        assert option.total_monthly_cost_usd == on_demand[engine].total_monthly_cost_usd
        assert any("no reserved price for H100-SXM-80GB" in n for n in option.notes)
    sc = scenario(options={"pricing_mode": "mix"})
    warnings = make_plan(sc, _seed_with_startup(), CATALOG).warnings
    (warning,) = [w for w in warnings if "no reserved price" in w]
    assert "no discount invented" in warning and "CoreWeave $1.79 (reserved_1y)" in warning


def test_cost_per_million_tokens_uses_the_tokens_the_profile_serves() -> None:
    for option in _plan(scaling="autoscale").values():
        # Average = peak x mean/max of the profile: 10,000 tok/s x (113/24)/10.
        tokens = 10_000 * (sum(DAY) / 24 / 10) * 730 * 3600
        assert option.monthly_output_tokens == pytest.approx(tokens)
        assert option.total_monthly_cost_usd is not None
        assert option.usd_per_million_output_tokens == pytest.approx(
            option.total_monthly_cost_usd / (tokens / 1e6)
        )


@pytest.mark.parametrize("pricing_mode", ["on_demand", "mix"])
def test_autoscaled_budget_capacity_is_the_largest_demand_within_budget(pricing_mode: str) -> None:
    budget = 9_000.0
    pricing = {"H100-SXM-80GB": {"on_demand": 2.95, "reserved": 1.85}}
    options = {"gpus_per_node": 1, "scaling": "autoscale", "pricing_mode": pricing_mode}

    def plan_at(rate: float) -> dict[str, Option]:
        sc = scenario(
            demand={"peak_requests_per_s": rate, "hourly_profile": DAY},
            budget={"monthly_usd": budget},
            pricing=pricing,
            options=options,
        )
        return {o.engine: o for o in make_plan(sc, _seed_with_startup(), CATALOG).options}

    for engine, option in plan_at(20).items():
        capacity = option.budget_capacity
        assert capacity is not None and capacity > 0
        assert plan_at(capacity * (1 - 1e-6))[engine].within_budget is True
        assert plan_at(capacity * (1 + 1e-3))[engine].within_budget is False


def test_autoscaling_on_reserved_gpus_never_bills_a_start_up() -> None:
    # Reserved pricing keeps the peak fleet all month: nothing starts, nothing warms up.
    sc = scenario(
        demand={"peak_requests_per_s": 20, "hourly_profile": DAY},
        pricing={"H100-SXM-80GB": {"on_demand": 2.95, "reserved": 1.85}},
        options={"gpus_per_node": 1, "scaling": "autoscale", "pricing_mode": "reserved"},
    )
    for option in make_plan(sc, _seed_with_startup(), CATALOG).options:
        assert option.replicas is not None and option.compute_on_demand_usd == 0
        assert option.compute_reserved_usd == pytest.approx(option.replicas * 1.85 * 730)
        assert option.gpu_hours_per_month == pytest.approx(option.replicas * 730)
