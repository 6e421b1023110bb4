"""KV-cache capacity: real GPU bytes, the engine's memory rule, the KV dtype, the mean context,
and a measurement that ran more streams than the estimate allows (issue 15, items 1 and 2)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hardware.gpus import GpuSpec, load_gpu_specs
from planner.curves.deployment import stated_kv_cache_dtype
from planner.curves.kv_report import EngineKvReport
from planner.curves.load import H100, CurveKey, CurvePoint, LoadCurve
from planner.physics.memory import CLEAN_TTFT_RATIO, KvDtype, capacity_side, clean_streams, kv_dtype
from planner.physics.roofline import Ceilings, ceilings, check_curve, workload_capacity
from tests.planner.builders import issue_31_curve, silicon_curves

SPECS = {spec.gpu: spec for spec in load_gpu_specs()}
MODEL = "meta-llama/Llama-3.1-70B"
# Issue 15: TensorRT-LLM's published Llama-70B FP8 TP1 128/4096 throughput on one H100.
PUBLISHED_H100_TOK_S = (426.0, 840.0)


def _h100_70b_fp8(engine: str | None) -> Ceilings:
    found = ceilings(MODEL, "fp8", SPECS[H100], 1, engine=engine)
    assert isinstance(found, Ceilings)
    return found


def test_gpu_memory_is_the_driver_reported_capacity_not_decimal_gb() -> None:
    assert SPECS[H100].memory_bytes == 81559 * 2**20  # 79.6 GiB, nvidia-smi memory.total
    assert SPECS["H200-SXM-141GB"].memory_bytes == 143771 * 2**20


def test_a_gpu_row_without_the_driver_capacity_falls_back_to_decimal_gb() -> None:
    spec: GpuSpec = replace(SPECS[H100], memory_mib_total=None)
    assert spec.memory_bytes == 80e9


def test_kv_dtype_follows_the_statement_then_the_engine_default() -> None:
    assert kv_dtype("vllm", "fp8", "fp8").bytes_per_element == (1.0,)
    assert kv_dtype("vllm", "fp8").bytes_per_element == (2.0,)
    assert kv_dtype("tensorrt-llm", "fp8").bytes_per_element == (1.0,)
    assert kv_dtype("tensorrt-llm", "bf16").bytes_per_element == (2.0,)
    unknown = kv_dtype("sglang", "fp8")
    assert unknown.bytes_per_element == (1.0, 2.0) and "unknown" in unknown.text


def test_70b_fp8_on_one_h100_fits_8_to_17_streams_at_128_4096_not_1_or_2() -> None:
    # vLLM: 0.9 x 81,559 MiB - 70.55 GB = 6.415 GB; 16-bit KV 327,680 B/token x 2,176 tokens
    # = 8.997 streams (FP8 KV: 17.99), rounded down.
    assert _h100_70b_fp8("vllm").streams_for(128, 4096) == 8
    unknown = _h100_70b_fp8("sglang").capacity(128, 4096)
    assert (unknown.estimate_low, unknown.estimate_high) == (8, 17)
    # TensorRT-LLM: 0.9 of the 14.97 GB left after weights, FP8 KV, reserved for all 4,224
    # tokens of a request (GUARANTEED_NO_EVICT): 19.5 streams.
    assert _h100_70b_fp8("tensorrt-llm").streams_for(128, 4096) == 19


def test_the_published_h100_throughput_needs_9_to_18_streams() -> None:
    ceil = _h100_70b_fp8("vllm")
    points = tuple(CurvePoint(64.0, output_tok_s=tok_s) for tok_s in PUBLISHED_H100_TOK_S)
    needed = [ceil.capacity(128, 4096, (point,)).measured_streams for point in points]
    assert needed == [9, 18]


def test_a_measurement_beyond_the_estimate_wins_and_flags_it_wrong() -> None:
    # The old estimate: 80e9 bytes and a 16-bit KV cache for the whole 128 + 4096 tokens.
    old = replace(_h100_70b_fp8("vllm"), memory_bytes=80e9)
    assert old.max_streams(128 + 4096) == 1
    published = CurvePoint(64.0, output_tok_s=PUBLISHED_H100_TOK_S[0])
    capacity = old.capacity(128, 4096, (published,))
    assert capacity.streams == 9 and capacity.estimate_low < 9
    assert capacity.contradiction is not None and "estimate is wrong" in capacity.contradiction


def test_the_physics_check_reports_the_contradiction() -> None:
    key = CurveKey("vllm", None, MODEL, "fp8", H100, 1, 1, 128, 4096)
    point = CurvePoint(64.0, output_tok_s=PUBLISHED_H100_TOK_S[1])
    check = check_curve(LoadCurve(key, (point,), None, "published", None, None, None, 1, ()))
    assert check.max_streams == 18
    assert any("estimate is wrong" in note and "at least 18" in note for note in check.notes)


def test_a_level_with_no_queueing_shows_its_streams_ran_together() -> None:
    ceil = replace(_h100_70b_fp8("vllm"), kv=KvDtype((2.0,), "16-bit"))
    # 32 streams at the 9-stream estimate would wait (32/9 - 1) x 4095 x 30 ms = 314 s.
    point = CurvePoint(32.0, ttft_ms=900.0, tpot_ms=30.0)
    assert ceil.capacity(128, 4096, (point,)).measured_streams == 32
    queued = CurvePoint(32.0, ttft_ms=200_000.0, tpot_ms=30.0)
    assert ceil.capacity(128, 4096, (queued,)).measured_streams is None


@pytest.mark.parametrize("engine", ["vllm", "tensorrt-llm", None])
def test_weights_that_leave_no_room_give_zero_streams(engine: str | None) -> None:
    found = ceilings(MODEL, "bf16", SPECS[H100], 1, engine=engine)
    assert isinstance(found, Ceilings)
    assert found.kv_budget_bytes < 0 and found.streams_for(128, 4096) == 0


def _silicon_70b_h200_tp1(isl: int, osl: int) -> LoadCurve:
    return next(
        c
        for c in silicon_curves()
        if c.key.engine == "vllm"
        and c.key.gpu == "H200-SXM-141GB"
        and c.key.tp == 1
        and c.key.model.endswith("Llama-3.1-70B")
        and (c.key.isl, c.key.osl) == (isl, osl)
    )


def test_silicon_levels_that_ran_together_overrule_the_estimate_and_queued_ones_do_not() -> None:
    # 1024/8192: c=64 doubles c=32's throughput with TTFT 5.3 s, where a 38-stream cache would
    # make requests wait minutes: the estimate is wrong. 8192/1024: c=32 ran clean (TTFT 3.1 s,
    # x1.4 of c=16's) above the 22-stream estimate, so that is wrong too (issue 31 item 5); c=64
    # waits 40 s (x12.7) and its throughput barely grows: it queued, and is not counted.
    ran = check_curve(_silicon_70b_h200_tp1(1024, 8192))
    assert ran.memory is not None and ran.memory.estimate_low == 38
    assert ran.max_streams == 64 and ran.memory.contradiction is not None
    queued = check_curve(_silicon_70b_h200_tp1(8192, 1024))
    assert queued.memory is not None and queued.memory.estimate_low == 22
    assert queued.memory.clean_streams == queued.max_streams == 32
    assert queued.memory.contradiction is not None and "ran clean" in queued.memory.contradiction
    # Between 32 and the all-memory bound (56) the capacity is unknown; 64 surely queued.
    assert (queued.memory.low, queued.memory.high) == (32, 56)
    assert [queued.memory.side(c) for c in (32, 48, 64)] == ["below", "uncertain", "above"]


def test_a_stated_fp8_kv_cache_doubles_the_vllm_estimate() -> None:
    stated = ceilings(MODEL, "fp8", SPECS[H100], 1, engine="vllm", kv_cache_dtype="fp8")
    assert isinstance(stated, Ceilings) and stated.kv.text == "fp8 KV cache (stated)"
    assert stated.streams_for(128, 4096) == 17  # 6.415 GB / (163,840 B x 2,176 tokens)


@pytest.mark.parametrize(
    ("engine_args", "command", "dtype"),
    [
        ({"kv_cache_dtype": "fp8"}, "", "fp8"),
        ({"kv_cache_quant_algo": "FP8"}, "", "fp8"),
        ({}, "vllm serve m --kv-cache-dtype fp8_e4m3 --port 8000", "fp8_e4m3"),
        ({}, "python -m vllm.entrypoints.openai.api_server --kv_cache_dtype=fp8", "fp8"),
        ({"kv_cache_dtype": "auto"}, "vllm serve m --kv-cache-dtype auto", None),
        ({}, "vllm serve m", None),
    ],
)
def test_the_stated_kv_dtype_is_read_from_engine_args_or_the_launch_command(
    engine_args: dict[str, str], command: str, dtype: str | None
) -> None:
    assert stated_kv_cache_dtype(engine_args, command) == dtype


def test_levels_that_ran_clean_above_the_estimate_raise_the_capacity() -> None:
    check = check_curve(issue_31_curve())
    assert check.memory is not None and check.memory.estimate_low == 14
    assert check.memory.clean_streams == 16 and check.max_streams is not None
    assert check.max_streams >= 16 and check.memory.low >= 16
    assert (
        check.memory.contradiction is not None and "estimate is wrong" in check.memory.contradiction
    )
    # The estimate is known wrong: only the all-memory bound caps it, so 32 is uncertain.
    assert check.memory.high == check.memory.knee == 34
    assert check.memory.side(32) == "uncertain" and check.memory.side(64) == "above"


@pytest.mark.parametrize("stated", [8, 30])
def test_the_engines_own_report_overrides_the_estimate_both_ways(stated: int) -> None:
    report = EngineKvReport(stated * 14048 + 100)
    check = check_curve(replace(issue_31_curve(report), points=()))
    assert check.memory is not None and check.memory.estimate_low == 14
    assert check.memory.stated_streams == stated == check.max_streams
    assert (check.memory.low, check.memory.high, check.memory.knee) == (stated, stated, stated)
    assert check.memory.source == "stated" and check.memory.contradiction is None
    assert any("engine reported" in note and "used" in note for note in check.notes)


def test_a_vllm_concurrency_line_alone_states_the_capacity() -> None:
    # 2.5 requests of 131,072 tokens: 327,680 tokens, 23 streams of 14,048.
    report = EngineKvReport(None, max_concurrency=2.5, max_concurrency_at_tokens=131072)
    check = check_curve(replace(issue_31_curve(report), points=()))
    assert check.memory is not None and check.memory.stated_streams == 23


def test_a_clean_level_above_the_engines_report_still_raises_it() -> None:
    check = check_curve(issue_31_curve(EngineKvReport(10 * 14048)))
    assert check.memory is not None and check.memory.stated_streams == 10
    assert check.max_streams == 16


def test_an_estimate_with_an_unknown_kv_dtype_is_a_range_not_a_number() -> None:
    unknown = _h100_70b_fp8("sglang").capacity(128, 4096)
    assert (unknown.low, unknown.high, unknown.source) == (8, 17, "estimate")
    assert [unknown.side(c) for c in (8, 12, 17, 18)] == [
        "below",
        "uncertain",
        "uncertain",
        "above",
    ]
    assert unknown.knee == 17  # queueing only where the estimate surely says so
    known = _h100_70b_fp8("vllm").capacity(128, 4096)
    assert (known.low, known.high, known.knee) == (8, 8, 8)


def test_a_capacity_with_no_upper_bound_is_uncertain_all_the_way_up() -> None:
    assert capacity_side(16, None, 1e6) == "uncertain"
    assert capacity_side(16, None, 16) == "below"


def test_a_level_whose_ttft_jumps_ends_the_clean_run() -> None:
    def point(c: float, ttft: float) -> CurvePoint:
        return CurvePoint(c, p50_ttft_ms=ttft)

    jump = CLEAN_TTFT_RATIO * 1300.0
    assert clean_streams((point(8, 1000), point(16, 1300), point(32, jump), point(64, jump))) == 16
    assert clean_streams((point(8, 1000), CurvePoint(16.0, output_tok_s=5.0))) == 8
    assert clean_streams((CurvePoint(8.0, output_tok_s=5.0),)) is None


def test_the_engines_report_carries_to_other_workloads_and_the_levels_do_not() -> None:
    curve = issue_31_curve(EngineKvReport(20 * 14048))
    ceil = ceilings(MODEL, "fp8", SPECS["H200-SXM-141GB"], 1, engine="vllm")
    assert isinstance(ceil, Ceilings)
    assert workload_capacity(ceil, curve, 12000, 4096).streams == 20
    # Half the tokens a stream: twice the streams, from the same reported cache.
    assert workload_capacity(ceil, curve, 5000, 2048).stated_streams == 46
    plain = replace(curve, engine_kv=None)
    assert workload_capacity(ceil, plain, 12000, 4096).clean_streams == 16
    assert workload_capacity(ceil, plain, 5000, 2048).clean_streams is None
