"""The recommendation in words: the cheapest option meeting the SLA and budget, or why none does."""

from __future__ import annotations

import dataclasses
import math

import pytest

from measurements.demo.runs import demo_runs
from planner.analysis.capacity import make_plan
from planner.analysis.factors import factor_notes
from planner.analysis.recommend import Recommendation, Verdict, binding_in_words, recommend
from planner.curves.load import curve_from_run
from planner.inputs.prices import load_catalog_csv
from planner.inputs.scenario import BudgetSpec, FactorsSpec, load_scenario
from planner.sizing.options import Option, RejectedOption
from tests.planner.builders import ROOT, scenario, seed_curves, silicon_curves, trusted

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


def test_over_budget_on_flagged_data_only_is_said_as_data_not_sound() -> None:
    # Only the seed article's flagged TensorRT-LLM curve meets the SLA: the binding reason is
    # the data (checked before the budget), and the budget is still named.
    plan = make_plan(scenario(budget={"monthly_usd": 100}), seed_curves(), CATALOG)
    rec = plan.recommendation
    assert rec.choice is None and rec.verdict is Verdict.NOT_SOUND
    assert rec.flagged is not None and rec.over_budget is None
    assert "tensorrt-llm on H100-SXM-80GB" in rec.reason and "over the $100 budget" in rec.reason


def test_when_nothing_meets_the_sla_each_option_says_which_target_fails() -> None:
    plan = make_plan(scenario(sla={"min_stream_tok_s": 500}), seed_curves(), CATALOG)
    rec = plan.recommendation
    assert rec.choice is None and rec.margin_usd is None
    for option in plan.options:
        assert option.title() in rec.reason
        assert isinstance(option, RejectedOption)
        assert "stream speed >= 500 tok/s fails at every measured concurrency" in option.reason


def test_no_options_at_all() -> None:
    rec = recommend([], None)
    assert rec.choice is None and "no option" in rec.reason


def test_a_cost_gap_under_one_percent_goes_to_the_option_with_fewer_gpus() -> None:
    # Both fit one 8-GPU node; TensorRT-LLM adds 4 rebuilds x 840 s x $2.95/h = $2.75 a month.
    sc = scenario(options={"redundancy_replicas": 0, "model_updates_per_month": 4})
    plan = make_plan(sc, seed_curves(), CATALOG)
    rec = recommend(trusted(plan.options), None)
    assert rec.choice is not None and rec.runner_up is not None
    assert rec.choice.engine == "tensorrt-llm" and rec.runner_up.engine == "vllm"
    assert rec.margin_usd == pytest.approx(-4 * 840 / 3600 * 2.95)
    assert "$2.75 (0.02%) more than the runner-up" in rec.reason and "within 1%" in rec.reason


# --- factors and plain words ------------------------------------------------------------------

SILICON_SCENARIO = scenario(
    workload={"isl": 1024, "osl": 1024},
    sla={"tpot_p99_ms": 30, "ttft_p99_ms": 1000},
    candidates={"gpus": ["H100-SXM-80GB", "H200-SXM-141GB"]},
    budget={"monthly_usd": 200_000},
)
SILICON_PLAN = make_plan(SILICON_SCENARIO, silicon_curves(), CATALOG)
SEED_PLAN = make_plan(scenario(options={"gpus_per_node": 1}), seed_curves(), CATALOG)
SEED_OPTIONS = trusted(SEED_PLAN.options)  # the seed's table taken at its word


def _silicon(factors: FactorsSpec | None, **kwargs: float) -> Recommendation:
    return recommend(SILICON_PLAN.options, 200_000, factors=factors, **kwargs)


def _cost(option: Option | None) -> float:
    assert option is not None and option.total_monthly_cost_usd is not None
    return option.total_monthly_cost_usd


def _silicon_premium() -> tuple[Option, Option, float, float]:
    """Cheapest option (TensorRT-LLM on the silicon sample), cheapest vLLM, $ and % premium."""
    cheapest = _silicon(None).choice
    vllm_only = [o for o in SILICON_PLAN.options if o.engine == "vllm"]
    best_vllm = recommend(vllm_only, 200_000).choice
    assert cheapest is not None and best_vllm is not None
    premium = _cost(best_vllm) - _cost(cheapest)
    return cheapest, best_vllm, premium, 100 * premium / _cost(cheapest)


def test_factors_left_unset_change_nothing() -> None:
    for plan, budget in ((SILICON_PLAN, 200_000.0), (SEED_PLAN, None)):
        before = recommend(plan.options, budget)
        after = recommend(plan.options, budget, factors=FactorsSpec())
        assert after.choice is before.choice and after.runner_up is before.runner_up
        assert after.reason == before.reason and after.margin_usd == before.margin_usd
        assert after.factors_applied == () and after.overridden_cheapest is None


def test_multi_lora_switches_to_vllm_when_its_premium_is_within_the_tolerance() -> None:
    cheapest, best_vllm, premium, pct = _silicon_premium()
    assert cheapest.engine == "tensorrt-llm" and premium > 0
    tolerance = math.ceil(pct)
    rec = _silicon(FactorsSpec(multi_lora=True), preference_tolerance_pct=tolerance)
    assert rec.choice is best_vllm and rec.preference_tolerance_pct == tolerance
    assert rec.overridden_cheapest is cheapest and rec.runner_up is cheapest
    assert rec.margin_usd == pytest.approx(-premium)
    assert (
        f"although {cheapest.title()} is ${premium:,.0f}/month cheaper (vLLM costs {pct:.1f}% "
        f"more, within the {tolerance}% tolerance for a preferred engine), because multi-LoRA "
        "is required (seed article: vLLM switches LoRA adapters natively" in rec.reason
    )
    assert rec.factors_applied[0].startswith(f"recommended {best_vllm.title()}")


def test_multi_lora_beyond_the_tolerance_keeps_the_cheapest_and_states_the_trade_off() -> None:
    cheapest, best_vllm, premium, pct = _silicon_premium()
    tolerance = math.ceil(pct) - 1
    rec = _silicon(FactorsSpec(multi_lora=True), preference_tolerance_pct=tolerance)
    assert rec.choice is cheapest and rec.overridden_cheapest is None
    assert (
        f"the cheapest vLLM option, {best_vllm.title()}, costs ${premium:,.0f}/month "
        f"({pct:.1f}%) more, beyond the {tolerance}% tolerance" in rec.reason
    )
    assert f"a tolerance of {math.ceil(pct)}% would switch" in rec.reason
    # The seed article's numbers at 90% confidence: vLLM needs 6 GPUs to TensorRT-LLM's 4.
    seed = recommend(SEED_OPTIONS, None, factors=FactorsSpec(multi_lora=True))
    assert seed.choice is not None and seed.choice.engine == "tensorrt-llm"
    assert seed.preference_tolerance_pct == 15.0
    assert "costs $4,307/month (50.0%) more, beyond the 15% tolerance" in seed.reason


def test_weekly_model_changes_prefer_vllm_and_price_the_trtllm_rebuilds() -> None:
    assert (
        _silicon(FactorsSpec(weekly_model_changes=True)).choice
        is _silicon(FactorsSpec(multi_lora=True)).choice
    )
    rec = recommend(SEED_OPTIONS, None, factors=FactorsSpec(weekly_model_changes=True))
    # 52/12 builds x 840 s x 1 GPU x $2.95/h = $2.98/month; the plan counted 0 updates.
    assert "each change waits for a 14-minute engine build before serving" in rec.reason
    assert "cost an estimated $2.98/month, the plan counts $0.00/month" in rec.reason
    assert "set model_updates_per_month to 4.33 to price them" in rec.reason
    priced = make_plan(
        scenario(options={"gpus_per_node": 1, "model_updates_per_month": 52 / 12}),
        seed_curves(),
        CATALOG,
    )
    rec = recommend(trusted(priced.options), None, factors=FactorsSpec(weekly_model_changes=True))
    assert "the plan counts $2.98/month (seed article" in rec.reason


def test_weekly_model_changes_on_vllm_say_no_build_and_an_unmeasured_start() -> None:
    vllm = next(o for o in SEED_PLAN.options if o.engine == "vllm")
    (note,) = factor_notes(vllm, FactorsSpec(weekly_model_changes=True))
    assert "needs no engine build per change (start not measured here" in note
    assert "18 s start" in note  # the seed article's number, cited as such


def test_structured_output_is_annotated_as_not_checked_without_changing_the_choice() -> None:
    rec = _silicon(FactorsSpec(structured_output=True))
    assert rec.choice is _silicon(None).choice and rec.overridden_cheapest is None
    (note,) = rec.factors_applied
    assert note.startswith("structured output: not checked on this run")
    assert "TensorRT-LLM needs C++ plugins or a proxy such as LiteLLM" in rec.reason


def test_consumer_gpus_say_a_second_engine_is_needed_only_with_trtllm() -> None:
    rec = _silicon(FactorsSpec(consumer_gpus=True))
    assert rec.choice is _silicon(None).choice
    assert "the consumer cards would need a second engine (vLLM)" in rec.reason
    both = _silicon(FactorsSpec(consumer_gpus=True, multi_lora=True), preference_tolerance_pct=100)
    assert both.choice is not None and both.choice.engine == "vllm"
    assert "vLLM also runs on the consumer cards, one engine for both" in both.reason


def test_a_preference_without_a_feasible_vllm_option_says_so() -> None:
    plan = make_plan(scenario(candidates={"engines": ["tensorrt-llm"]}), seed_curves(), CATALOG)
    rec = recommend(trusted(plan.options), None, factors=FactorsSpec(multi_lora=True))
    assert rec.choice is not None and rec.choice.engine == "tensorrt-llm"
    assert "no vLLM option meets the SLA and budget" in rec.reason


def test_multi_lora_with_vllm_already_cheapest_only_annotates() -> None:
    plan = make_plan(scenario(candidates={"engines": ["vllm"]}), seed_curves(), CATALOG)
    rec = recommend(trusted(plan.options), None, factors=FactorsSpec(multi_lora=True))
    assert rec.overridden_cheapest is None
    assert rec.factors_applied == (
        "multi-LoRA: vLLM switches adapters natively (seed article: vLLM switches LoRA "
        "adapters natively with Punica kernels; TensorRT-LLM needs a complex runtime reload)",
    )


def test_binding_constraints_in_plain_words_with_their_numbers() -> None:
    tpot = next(o for o in SILICON_PLAN.options if o.binding_constraint == "TPOT p99 <= 30 ms")
    assert binding_in_words(tpot) == (
        "The p99 time per output token target (TPOT p99 <= 30 ms) is reached at "
        f"{tpot.concurrency_per_replica:g} streams per replica."
    )
    rec = recommend([tpot], None)
    assert rec.binding_text == binding_in_words(tpot)
    assert "(limited by the p99 time per output token target (TPOT p99 <= 30 ms))" in rec.reason
    ttft = next(o for o in SILICON_PLAN.options if o.binding_constraint == "TTFT p99 <= 1000 ms")
    text = binding_in_words(ttft)
    assert text is not None and text.startswith(
        "The p99 time to first token target (TTFT p99 <= 1000 ms) is reached at "
    )
    memory = dataclasses.replace(
        ttft, binding_constraint="memory (KV cache for 40 streams of 2048 tokens)"
    )
    assert binding_in_words(memory) == (
        f"The GPU memory estimate (KV cache for 40 streams of 2048 tokens) is reached at "
        f"{ttft.concurrency_per_replica:g} streams per replica."
    )
    top = next(o for o in SILICON_PLAN.options if o.binding_constraint == "measured range")
    assert "its highest measured concurrency" in (binding_in_words(top) or "")


def test_the_budget_is_named_when_it_binds_and_its_use_when_it_does_not() -> None:
    tight = SILICON_SCENARIO.model_copy(update={"budget": BudgetSpec(monthly_usd=100)})
    over = make_plan(tight, silicon_curves(), CATALOG)
    assert over.recommendation.verdict is Verdict.OVER_BUDGET
    assert over.recommendation.binding_text is not None
    assert over.recommendation.binding_text.startswith("The monthly budget ($100) is below")
    rec = _silicon(None)
    used = _cost(rec.choice)
    assert f"It uses ${used:,.0f} of the $200,000/month budget ({used / 2000:.0f}%)." in rec.reason


def test_data_above_a_physical_ceiling_is_passed_over_when_sound_data_fits() -> None:
    # The seed article's TensorRT-LLM curve claims 81.4 tok/s per stream on one H100 for a 70B
    # FP8 model (ceiling 48.2): cheaper on paper, but never recommended over sound data.
    curves = [c for c in (curve_from_run(r, i) for i, r in enumerate(demo_runs())) if c]
    agent = load_scenario(ROOT / "docs" / "scenarios" / "agent-platform.yaml")
    loose = agent.model_copy(update={"sla": agent.sla.model_copy(update={"tpot_p99_ms": None})})
    plan = make_plan(loose, curves, CATALOG)
    rec = plan.recommendation
    impossible = [o for o in plan.options if o.above_ceiling and o.meets_sla]
    assert impossible, "the seed curve meets the loosened SLA"
    assert rec.choice is not None and not rec.choice.above_ceiling
    assert _cost(impossible[0]) < _cost(rec.choice)
    assert "passed over" in rec.reason.lower() and "can physically go" in rec.reason
    assert rec.runner_up is None or not rec.runner_up.above_ceiling
    # A budget between the flagged option's cost and the sound one's: the binding reason is the
    # budget (sound data meets the SLA, over it), never "nothing sound meets the SLA".
    between = (_cost(impossible[0]) + _cost(rec.choice)) / 2
    for budget in (between, _cost(impossible[0]) / 2):
        tight = loose.model_copy(update={"budget": BudgetSpec(monthly_usd=budget)})
        capped = make_plan(tight, curves, CATALOG).recommendation
        assert capped.choice is None and capped.verdict is Verdict.OVER_BUDGET
        assert capped.over_budget is not None and not capped.over_budget.concerns
        assert (
            capped.over_budget.key == rec.choice.key
        )  # the cheapest sound option, not a flagged one
        assert capped.flagged is None


def test_when_nothing_sound_meets_the_sla_there_is_no_choice_and_the_flagged_one_is_named() -> None:
    plan = make_plan(scenario(), seed_curves(), CATALOG)
    rec = plan.recommendation
    assert rec.choice is None and rec.runner_up is None
    assert rec.flagged is not None and rec.flagged.engine == "tensorrt-llm"
    assert rec.reason.startswith("Nothing measured soundly meets the SLA.")
    assert rec.verdict is Verdict.NOT_SOUND
    assert f"{rec.flagged.replicas} replicas at ${rec.flagged.total_monthly_cost_usd:,.0f}" in (
        rec.reason
    )
    assert "faster than the GPUs it names can physically go" in rec.reason
    assert "did not state the workload" in rec.reason
