"""Sized and rejected options: derived values, the key re-plans find an option by."""

from __future__ import annotations

import math

import pytest

from planner.analysis.capacity import make_plan
from planner.inputs.prices import load_catalog_csv
from planner.sizing.options import OptionKey, RejectedOption, SizedOption
from tests.planner.builders import scenario, seed_curves, silicon_curves

CATALOG = load_catalog_csv()


def test_a_sized_options_derived_values_follow_from_its_fields() -> None:
    sc = scenario(budget={"monthly_usd": 50_000}, options={"model_updates_per_month": 2})
    for option in make_plan(sc, seed_curves(), CATALOG).options:
        assert isinstance(option, SizedOption)
        assert option.replicas == max(option.hourly_replicas)
        assert option.gpus == option.replicas * option.gpus_per_replica
        assert option.nodes == math.ceil(option.replicas / option.replicas_per_node)
        assert option.total_monthly_cost_usd == option.monthly_cost_usd + option.ops_cost_usd
        assert option.within_budget == (option.total_monthly_cost_usd <= 50_000)
        assert option.usd_per_million_output_tokens == pytest.approx(
            option.total_monthly_cost_usd / option.monthly_output_tokens * 1e6
        )
        assert option.autoscale_saving_usd is None and option.startup_s is None


def test_keys_are_unique_in_a_plan_and_name_the_option() -> None:
    sc = scenario(workload={"isl": 1024, "osl": 1024}, sla={"tpot_p99_ms": 40})
    plan = make_plan(sc, silicon_curves(), CATALOG)
    keys = [option.key for option in plan.options]
    assert len(set(keys)) == len(keys) > 2
    for option in plan.options:
        assert option.key.title() == option.title()
        assert (option.engine, option.gpu, option.tp) == (
            option.key.engine,
            option.key.gpu,
            option.key.tp,
        )
        assert OptionKey.of_curve(option.curve).engine == option.engine


def test_a_key_title_says_what_was_not_stated() -> None:
    assert OptionKey("vllm", "H100-SXM-80GB", None, None).title() == (
        "vllm on H100-SXM-80GB (TP not stated, precision not stated)"
    )
    assert OptionKey("tensorrt-llm", "H200-SXM-141GB", 2, "fp8").title() == (
        "tensorrt-llm on H200-SXM-141GB (TP 2, fp8)"
    )


def test_a_rejected_option_carries_its_reason_and_no_sizing() -> None:
    plan = make_plan(scenario(sla={"min_stream_tok_s": 500}), seed_curves(), CATALOG)
    for option in plan.options:
        assert isinstance(option, RejectedOption) and not option.meets_sla
        assert option.failed_targets == ("min_stream_tok_s",)
        assert not hasattr(option, "nodes") and not hasattr(option, "cost")


def test_a_share_short_of_the_confidence_never_prints_as_equal_to_it() -> None:
    from planner.sizing.confidence import share_below as _share_below

    assert _share_below(0.8975, 0.9) == "89.7%"  # was "90% ..., fewer than the 90% ... asks"
    assert _share_below(0.75, 0.9) == "75%"
