"""Workloads within tokenisation rounding (2 tokens or 2%) are one workload for curves and plans."""

from __future__ import annotations

import pytest

from planner.analysis.capacity import SizedOption, make_plan
from planner.curves.workload_groups import (
    NOT_STATED,
    curve_workloads,
    group_workloads,
    same_tokens,
    same_workload,
)
from planner.inputs.prices import load_catalog_csv
from planner.inputs.scenario import Scenario
from planner.sizing.selection import select_curves
from tests.client_runs import GPU, MODEL, client_curves
from tests.planner.builders import scenario


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (128, 129, True),  # a BOS token
        (64, 63.9, True),  # a mean over requests
        (128, 130, True),  # 2 tokens
        (128, 131, False),
        (1024, 1044, True),  # 2% of 1044 is 20.9 tokens
        (1024, 1046, False),
        (1000, 1050, False),  # "near", not the same: the planner flags it
        (128, 256, False),
    ],
)
def test_two_tokens_or_two_percent_is_rounding(a: float, b: float, same: bool) -> None:
    assert same_tokens(a, b) is same
    assert same_tokens(b, a) is same


def test_both_isl_and_osl_must_be_within_rounding() -> None:
    assert same_workload((128, 64), (129, 63))
    assert not same_workload((128, 64), (129, 128))
    assert not same_workload((128, 64), (None, None))
    assert same_workload((None, 64), (None, None))  # 'not stated' is one workload


def test_groups_are_named_by_their_first_pair_and_never_chain() -> None:
    groups = group_workloads([(102, 64), (100, 64), (104, 64), (None, None), (256, 64)])
    assert [(g.isl, g.osl) for g in groups] == [(100, 64), (104, 64), (256, 64), (None, None)]
    # 102 is within 2 tokens of both 100 and 104; it joins the first, and 104 (4 tokens from
    # 100) stays apart: a group spans one tolerance, not a chain of them.
    assert groups[0].members == ((100, 64), (102, 64))
    assert groups[1].members == ((104, 64),)
    assert groups[-1].name() == NOT_STATED


def test_real_vllm_bench_and_guidellm_runs_of_one_server_share_a_workload() -> None:
    curves = client_curves(isl_mean=129.0, osl_mean=63.9)
    vllm, guidellm = curves["vllm-bench"], curves["guidellm"]
    # Each run keeps its exact values; the group is named by the first.
    assert (vllm.key.isl, vllm.key.osl) == (128, 64)
    assert (guidellm.key.isl, guidellm.key.osl) == (129, 64)
    assert guidellm.label_text().endswith("129/64")
    assert curve_workloads([vllm, guidellm]) == ["128/64", "128/64"]


def test_twice_the_isl_stays_another_workload() -> None:
    curves = client_curves(isl_mean=256.0)
    assert curve_workloads(list(curves.values())) == ["128/64", "256/64"]


def _scenario(isl: int = 128, osl: int = 64) -> Scenario:
    return scenario(
        model=MODEL,
        precision=None,
        workload={"isl": isl, "osl": osl},
        sla={"ttft_p99_ms": 2000},
        candidates={"engines": ["vllm"], "gpus": [GPU]},
    )


def test_a_plan_takes_both_tools_runs_as_one_workload_and_picks_the_exact_one() -> None:
    curves = list(client_curves(isl_mean=129.0, osl_mean=63.9).values())
    (candidate,), _ = select_curves(_scenario(), curves)
    assert candidate.curve.source == "vllm-bench"  # exact ISL/OSL first
    assert any("chosen from 2 runs" in flag for flag in candidate.flags)
    assert not any("adjusted" in flag for flag in candidate.flags)


def test_a_plan_on_the_rounded_run_alone_needs_no_workload_flag() -> None:
    guidellm = client_curves(isl_mean=129.0, osl_mean=63.9)["guidellm"]
    plan = make_plan(_scenario(), [guidellm], load_catalog_csv())
    (option,) = plan.options
    assert isinstance(option, SizedOption), option
    assert option.curve.run_id == guidellm.run_id
    assert not any("ISL/OSL" in flag for flag in option.flags)


def test_a_plan_flags_a_run_twice_the_isl_as_another_workload() -> None:
    guidellm = client_curves(isl_mean=256.0)["guidellm"]
    _, warnings = select_curves(_scenario(), [guidellm])
    assert any("measured at ISL/OSL 256/64, scenario 128/64" in w for w in warnings), warnings
