"""The recommendation in plain words: two sentences at most plus bullets, ties and instability
said plainly, warnings and flags grouped, proper names everywhere a person reads them."""

from __future__ import annotations

from dataclasses import replace

import pytest

from planner.analysis.capacity import Plan, make_plan
from planner.analysis.uncertainty import OptionRange, Percentiles, PlanRanges
from planner.inputs.prices import load_catalog_csv
from planner.sizing.options import OptionKey, SizedOption
from reports.brief import (
    node_gpus,
    recommendation_brief,
    tie_sentence,
    unstable_sentence,
)
from reports.flag_text import group_flags, group_warnings
from reports.names import (
    engine_name,
    gpu_name,
    option_name,
    precision_name,
    rejected_lines,
    short_option_names,
)
from tests.planner.builders import scenario, seed_curves, silicon_curves

SILICON = [c for c in silicon_curves() if (c.key.isl, c.key.osl) == (1024, 1024)]


def _plan(**overrides: object) -> Plan:
    """The silicon sample at 1024/1024 on H100 and H200: sound data, several sized options."""
    raw: dict[str, object] = {
        "workload": {"isl": 1024, "osl": 1024},
        "sla": {"ttft_p99_ms": 1000, "tpot_p99_ms": 30},
        "candidates": {"gpus": ["H100-SXM-80GB", "H200-SXM-141GB"]},
    }
    return make_plan(scenario(**{**raw, **overrides}), SILICON, load_catalog_csv())


def _seed_plan(**overrides: object) -> Plan:
    return make_plan(scenario(**overrides), seed_curves(), load_catalog_csv())


def _ranges(plan: Plan, wins: dict[OptionKey, float], change: float = 0.0) -> PlanRanges:
    rows = []
    for option in plan.options:
        cost = option.total_monthly_cost_usd if isinstance(option, SizedOption) else None
        spread = Percentiles(cost, cost, cost) if cost is not None else None
        rows.append(
            OptionRange(
                key=option.key, point_nodes=None, point_gpus=None, point_replicas=None,
                point_total_monthly_cost_usd=cost, expected_total_monthly_cost_usd=cost,
                nodes=None, gpus=None, replicas=None,
                total_monthly_cost_usd=spread, sampled=cost is not None, feasible_share=1.0,
                pick_share=wins.get(option.key, 0.0), noise_rel=(),
            )
        )  # fmt: skip
    choice = plan.recommendation.choice
    point = choice.key if choice else None
    return PlanRanges(50, 0, 1.0, 0.9, tuple(rows), point, change, 0.0, "", ())


def test_names_are_the_proper_ones() -> None:
    assert [engine_name(e) for e in ("vllm", "trtllm", "tensorrt-llm", "sglang")] == [
        "vLLM",
        "TensorRT-LLM",
        "TensorRT-LLM",
        "SGLang",
    ]
    assert gpu_name("h100_sxm") == "H100 SXM 80GB" and gpu_name(None) == "GPU not stated"
    key = OptionKey("tensorrt-llm", "H200-SXM-141GB", 2, "fp8")
    assert option_name(key) == "TensorRT-LLM TP2 on H200 SXM 141GB (FP8)"
    other = OptionKey("tensorrt-llm", "H200-SXM-141GB", 4, "fp8")
    assert short_option_names([key, other]) == ["TensorRT-LLM TP2", "TensorRT-LLM TP4"]
    assert option_name(OptionKey("vllm", "H100-SXM-80GB", None, None)) == (
        "vLLM (TP unknown) on H100 SXM 80GB (precision not stated)"
    )


def test_the_headline_is_at_most_two_sentences_with_whole_counts() -> None:
    plan = _plan()
    choice = plan.recommendation.choice
    assert choice is not None
    brief = recommendation_brief(plan)
    assert brief.sound
    sentences = [s for s in brief.headline.split(". ") if s]
    assert 1 <= len(sentences) <= 2
    what = option_name(choice.key).split(" on ")[0]
    assert brief.headline.startswith(f"Run {what} on {choice.nodes} 8-GPU HGX node")
    assert f"{choice.replicas} replicas)" in brief.headline
    confidence = plan.scenario.options.sizing_confidence
    assert f"meet the SLA with {confidence:.0%} confidence" in brief.headline
    expected = f"Expected cost ${choice.expected_monthly_cost_usd:,.0f}/month"
    assert any(b.startswith(expected) for b in brief.bullets)
    assert "tensorrt-llm" not in brief.headline and ".00" not in brief.headline
    assert any(b.startswith("What limits it:") for b in brief.bullets)


@pytest.mark.parametrize("peak", [1.0, 5.0, 11.0])
def test_the_headline_counts_the_gpus_billed_and_those_the_replicas_use(peak: float) -> None:
    """The bill is for whole nodes: 2 nodes of 8 GPUs are 16 GPUs billed even when 6 replicas of
    TP2 use 12 of them (the headline once said "12 GPUs" beside a bill for 16)."""
    plan = _plan(demand={"peak_requests_per_s": peak})
    choice = plan.recommendation.choice
    assert choice is not None
    billed = choice.nodes * node_gpus(plan, choice)
    headline = recommendation_brief(plan).headline
    if billed == choice.gpus:
        assert f"({billed} GPUs, {choice.replicas} replicas)" in headline
    else:
        assert (
            f"({billed} GPUs billed, {choice.gpus} used by {choice.replicas} replicas)" in headline
        )


def test_a_tie_that_resampling_splits_is_said_plainly() -> None:
    plan = _plan()
    choice = plan.recommendation.choice
    assert choice is not None
    family = (choice.engine, choice.gpu, choice.key.precision)
    (sibling, *_) = [
        o
        for o in plan.options
        if isinstance(o, SizedOption)
        and o is not choice
        and (o.engine, o.gpu, o.key.precision) == family
    ]
    same = replace(sibling, cost=choice.cost)  # the same engine on the same GPU, another TP
    tied = replace(plan, options=tuple(same if o is sibling else o for o in plan.options))
    ranges = _ranges(tied, {choice.key: 0.9, same.key: 0.7})
    sentence = tie_sentence(tied, ranges)
    a, b = f"TP{choice.tp}", f"TP{same.tp}"
    assert sentence == (
        f"{engine_name(choice.engine)} {a} and {b} cost the same; each is the pick or tied with "
        f"it in this share of the resampled plans: {a} 90%, {b} 70%."
    )
    assert sentence in recommendation_brief(tied, ranges).headline
    assert tie_sentence(tied, _ranges(tied, {choice.key: 1.0})) is None  # never picked: no tie


def test_a_pick_that_changes_often_is_called_unsettled() -> None:
    plan = _plan()
    runner = plan.recommendation.runner_up
    assert runner is not None
    ranges = _ranges(plan, {runner.key: 0.63}, change=0.63)
    sentence = unstable_sentence(plan, ranges)
    assert sentence is not None
    assert sentence.startswith("The pick is not settled: it holds in only 37% of the resampled")
    assert option_name(runner.key) in sentence
    assert unstable_sentence(plan, _ranges(plan, {}, change=0.05)) is None


def test_over_budget_is_not_said_as_nothing_meets_the_sla() -> None:
    plan = _plan(budget={"monthly_usd": 1000})
    cheapest = min(
        (o for o in plan.options if isinstance(o, SizedOption)),
        key=lambda o: o.total_monthly_cost_usd,
    )
    brief = recommendation_brief(plan)
    assert not brief.sound
    cost = cheapest.total_monthly_cost_usd
    assert brief.headline == (
        f"Over budget: the cheapest option that meets the SLA, {option_name(cheapest.key)}, "
        f"costs ${cost:,.0f}/month, ${cost - 1000:,.0f} ({100 * (cost - 1000) / 1000:.0f}%) more "
        "than the $1,000/month budget. The budget does not buy one replica of it."
    )
    wide = _plan(budget={"monthly_usd": cost * 0.75})
    served = wide.recommendation.over_budget
    assert served is not None and served.budget_capacity
    share = 100 * served.budget_capacity / wide.scenario.demand.amount
    assert recommendation_brief(wide).headline.endswith(
        f"The budget buys enough of it for {served.budget_capacity:,.1f} "
        f"{served.budget_capacity_unit} ({share:.0f}% of the "
        f"{wide.scenario.demand.amount:,.4g} planned)."
    )
    assert 0 < share < 100


def test_an_answer_only_on_flagged_data_is_not_a_success() -> None:
    plan = _seed_plan()  # the seed article's "one H100" is above the GPU's decode ceiling
    flagged = plan.recommendation.flagged
    assert plan.recommendation.choice is None and flagged is not None
    brief = recommendation_brief(plan)
    assert not brief.sound
    assert brief.headline.startswith("Data not sound: nothing that meets the SLA rests on data")
    assert option_name(flagged.key) in brief.headline
    assert any("can physically go" in b for b in brief.bullets)
    assert brief.bullets[-1] == "Measure this deployment (capplan probe) before buying on it."


def test_rejected_options_are_named_with_their_tp() -> None:
    plan = _seed_plan(sla={"tpot_p99_ms": 30})
    lines = rejected_lines(plan.options)
    assert lines and all(" (TP unknown) on H100 SXM 80GB (FP8): " in line for line in lines)


def test_curve_warnings_that_share_a_reason_become_one_line() -> None:
    why = "nearest measured at ISL/OSL 8192/1024, scenario 3000/300: beyond the 2x limit"
    warnings = [
        f"1 curve(s) not used: tensorrt-llm on H200-SXM-141GB TP{tp}: {why}" for tp in (1, 2, 4)
    ]
    warnings += [f"1 curve(s) not used: vllm on H100-SXM-80GB TP2: {why}", "other", "other"]
    assert group_warnings(warnings) == [
        f"4 curves not used (TensorRT-LLM TP1, TP2, TP4 on H200 SXM 141GB; vLLM TP2 on H100 "
        f"SXM 80GB): {why}",
        "other",
    ]
    assert group_warnings(["1 curve(s) not used: workload not stated"]) == [
        "1 curve not used: workload not stated"
    ]


def test_flags_that_differ_only_in_numbers_are_said_once() -> None:
    flags = [
        "1240.0 output tok/s at concurrency 16 is above the aggregate ceiling of 771.2 tok/s",
        "3620.0 output tok/s at concurrency 64 is above the aggregate ceiling of 3084.8 tok/s",
        "TTFT p99 fitted to values whose statistic is unstated",
        "workload not stated by source",
        "workload not stated by source",
    ]
    assert group_flags(flags) == [
        "1240.0 output tok/s at concurrency 16 is above the aggregate ceiling of 771.2 tok/s "
        "(and 1 more like it)",
        "workload not stated by source",
    ]


def test_the_lead_table_says_when_an_option_meets_the_sla_only_on_flagged_data() -> None:
    from reports.lead_table import options_lead_table

    plan = _seed_plan()
    rows = options_lead_table(plan)
    sized = [o for o in plan.options if isinstance(o, SizedOption)]
    assert sized and all(o.concerns for o in sized)
    assert [r["Meets SLA"] for r in rows[: len(sized)]] == ["yes, on flagged data"] * len(sized)
    assert not any(str(r["Option"]).startswith("\u2605") for r in rows)  # never the choice
    brief = recommendation_brief(_plan())
    assert all("tensorrt-llm on" not in b and "vllm on" not in b for b in brief.bullets)


def test_a_target_given_without_its_statistic_is_read_as_p99_and_said() -> None:
    bare = make_plan(scenario(sla={"tpot_ms": 25}), seed_curves(), load_catalog_csv())
    stated = make_plan(scenario(sla={"tpot_p99_ms": 25}), seed_curves(), load_catalog_csv())
    assert bare.scenario.sla.targets() == {"tpot_p99_ms": 25.0}
    said = recommendation_brief(bare).bullets[0]
    assert said.startswith("TPOT p99 <= 25 ms: this target was given without a statistic")
    assert "read as p99" in said
    plain = recommendation_brief(stated)
    assert not any("without a statistic" in b for b in plain.bullets)
    assert recommendation_brief(bare).headline == plain.headline


def test_a_bare_target_cleared_later_is_not_said() -> None:
    plan = make_plan(scenario(sla={"tpot_ms": 25}), seed_curves(), load_catalog_csv())
    cleared = plan.scenario.sla.model_copy(update={"tpot_p99_ms": None, "min_stream_tok_s": 20})
    moved = replace(plan, scenario=plan.scenario.model_copy(update={"sla": cleared}))
    assert not any("without a statistic" in b for b in recommendation_brief(moved).bullets)


def test_the_headline_names_the_precision_when_only_it_tells_two_options_apart() -> None:
    plan = _plan()
    choice = plan.recommendation.choice
    assert choice is not None
    twin_key = replace(choice.key, precision="bf16" if choice.key.precision != "bf16" else "fp8")
    cost = choice.total_monthly_cost_usd
    twin = replace(choice, key=twin_key)  # its cost is the margin's business only
    rec = replace(plan.recommendation, runner_up=twin, margin_usd=cost, margin_pct=50.0)
    headline = recommendation_brief(
        replace(plan, options=(*plan.options, twin), recommendation=rec)
    ).headline
    first, second = headline.split(". ", 1)
    assert f"({precision_name(choice.key.precision)})" in first, headline
    assert f"({precision_name(twin_key.precision)})" in second, headline
    alone = recommendation_brief(plan).headline.split(". ")[0]
    assert f"({precision_name(choice.key.precision)})" not in alone  # said only when needed
