"""The recommendation in words: the cheapest option meeting the SLA and budget, or why none does."""

from __future__ import annotations

import pytest

from planner.capacity import make_plan
from planner.prices import load_catalog_csv
from planner.recommend import recommend

from .builders import scenario, seed_curves, silicon_curves

CATALOG = load_catalog_csv()


def test_the_choice_is_the_cheapest_option_meeting_sla_and_budget() -> None:
    sc = scenario(
        workload={"isl": 1024, "osl": 1024},
        sla={"tpot_p99_ms": 30},
        candidates={"gpus": ["H100-SXM-80GB", "H200-SXM-141GB"]},
        budget={"monthly_usd": 200_000},
    )
    plan = make_plan(sc, silicon_curves(), CATALOG)
    rec = plan.recommendation
    eligible = [o for o in plan.options if o.meets_sla and o.within_budget]
    assert rec.choice is not None and len(eligible) >= 2
    cheapest = min(o.total_monthly_cost_usd or 0 for o in eligible)
    assert rec.choice.total_monthly_cost_usd == cheapest
    assert rec.choice.title() in rec.reason and f"{rec.choice.replicas} replicas" in rec.reason
    assert rec.runner_up is not None and rec.runner_up.title() in rec.reason


def test_over_budget_names_the_cheapest_that_meets_the_sla() -> None:
    plan = make_plan(scenario(budget={"monthly_usd": 100}), seed_curves(), CATALOG)
    rec = plan.recommendation
    assert rec.choice is None
    assert "within the budget of $100/month" in rec.reason
    assert "tensorrt-llm on H100-SXM-80GB" in rec.reason


def test_when_nothing_meets_the_sla_each_option_says_which_target_fails() -> None:
    plan = make_plan(scenario(sla={"min_stream_tok_s": 500}), seed_curves(), CATALOG)
    rec = plan.recommendation
    assert rec.choice is None and rec.margin_usd is None
    for option in plan.options:
        assert option.title() in rec.reason
        assert option.rejected_reason is not None
        assert (
            "stream speed >= 500 tok/s fails at every measured concurrency"
            in option.rejected_reason
        )


def test_no_options_at_all() -> None:
    rec = recommend([], None)
    assert rec.choice is None and "no option" in rec.reason


def test_a_cost_gap_under_one_percent_goes_to_the_option_with_fewer_gpus() -> None:
    # Both fit one 8-GPU node; TensorRT-LLM adds 4 rebuilds x 840 s x $2.95/h = $2.75 a month.
    sc = scenario(options={"redundancy_replicas": 0, "model_updates_per_month": 4})
    plan = make_plan(sc, seed_curves(), CATALOG)
    rec = plan.recommendation
    assert rec.choice is not None and rec.runner_up is not None
    assert rec.choice.engine == "tensorrt-llm" and rec.runner_up.engine == "vllm"
    assert rec.margin_usd == pytest.approx(-4 * 840 / 3600 * 2.95)
    assert "$2.75 (0.02%) more than the runner-up" in rec.reason and "within 1%" in rec.reason
