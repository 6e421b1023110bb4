"""planner.analysis.measurement_plan: "no data" told apart from "the data says no", and the sweeps
that would answer it (engine x GPU x TP at the scenario's ISL/OSL, concurrency to the KV
estimate)."""

from __future__ import annotations

import itertools

import pytest

from errors import NoDataError
from hardware.gpus import gpu_catalog
from planner.analysis.capacity import make_plan
from planner.analysis.measurement_plan import MIN_STREAMS, MeasurementPlan, plan_measurements
from planner.inputs.prices import load_catalog_csv
from planner.physics.roofline import ceilings
from tests.planner.builders import scenario, seed_curves, silicon_curves

CATALOG = load_catalog_csv()
CURVES = [*seed_curves(), *silicon_curves()]
BOTH_GPUS = {"engines": ["vllm", "tensorrt-llm"], "gpus": ["H100-SXM-80GB", "H200-SXM-141GB"]}
# The agent brief of issue 13: a 70B at 3000/300, 20 req/s, TTFT p99 1 s, TPOT p99 50 ms.
AGENT_BRIEF = {
    "model": "meta-llama/Llama-3.1-70B-Instruct",
    "workload": {"isl": 3000, "osl": 300},
    "sla": {"ttft_p99_ms": 1000, "tpot_p99_ms": 50},
    "candidates": BOTH_GPUS,
}


def _brief_plan() -> MeasurementPlan:
    plan = make_plan(scenario(**AGENT_BRIEF), CURVES, CATALOG)
    assert plan.measurement_plan is not None
    return plan.measurement_plan


def test_the_agent_brief_is_estimated_by_the_serving_model_and_says_what_to_measure() -> None:
    # Issue 21: nothing was measured within 2.5x of 3000/300, but every pair has a deployment of
    # the model: the plan answers from the serving model and the sweeps would tighten it.
    plan = make_plan(scenario(**AGENT_BRIEF), CURVES, CATALOG)
    assert plan.recommendation.choice is not None
    measurements = _brief_plan()
    assert not measurements.no_data
    # TensorRT-LLM on H100 has only the seed article's curve (no ISL/OSL, no TPOT): a real gap.
    real = [(g.engine, g.gpu) for g in measurements.gaps if not g.modelled]
    assert real == [("tensorrt-llm", "H100-SXM-80GB")]
    headline = measurements.headline
    assert headline.startswith(
        "Not measured close enough to Llama-3.1-70B-Instruct at 3000/300: TensorRT-LLM on H100"
    )
    assert "are estimated by the serving model from other workloads" in headline
    assert "nearest measured ISL/OSL 8192/1024" in headline
    assert headline.count(". ") == 0 and headline.endswith("to add them.")
    pairs = {(gap.engine, gap.gpu) for gap in measurements.gaps}
    assert pairs == {(e, g) for e in BOTH_GPUS["engines"] for g in BOTH_GPUS["gpus"]}


def test_a_brief_only_unstated_workloads_back_is_no_data_said_first_in_one_sentence() -> None:
    plan = make_plan(scenario(**AGENT_BRIEF), seed_curves(), CATALOG)
    assert plan.recommendation.choice is None
    measurements = plan.measurement_plan
    assert measurements is not None and measurements.no_data
    headline = measurements.headline
    assert headline.startswith("No measurements close enough to Llama-3.1-70B-Instruct at 3000/300")
    assert headline.count(". ") == 0 and headline.endswith("plan again.")
    assert "only curves that state no ISL/OSL" in headline
    pairs = {(gap.engine, gap.gpu) for gap in measurements.gaps}
    assert pairs == {(e, g) for e in BOTH_GPUS["engines"] for g in BOTH_GPUS["gpus"]}


def test_no_data_leaves_the_not_considered_list_out_of_the_recommendation() -> None:
    plan = make_plan(scenario(**AGENT_BRIEF), seed_curves(), CATALOG)
    assert "Not considered" not in plan.recommendation.reason


def test_the_sweeps_cover_every_gap_at_the_scenario_workload_with_tp_that_fits() -> None:
    measurements = _brief_plan()
    tps: dict[tuple[str, str], list[int]] = {}
    for sweep in measurements.sweeps:
        assert (sweep.isl, sweep.osl) == (3000, 300)
        tps.setdefault((sweep.engine, sweep.gpu), []).append(sweep.tp)
    # 70 GB of FP8 weights leave an H100 almost no KV cache; one H200 holds them and 50 streams.
    assert tps[("vllm", "H100-SXM-80GB")] == [2, 4]
    assert tps[("vllm", "H200-SXM-141GB")] == [1, 2]
    assert tps[("tensorrt-llm", "H100-SXM-80GB")] == [2, 4]


@pytest.mark.parametrize("gpu", ["H100-SXM-80GB", "H200-SXM-141GB"])
def test_each_sweep_is_the_smallest_tp_with_room_for_min_streams_and_climbs_to_its_kv_estimate(
    gpu: str,
) -> None:
    spec = gpu_catalog().find(gpu)
    assert spec is not None
    sweeps = [s for s in _brief_plan().sweeps if s.gpu == gpu and s.engine == "vllm"]
    smallest = sweeps[0]
    below = ceilings("meta-llama/Llama-3.1-70B", "fp8", spec, smallest.tp // 2 or 1)
    if smallest.tp > 1:
        assert not isinstance(below, str) and below.max_streams(3300) < MIN_STREAMS
    for sweep in sweeps:
        ceil = ceilings("meta-llama/Llama-3.1-70B", "fp8", spec, sweep.tp)
        assert not isinstance(ceil, str)
        assert sweep.max_streams_memory == ceil.max_streams(3300) >= MIN_STREAMS
        levels = sweep.concurrencies
        assert levels[0] == 1 and all(b == 2 * a for a, b in itertools.pairwise(levels))
        assert levels[-1] >= sweep.max_streams_memory > levels[-2]


def test_the_sweep_commands_name_the_deployment() -> None:
    sweep = next(s for s in _brief_plan().sweeps if s.engine == "tensorrt-llm")
    assert sweep.server_command is not None and sweep.server_command.startswith("trtllm-serve")
    assert f"--tp_size {sweep.tp}" in sweep.server_command
    assert sweep.probe_command.startswith("capplan probe --launch 'trtllm-serve ")
    assert f"--gpu {sweep.gpu} --tp {sweep.tp}" in sweep.probe_command
    assert "--isl 3000 --osl 300" in sweep.probe_command
    assert "--backend openai" in sweep.vllm_bench_command  # trtllm-serve speaks OpenAI
    assert "--isl 3000" in sweep.aiperf_command


def test_a_measured_workload_that_fails_the_sla_is_not_a_data_gap() -> None:
    # The silicon sample has every engine x GPU at 1024/1024 with TTFT and TPOT: an impossible
    # TTFT is the data saying no, not missing data.
    sc = scenario(
        model="meta-llama/Llama-3.1-70B-Instruct",
        workload={"isl": 1024, "osl": 1024},
        sla={"ttft_p99_ms": 1},
        candidates=BOTH_GPUS,
    )
    plan = make_plan(sc, silicon_curves(), CATALOG)
    assert plan.recommendation.choice is None
    assert plan.measurement_plan is None


def test_an_engine_without_data_beside_measured_ones_is_a_partial_gap() -> None:
    sc = scenario(
        model="meta-llama/Llama-3.1-70B-Instruct",
        workload={"isl": 1024, "osl": 1024},
        sla={"ttft_p99_ms": 2000},
        candidates={"engines": ["vllm", "sglang"], "gpus": ["H200-SXM-141GB"]},
    )
    measurements = make_plan(sc, silicon_curves(), CATALOG).measurement_plan
    assert measurements is not None and not measurements.no_data
    assert [(g.engine, g.gpu) for g in measurements.gaps] == [("sglang", "H200-SXM-141GB")]
    assert measurements.headline.startswith("Not measured close enough")
    (sweep, *_) = measurements.sweeps
    # capplan launches vLLM and TensorRT-LLM only: the probe attaches to a server started by hand.
    assert sweep.server_command is None
    assert "--base-url http://127.0.0.1:8000 --engine other" in sweep.probe_command
    assert any("start the sglang server yourself" in note for note in measurements.notes)


def test_no_curve_of_the_model_raises_no_data_with_a_plan_over_every_tp() -> None:
    sc = scenario(model="mistralai/Mixtral-8x7B", candidates=BOTH_GPUS)
    with pytest.raises(NoDataError, match="Mixtral-8x7B") as info:
        make_plan(sc, CURVES, CATALOG)
    measurements = info.value.measurement_plan
    assert isinstance(measurements, MeasurementPlan) and measurements.no_data
    assert {gap.reason for gap in measurements.gaps} == {"no curve of this model and precision"}
    # Model size unknown to capplan: every TP up to the node, said in a note.
    assert sorted({s.tp for s in measurements.sweeps}) == [1, 2, 4, 8]
    assert any("not narrowed by memory" in note for note in measurements.notes)


def test_the_scenarios_tp_sizes_are_the_ones_swept() -> None:
    sc = scenario(**{**AGENT_BRIEF, "candidates": {**BOTH_GPUS, "tp": [4, 8]}})
    measurements = plan_measurements(sc, (), [])
    assert measurements is not None
    assert {s.tp for s in measurements.sweeps} == {4, 8}


def test_every_pair_with_a_sound_curve_means_no_measurement_plan() -> None:
    sc = scenario(model="meta-llama/Llama-3.1-70B-Instruct", workload={"isl": 1024, "osl": 1024})
    plan = make_plan(sc, silicon_curves(), CATALOG)
    assert plan.measurement_plan is None


def test_a_model_that_does_not_fit_a_gpus_nvlink_domain_gets_no_sweep_there_but_a_reason() -> None:
    # Kimi K2 is 1,026B parameters: at FP8 it does not fit 8 x 80 GB, and does on 8 x B200.
    kimi = scenario(
        model="moonshotai/Kimi-K2-Instruct",
        precision="fp8",
        candidates={"engines": ["vllm"], "gpus": ["H100-SXM-80GB", "B200-SXM-180GB"]},
    )
    with pytest.raises(NoDataError) as raised:
        make_plan(kimi, CURVES, CATALOG)
    measured = raised.value.measurement_plan
    assert isinstance(measured, MeasurementPlan)
    assert {s.gpu for s in measured.sweeps} == {"B200-SXM-180GB"}
    assert any("does not fit on 8 x H100-SXM-80GB" in note for note in measured.notes)
