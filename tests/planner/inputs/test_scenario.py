"""Scenario YAML: the design notes' example reads, round-trips, and bad input names file, key
and value."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from errors import ScenarioError
from planner.inputs.scenario import (
    load_scenario,
    scenario_from_dict,
    scenario_from_yaml,
    scenario_to_yaml,
)

DESIGN_EXAMPLE = """\
name: agent-platform
model: meta-llama/Llama-3.1-70B-Instruct
precision: fp8
workload: {isl: 3000, osl: 300}
demand: {peak_requests_per_s: 20}        # or peak_concurrent_streams, or monthly_output_tokens
sla: {ttft_p99_ms: 300, tpot_p99_ms: 30}
budget: {monthly_usd: 60000}              # optional
candidates: {engines: [vllm, tensorrt-llm], gpus: [H100-SXM-80GB, H200-SXM-141GB]}
pricing: {H100-SXM-80GB: 2.95, H200-SXM-141GB: 3.50}   # $/GPU-hour; else the catalog default
options: {gpus_per_node: 8, target_utilization: 0.8, redundancy_replicas: 1,
  model_updates_per_month: 2}
"""


def test_design_example_reads_with_its_values() -> None:
    s = scenario_from_yaml(DESIGN_EXAMPLE, "design.yaml")
    assert s.workload.isl == 3000 and s.workload.osl == 300
    assert s.demand.kind == "peak_requests_per_s" and s.demand.amount == 20
    assert s.sla.targets() == {"ttft_p99_ms": 300, "tpot_p99_ms": 30}
    assert s.budget is not None and s.budget.monthly_usd == 60000
    assert s.pricing == {"H100-SXM-80GB": 2.95, "H200-SXM-141GB": 3.5}
    assert s.options.hours_per_month == 730 and s.options.model_updates_per_month == 2


def test_design_example_round_trips() -> None:
    s = scenario_from_yaml(DESIGN_EXAMPLE, "design.yaml")
    assert scenario_from_yaml(scenario_to_yaml(s), "again.yaml") == s


@settings(max_examples=40, deadline=None)
@given(
    isl=st.integers(1, 200_000),
    osl=st.integers(1, 20_000),
    demand_kind=st.sampled_from(
        ["peak_requests_per_s", "peak_concurrent_streams", "monthly_output_tokens"]
    ),
    amount=st.floats(0.01, 1e7, allow_nan=False),  # the smallest of the three upper bounds
    ratio=st.floats(1.0, 20.0),
    ttft=st.none() | st.floats(1.0, 1e5),
    utilization=st.floats(0.01, 1.0),
    tp=st.none() | st.lists(st.integers(1, 16), min_size=1, max_size=4),
)
def test_random_scenarios_round_trip(
    *,
    isl: int,
    osl: int,
    demand_kind: str,
    amount: float,
    ratio: float,
    ttft: float | None,
    utilization: float,
    tp: list[int] | None,
) -> None:
    raw = {
        "name": "random",
        "model": "org/Model-7B",
        "workload": {"isl": isl, "osl": osl},
        "demand": {demand_kind: amount, "peak_to_average": ratio},
        "sla": {} if ttft is None else {"ttft_p99_ms": ttft},
        "candidates": {"tp": tp},
        "options": {"target_utilization": utilization},
    }
    s = scenario_from_dict(raw, "random")
    assert scenario_from_yaml(scenario_to_yaml(s), "random") == s


@pytest.mark.parametrize(
    ("text", "key_path", "value"),
    [
        (DESIGN_EXAMPLE.replace("ttft_p99_ms: 300", "ttft_p99: 300"), "sla.ttft_p99", "300"),
        (DESIGN_EXAMPLE + "colour: blue\n", "colour", "blue"),
        (
            DESIGN_EXAMPLE.replace("gpus_per_node: 8", "gpu_per_node: 8"),
            "options.gpu_per_node",
            "8",
        ),
    ],
)
def test_unknown_key_is_rejected_naming_file_key_and_value(
    text: str, key_path: str, value: str
) -> None:
    with pytest.raises(ScenarioError) as info:
        scenario_from_yaml(text, "plans/agent.yaml")
    message = str(info.value)
    assert "plans/agent.yaml" in message and key_path in message and value in message
    assert "unknown key" in message
    assert info.value.field == key_path


def test_bad_yaml_names_the_line() -> None:
    with pytest.raises(ScenarioError, match=r"bad\.yaml: not valid YAML at line 3"):
        scenario_from_yaml("name: x\nmodel: y\n  bad: here\n", "bad.yaml")


@pytest.mark.parametrize(
    "demand",
    [{}, {"peak_requests_per_s": 1, "peak_concurrent_streams": 4}, {"peak_to_average": 2}],
)
def test_demand_needs_exactly_one_measure(demand: dict[str, float]) -> None:
    raw = {"name": "d", "model": "m", "workload": {"isl": 1, "osl": 1}, "demand": demand}
    with pytest.raises(ScenarioError, match="exactly one"):
        scenario_from_dict(raw, "d.yaml")


@pytest.mark.parametrize("utilization", [0, -0.1, 1.01])
def test_target_utilization_must_be_in_zero_one(utilization: float) -> None:
    text = DESIGN_EXAMPLE.replace("target_utilization: 0.8", f"target_utilization: {utilization}")
    with pytest.raises(ScenarioError) as info:
        scenario_from_yaml(text, "u.yaml")
    assert info.value.field == "options.target_utilization"


def test_gpu_and_engine_aliases_become_canonical() -> None:
    text = DESIGN_EXAMPLE.replace(
        "gpus: [H100-SXM-80GB, H200-SXM-141GB]", "gpus: [H100 SXM, h200_sxm]"
    )
    text = text.replace("engines: [vllm, tensorrt-llm]", "engines: [vLLM, TRTLLM]")
    text = text.replace("pricing: {H100-SXM-80GB: 2.95", "pricing: {H100-SXM5-80GB: 2.95")
    s = scenario_from_yaml(text, "alias.yaml")
    assert s.candidates.gpus == ("H100-SXM-80GB", "H200-SXM-141GB")
    assert s.candidates.engines == ("vllm", "tensorrt-llm")
    assert s.pricing["H100-SXM-80GB"] == 2.95


def test_load_scenario_reads_a_file_and_reports_a_missing_one(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(DESIGN_EXAMPLE, encoding="utf-8")
    assert load_scenario(path).name == "agent-platform"
    with pytest.raises(ScenarioError, match="cannot read"):
        load_scenario(tmp_path / "missing.yaml")


def test_top_level_must_be_a_mapping() -> None:
    with pytest.raises(ScenarioError, match="mapping"):
        scenario_from_yaml("- just\n- a list\n", "list.yaml")


@pytest.mark.parametrize(
    ("key_path", "snippet"),
    [
        ("demand.peak_requests_per_s", "demand: {peak_requests_per_s: .inf}"),
        ("budget.monthly_usd", "budget: {monthly_usd: .inf}"),
        ("sla.ttft_p99_ms", "sla: {ttft_p99_ms: .nan}"),
        ("demand.peak_requests_per_s", "demand: {peak_requests_per_s: 1.0e+300}"),
    ],
)
def test_infinite_nan_and_absurd_numbers_are_refused(key_path: str, snippet: str) -> None:
    text = "name: s\nmodel: m\nworkload: {isl: 10, osl: 10}\n" + snippet + "\n"
    if not snippet.startswith("demand"):
        text += "demand: {peak_requests_per_s: 1}\n"
    with pytest.raises(ScenarioError) as info:
        scenario_from_yaml(text, "s.yaml")
    assert key_path in str(info.value) and "s.yaml" in str(info.value)


def test_a_key_given_twice_is_refused_with_its_line() -> None:
    text = "name: a\nname: b\nmodel: m\nworkload: {isl: 10, osl: 10}\n"
    with pytest.raises(ScenarioError) as info:
        scenario_from_yaml(text, "twice.yaml")
    assert "'name' is given twice" in str(info.value) and "line 2" in str(info.value)


WORKDAY = [1, 1, 1, 1, 1, 2, 3, 5, 7, 8, 9, 10, 10, 9, 8, 8, 7, 6, 5, 4, 3, 2, 1, 1]


def _with_demand(demand: dict[str, object]) -> dict[str, object]:
    return {"name": "p", "model": "m", "workload": {"isl": 1, "osl": 1}, "demand": demand}


def test_hourly_profile_sets_peak_to_average_and_round_trips_without_it() -> None:
    s = scenario_from_dict(_with_demand({"peak_requests_per_s": 20, "hourly_profile": WORKDAY}))
    assert s.demand.peak_to_average == pytest.approx(240 / 113)  # peak 10, mean 113/24
    weights = s.demand.hourly_weights()
    assert weights is not None and max(weights) == 1.0 and weights[0] == 0.1
    text = scenario_to_yaml(s)
    assert "peak_to_average" not in text and "hourly_profile" in text
    assert scenario_from_yaml(text, "again.yaml") == s


def test_profile_and_a_different_peak_to_average_is_an_error_naming_both() -> None:
    demand = {"peak_requests_per_s": 20, "hourly_profile": WORKDAY, "peak_to_average": 3}
    with pytest.raises(ScenarioError) as info:
        scenario_from_dict(_with_demand(demand), "both.yaml")
    message = str(info.value)
    assert "demand.hourly_profile" in message and "demand.peak_to_average" in message
    assert "implies peak_to_average 2.124" in message and info.value.field == "demand"


@pytest.mark.parametrize(
    ("profile", "words"),
    [
        ([1.0] * 23, "needs 24 hourly weights, got 23"),
        ([1.0] * 23 + [-1.0], ">= 0"),
        ([0.0] * 24, "not all 0"),
        ("busy", "not a list"),
    ],
)
def test_bad_profiles_are_refused(profile: object, words: str) -> None:
    with pytest.raises(ScenarioError, match=words):
        scenario_from_dict(_with_demand({"peak_requests_per_s": 1, "hourly_profile": profile}))


def test_pricing_by_type_reads_round_trips_and_keeps_the_plain_form() -> None:
    raw = _with_demand({"peak_requests_per_s": 1})
    raw["pricing"] = {"H100 SXM": {"on_demand": 2.95, "reserved": 1.85}, "H200-SXM-141GB": 3.5}
    raw["options"] = {"scaling": "autoscale", "pricing_mode": "mix", "prebuilt_engines": True}
    s = scenario_from_dict(raw)
    assert s.on_demand_price("H100-SXM-80GB") == 2.95 and s.reserved_price("H100-SXM-80GB") == 1.85
    assert s.on_demand_price("H200-SXM-141GB") == 3.5 and s.reserved_price("H200-SXM-141GB") is None
    assert s.on_demand_price("B200") is None
    assert scenario_from_yaml(scenario_to_yaml(s), "again.yaml") == s


def test_fleet_options_default_to_a_static_on_demand_fleet() -> None:
    s = scenario_from_yaml(DESIGN_EXAMPLE, "design.yaml")
    assert (s.options.scaling, s.options.pricing_mode) == ("static", "on_demand")
    assert s.options.floor_replicas() == 2 and s.options.startup_s_if_unknown == 300
    with pytest.raises(ScenarioError) as info:
        scenario_from_yaml(DESIGN_EXAMPLE.replace("gpus_per_node: 8", "scaling: elastic"), "s.yaml")
    assert info.value.field == "options.scaling"
