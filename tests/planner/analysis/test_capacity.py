"""make_plan: the seed article's arithmetic, SLA invariants, nodes, budget and cost by hand."""

from __future__ import annotations

import dataclasses
import math
import random
from typing import Any

import numpy as np
import pytest

from errors import PlanningError
from planner.analysis.capacity import make_plan
from planner.analysis.recommend import recommend
from planner.curves.load import CurveKey, CurvePoint, LoadCurve
from planner.inputs.prices import load_catalog_csv
from planner.sizing.draws import Draws
from planner.sizing.options import Option, RejectedOption, SizedOption
from planner.sizing.selection import select_curves
from tests.planner.builders import (
    SEED_VLLM,
    scenario,
    seed_curve,
    seed_curves,
    silicon_curves,
    trusted,
)

CATALOG = load_catalog_csv()
SILICON = silicon_curves()
# Every sample is the fitted curve itself: the plan's grid search, checked by hand on the fits.
FITTED = Draws(samples=1, noise_scale=0.0)


def _by_engine(options: tuple[Option, ...]) -> dict[str, Option]:
    return {option.engine: option for option in options}


def test_seed_article_trtllm_needs_fewer_replicas_and_is_recommended_with_a_margin() -> None:
    # 20 req/s x OSL 500 = 10,000 peak output tok/s; 40 tok/s per stream; GPUs billed one by one.
    plan = make_plan(scenario(options={"gpus_per_node": 1}), seed_curves(), CATALOG)
    options = _by_engine(plan.options)
    vllm, trt = options["vllm"], options["tensorrt-llm"]
    assert vllm.meets_sla and trt.meets_sla
    assert trt.replicas is not None and vllm.replicas is not None
    assert trt.replicas < vllm.replicas
    # The seed's ~27% throughput edge shows up per replica as well.
    assert trt.output_tok_s_per_replica is not None and vllm.output_tok_s_per_replica is not None
    assert trt.output_tok_s_per_replica / vllm.output_tok_s_per_replica > 1.2
    # The seed's table is above one H100's ceilings and states no workload: never the choice.
    assert plan.recommendation.choice is None and plan.recommendation.flagged is trt
    rec = recommend(trusted(plan.options), None)  # taken at its word, TensorRT-LLM wins
    assert rec.choice is not None and rec.runner_up is not None
    assert (rec.choice.engine, rec.runner_up.engine) == ("tensorrt-llm", "vllm")
    assert rec.margin_usd == pytest.approx(
        (vllm.replicas - trt.replicas) * 2.95 * 730 - trt.ops_cost_usd
    )
    assert rec.margin_pct is not None and rec.margin_pct > 0
    assert "less than the runner-up vllm" in rec.reason and f"${rec.margin_usd:,.0f}" in rec.reason
    assert "stream speed >= 40 tok/s" in rec.reason


def test_seed_article_on_8_gpu_nodes_ties_on_cost_and_keeps_the_smaller_fleet() -> None:
    plan = make_plan(scenario(), seed_curves(), CATALOG)
    options = _by_engine(plan.options)
    assert options["vllm"].nodes == options["tensorrt-llm"].nodes == 1
    rec = recommend(trusted(plan.options), None)
    assert rec.choice is not None and rec.choice.key == options["tensorrt-llm"].key
    assert "same cost as the runner-up" in rec.reason


def test_the_stream_speed_target_holds_at_the_chosen_concurrency_and_fails_just_above() -> None:
    plan = make_plan(scenario(), seed_curves(), CATALOG, draws=FITTED)
    for option in plan.options:
        fit = option.fit.throughput
        assert fit is not None and option.concurrency_per_replica is not None
        c = option.concurrency_per_replica
        here = float(fit.eval([c])[0])
        above = float(fit.eval([c + 1])[0])  # the grid's next step (1 stream over 32 levels)
        assert here / c >= 40 > above / (c + 1)
        assert option.output_tok_s_per_replica == pytest.approx(here)


def test_the_seed_articles_own_arithmetic_at_confidence_one_half() -> None:
    # The article: 10,000 output tok/s around the clock, every user >= 44 tok/s, no headroom and
    # no spares; vLLM reads 2,840 tok/s at 64 streams (44.4 tok/s each), so 10,000 / 2,840 ->
    # 4 replicas; TensorRT-LLM holds 44 tok/s past 64 streams (3,620 / 64 = 56.6) -> 3.
    sc = scenario(
        sla={"min_stream_tok_s": 44},
        options={
            "gpus_per_node": 1,
            "target_utilization": 1.0,
            "redundancy_replicas": 0,
            "sizing_confidence": 0.5,
        },
    )
    options = _by_engine(make_plan(sc, seed_curves(), CATALOG).options)
    vllm, trt = options["vllm"], options["tensorrt-llm"]
    assert isinstance(vllm, SizedOption) and isinstance(trt, SizedOption)
    assert (vllm.replicas, trt.replicas) == (4, 3)


def _value_at(option: Option, target: str, result: Any, c: float) -> float:
    """The fitted value at c, or where the series has no fit, the value measured at level c."""
    if result is not None:
        return float(result.eval([c])[0])
    point = next(p for p in option.curve.points if p.concurrency == c)
    names = {"ttft_p50_ms": "p50_ttft_ms", "ttft_p99_ms": "p99_ttft_ms", "tpot_p99_ms": "tpot_ms"}
    value = getattr(point, names[target]) or point.ttft_ms
    assert value is not None
    return float(value)


def _check_sla_at_c_star(option: Option, sla: dict[str, float], osl: int) -> None:
    """Independently re-evaluate every SLA target at c* on the fitted curves."""
    c = option.concurrency_per_replica
    assert c is not None
    fit = option.fit
    measured = [p.concurrency for p in option.curve.points if p.output_tok_s is not None]
    assert min(measured) <= c <= max(measured)
    tol = 1e-9
    assert fit.throughput is not None
    t_lo = float(fit.throughput.eval([c])[0])
    if "min_stream_tok_s" in sla:
        assert t_lo / c >= sla["min_stream_tok_s"] - tol
    # TTFT values of unstated statistic are one series (fit.ttft_p50) whichever target reads them.
    unstated = fit.ttft_p99_stat == "unstated" and fit.ttft_p50_stat == "unstated"
    ttft_p99 = fit.ttft_p50 if unstated else fit.ttft_p99
    for target, result in (
        ("ttft_p50_ms", fit.ttft_p50),
        ("ttft_p99_ms", ttft_p99),
        ("tpot_p99_ms", fit.tpot),
    ):
        if target in sla:
            assert _value_at(option, target, result, c) <= sla[target] + tol
    if "e2e_p99_ms" in sla:
        assert ttft_p99 is not None and fit.tpot is not None
        e2e = ttft_p99.eval([c])[0] + (osl - 1) * fit.tpot.eval([c])[0]
        assert e2e <= sla["e2e_p99_ms"] + tol


def test_every_plan_meets_its_sla_at_the_load_it_predicts() -> None:
    rng = random.Random(7)
    checked = 0
    for _ in range(30):
        isl, osl = rng.choice([(1024, 1024), (2048, 1024), (8192, 1024), (1024, 8192)])
        sla: dict[str, float] = {
            name: value
            for name, value in (
                ("ttft_p99_ms", rng.choice([300, 1000, 3000])),
                ("tpot_p99_ms", rng.choice([15, 25, 40])),
                ("min_stream_tok_s", rng.choice([20, 40, 60])),
                ("e2e_p99_ms", rng.choice([20_000, 60_000])),
            )
            if rng.random() < 0.6
        }
        demand = rng.choice(
            [
                {"peak_requests_per_s": rng.uniform(0.5, 50)},
                {"peak_concurrent_streams": rng.uniform(10, 5000)},
                {"monthly_output_tokens": rng.uniform(1e8, 1e11), "peak_to_average": 3},
            ]
        )
        sc = scenario(
            model="meta-llama/Llama-3.1-70B-Instruct",
            workload={"isl": isl, "osl": osl},
            demand=demand,
            sla=sla,
            candidates={"gpus": ["H100-SXM-80GB", "H200-SXM-141GB"]},
            options={"target_utilization": rng.uniform(0.5, 1.0), "redundancy_replicas": 1},
        )
        for option in make_plan(sc, SILICON, CATALOG, draws=FITTED).options:
            if option.meets_sla:
                _check_sla_at_c_star(option, sla, osl)
                checked += 1
    assert checked > 20


@pytest.mark.parametrize("gpus_per_node", [1, 2, 4, 8])
def test_replicas_never_span_nodes(gpus_per_node: int) -> None:
    sc = scenario(
        workload={"isl": 1024, "osl": 1024},
        demand={"peak_requests_per_s": 7},
        sla={"tpot_p99_ms": 40},
        candidates={"gpus": ["H100-SXM-80GB", "H200-SXM-141GB"]},
        options={"gpus_per_node": gpus_per_node},
    )
    plan = make_plan(sc, SILICON, CATALOG)
    for option in plan.options:
        if option.gpus_per_replica > gpus_per_node:
            assert isinstance(option, RejectedOption) and not option.meets_sla
            assert "never spans nodes" in option.reason
            continue
        if not isinstance(option, SizedOption):
            continue
        per_node = gpus_per_node // option.gpus_per_replica
        assert option.replicas_per_node == per_node
        assert option.replicas <= option.nodes * per_node
        assert option.replicas > (option.nodes - 1) * per_node  # no node bought for nothing


def test_budget_capacity_is_monotone_in_budget() -> None:
    budgets = [1_000, 5_000, 17_300, 17_400, 40_000, 90_000, 250_000]
    capacities: dict[str, list[float]] = {}
    for budget in budgets:
        sc = scenario(budget={"monthly_usd": budget}, options={"model_updates_per_month": 3})
        for option in make_plan(sc, seed_curves(), CATALOG).options:
            assert option.budget_capacity is not None
            capacities.setdefault(option.engine, []).append(option.budget_capacity)
    for series in capacities.values():
        assert series == sorted(series)
        assert series[0] == 0 and series[-1] > 0


def test_budget_capacity_in_streams_is_what_the_budget_buys() -> None:
    # $17,228 buys exactly one 8-GPU node at $2.95 x 730 h: 8 replicas, 1 spare, 7 serving.
    sc = scenario(demand={"peak_concurrent_streams": 100}, budget={"monthly_usd": 8 * 2.95 * 730})
    for option in make_plan(sc, seed_curves(), CATALOG).options:
        assert option.concurrency_per_replica is not None
        expected = 7 * option.concurrency_per_replica * 0.8
        assert option.budget_capacity == pytest.approx(expected)
        assert option.within_budget is True


def test_targets_the_curve_never_measured_fail_the_option() -> None:
    plan = make_plan(
        scenario(sla={"ttft_p99_ms": 300, "min_stream_tok_s": 40}), seed_curves(), CATALOG
    )
    for option in plan.options:
        assert isinstance(option, RejectedOption) and not option.meets_sla
        assert "cannot verify TTFT p99 <= 300 ms" in option.reason
        assert option.failed_targets == ("ttft_p99_ms",)
        assert not hasattr(option, "replicas") and not hasattr(option, "total_monthly_cost_usd")
    assert plan.recommendation.choice is None
    assert "no option meets the SLA" in plan.recommendation.reason


def test_p50_tpot_cannot_stand_in_for_a_p99_target() -> None:
    curve = seed_curve("vllm", (68.2, 1010.0, 2840.0, 3710.0))
    points = tuple(
        CurvePoint(p.concurrency, output_tok_s=p.output_tok_s, p50_tpot_ms=10 + p.concurrency / 10)
        for p in curve.points
    )
    from dataclasses import replace

    plan = make_plan(scenario(sla={"tpot_p99_ms": 50}), [replace(curve, points=points)], CATALOG)
    (option,) = plan.options
    assert isinstance(option, RejectedOption) and not option.meets_sla
    assert "only p50 values were measured, not p99" in option.reason


def test_cost_per_million_tokens_by_hand() -> None:
    # 20 req/s x 500 tokens = 10,000 tok/s at peak; peak/average 2 -> 5,000 tok/s on average;
    # 5,000 x 730 h x 3,600 s = 13.14e9 tokens a month.
    sc = scenario(demand={"peak_requests_per_s": 20, "peak_to_average": 2})
    plan = make_plan(sc, seed_curves(), CATALOG)
    for option in plan.options:
        assert option.monthly_output_tokens == pytest.approx(13.14e9)
        assert option.nodes is not None
        monthly = option.nodes * 8 * 2.95 * 730
        assert option.monthly_cost_usd == pytest.approx(monthly)
        assert option.usd_per_million_output_tokens == pytest.approx(monthly / 13_140)


def test_engine_rebuild_cost_by_hand() -> None:
    # 14-minute TensorRT-LLM build (840 s), 2 model updates a month, 1 GPU at $2.95/h.
    plan = make_plan(scenario(options={"model_updates_per_month": 2}), seed_curves(), CATALOG)
    options = _by_engine(plan.options)
    assert options["tensorrt-llm"].ops_cost_usd == pytest.approx(2 * 840 / 3600 * 1 * 2.95)
    assert options["vllm"].ops_cost_usd == 0
    assert any("no engine build" in note for note in options["vllm"].notes)


def test_demand_in_streams_and_in_monthly_tokens() -> None:
    streams = make_plan(scenario(demand={"peak_concurrent_streams": 500}), seed_curves(), CATALOG)
    for option in streams.options:
        assert option.concurrency_per_replica is not None and option.replicas is not None
        assert option.replicas == math.ceil(500 / (option.concurrency_per_replica * 0.8)) + 1
    monthly = make_plan(
        scenario(demand={"monthly_output_tokens": 2.628e10, "peak_to_average": 1.5}),
        seed_curves(),
        CATALOG,
    )
    for option in monthly.options:
        # 2.628e10 / (730 x 3600) = 10,000 tok/s average, 15,000 at peak.
        assert option.output_tok_s_per_replica is not None and option.replicas is not None
        assert option.replicas == math.ceil(15_000 / (option.output_tok_s_per_replica * 0.8)) + 1
        assert option.monthly_output_tokens == 2.628e10


def test_no_curve_for_the_model_is_a_planning_error_naming_it() -> None:
    with pytest.raises(PlanningError, match="Mixtral-8x7B") as info:
        make_plan(scenario(model="mistralai/Mixtral-8x7B"), seed_curves(), CATALOG)
    assert "llama-3.1-70b" in str(info.value)


def test_scenario_prices_override_the_catalog_and_defaults_fill_the_rest() -> None:
    sc = scenario(pricing={}, candidates={"gpus": ["H100-SXM-80GB"]})
    (option, _) = make_plan(sc, seed_curves(), CATALOG).options
    assert option.usd_per_gpu_hour == 2.95 and option.price_source.startswith("catalog default")
    sc = scenario(pricing={"H100-SXM-80GB": 2.0})
    (option, _) = make_plan(sc, seed_curves(), CATALOG).options
    assert option.usd_per_gpu_hour == 2.0
    assert option.price_source.startswith("scenario pricing (typed; catalog default $2.95")
    # A typed price equal to a catalog quote cites that quote (source and as-of date kept).
    sc = scenario(pricing={"H100-SXM-80GB": 2.95})
    plan = make_plan(sc, seed_curves(), CATALOG)
    assert plan.options[0].price_source.startswith("scenario pricing, the catalog's")
    assert [entry.usd_per_gpu_hour for entry in plan.prices_used] == [2.95]


def test_plan_over_the_whole_silicon_sample_ranks_options_by_cost() -> None:
    # Speed is measured in bench/bench_plan_latency.py, not asserted here.
    sc = scenario(
        workload={"isl": 1024, "osl": 1024},
        sla={"ttft_p99_ms": 1000, "tpot_p99_ms": 30},
        candidates={"gpus": ["H100-SXM-80GB", "H200-SXM-141GB"]},
    )
    curves = [*SILICON, *seed_curves()]
    assert len(curves) >= 150
    plan = make_plan(sc, curves, CATALOG)
    assert len(plan.options) >= 8
    costs = [o.total_monthly_cost_usd or 0.0 for o in plan.options if o.meets_sla]
    assert costs == sorted(costs)
    assert np.all([o.meets_sla for o in plan.options[: len(costs)]])


def test_loose_sla_stops_at_the_top_of_the_measured_range() -> None:
    plan = make_plan(scenario(sla={"min_stream_tok_s": 1}), seed_curves(), CATALOG)
    for option in plan.options:
        assert option.concurrency_per_replica == 128  # never beyond the highest measured level
        assert option.binding_constraint == "measured range"
    assert (
        "up to 128 streams per replica (limited by its highest measured concurrency)"
        in recommend(trusted(plan.options), None).reason
    )


def test_e2e_target_without_e2e_data_is_estimated_from_ttft_and_tpot_with_a_flag() -> None:
    sc = scenario(
        workload={"isl": 1024, "osl": 1024},
        sla={"e2e_p99_ms": 40_000},
        candidates={"engines": ["tensorrt-llm"], "gpus": ["H200-SXM-141GB"], "tp": [4]},
    )
    (option,) = make_plan(sc, SILICON, CATALOG).options
    assert option.meets_sla
    estimated = "estimated from TTFT of unstated statistic and TPOT of unstated statistic"
    assert any(estimated in f and "TTFT + (OSL - 1) x TPOT" in f for f in option.flags)
    assert any("statistic the source did not state" in f for f in option.flags)


def test_stream_cap_reproduces_the_seed_articles_64_stream_arithmetic() -> None:
    # The article compares engines at 64 streams (2,840 vs 3,620 tok/s: +27%); capping
    # max streams per replica at 64 makes the planner size both at that operating point.
    sc = scenario(sla={}, options={"max_streams_per_replica": 64, "redundancy_replicas": 0})
    options = _by_engine(make_plan(sc, seed_curves(), CATALOG).options)
    vllm, trt = options["vllm"], options["tensorrt-llm"]
    assert vllm.concurrency_per_replica == trt.concurrency_per_replica == 64
    assert trt.binding_constraint == vllm.binding_constraint == "max 64 streams per replica"
    assert trt.output_tok_s_per_replica is not None and vllm.output_tok_s_per_replica is not None
    assert vllm.output_tok_s_per_replica < 2840 and trt.output_tok_s_per_replica < 3620
    assert trt.replicas is not None and vllm.replicas is not None
    assert trt.replicas < vllm.replicas


def test_stream_cap_below_every_measured_level_rejects_the_option() -> None:
    full = seed_curve("vllm", (68.2, 1010, 2840, 3710))  # measured at 1, 16, 64, 128 streams
    curve = dataclasses.replace(full, points=full.points[1:])  # lowest level now 16 streams
    sc = scenario(sla={}, options={"max_streams_per_replica": 8})
    (option,) = make_plan(sc, [curve], CATALOG).options
    assert isinstance(option, RejectedOption) and not option.meets_sla
    assert option.reason == "max 8 streams per replica is below every measured concurrency"


def test_curves_with_a_stated_workload_win_over_unstated_ones_for_the_same_engine_and_gpu() -> None:
    sc = scenario(workload={"isl": 1024, "osl": 1024}, sla={})
    plan = make_plan(sc, [*SILICON, *seed_curves()], CATALOG)
    vllm_h100 = [o for o in plan.options if o.engine == "vllm" and o.gpu == "H100-SXM-80GB"]
    assert vllm_h100 and all(o.curve.key.isl == 1024 for o in vllm_h100)
    assert any("workload not stated by source, and the same engine" in w for w in plan.warnings)
    # TensorRT-LLM on H100 was only measured by the article: its unstated curve stays, flagged.
    trt_h100 = [o for o in plan.options if o.engine == "tensorrt-llm" and o.gpu == "H100-SXM-80GB"]
    assert [o.curve.key.isl for o in trt_h100] == [None]
    assert "workload not stated by source" in trt_h100[0].flags


def _with_memory(monkeypatch: pytest.MonkeyPatch, streams: int) -> None:
    """Make selection report `streams` as every candidate's KV-cache estimate."""
    from planner.analysis import capacity

    def select(sc: object, curves: object) -> tuple[list[object], list[str]]:
        candidates, warnings = select_curves(sc, curves)  # type: ignore[arg-type]
        return [dataclasses.replace(c, max_streams_memory=streams) for c in candidates], warnings

    monkeypatch.setattr(capacity, "select_curves", select)


def _vllm_seed(provenance: str = "published", key: CurveKey | None = None) -> list[LoadCurve]:
    curve = seed_curve("vllm", SEED_VLLM)
    return [dataclasses.replace(curve, provenance=provenance, key=key or curve.key)]


def test_memory_caps_streams_on_estimated_curves_and_is_named_as_binding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _with_memory(monkeypatch, 50)
    sc = scenario(sla={"min_stream_tok_s": 1})  # loose: the top of the data binds otherwise
    (option,) = make_plan(sc, _vllm_seed(provenance="adjusted"), CATALOG).options
    assert option.concurrency_per_replica == 50
    assert option.binding_constraint == "memory (KV cache for 50 streams of 1000+500 tokens)"
    assert any("an estimate of KV-cache capacity" in note for note in option.notes)
    # Measured with fewer tokens per stream (950+480 < 1000+500): the measurement does not cover it.
    key = dataclasses.replace(seed_curve("vllm", SEED_VLLM).key, isl=950, osl=480)
    (shorter,) = make_plan(sc, _vllm_seed(key=key), CATALOG).options
    assert shorter.concurrency_per_replica == 50


def test_a_measurement_at_the_scenarios_length_beats_the_memory_estimate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _with_memory(monkeypatch, 50)
    sc = scenario(sla={"min_stream_tok_s": 1})
    key = dataclasses.replace(seed_curve("vllm", SEED_VLLM).key, isl=1000, osl=500)
    for curves in (_vllm_seed(key=key), _vllm_seed()):  # stated equal, and unstated workload
        (option,) = make_plan(sc, curves, CATALOG).options
        assert option.concurrency_per_replica == 128
        assert option.binding_constraint == "measured range"


def test_the_tighter_of_memory_and_the_stream_cap_binds(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_memory(monkeypatch, 50)
    curves = _vllm_seed(provenance="projected")
    sc = scenario(sla={"min_stream_tok_s": 1}, options={"max_streams_per_replica": 30})
    (option,) = make_plan(sc, curves, CATALOG).options
    assert option.binding_constraint == "max 30 streams per replica"
    sc = scenario(sla={"min_stream_tok_s": 1}, options={"max_streams_per_replica": 90})
    (option,) = make_plan(sc, curves, CATALOG).options
    assert option.concurrency_per_replica == 50
    assert (option.binding_constraint or "").startswith("memory")


def test_no_memory_for_any_measured_level_rejects_the_option(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _with_memory(monkeypatch, 0)
    (option,) = make_plan(scenario(), _vllm_seed(provenance="adjusted"), CATALOG).options
    assert isinstance(option, RejectedOption) and not option.meets_sla
    assert option.reason == (
        "memory (KV cache for 0 streams of 1000+500 tokens) is below every measured concurrency"
    )
