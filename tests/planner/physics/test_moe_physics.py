"""MoE and Blackwell physics: expert reads that grow with the batch, MLA's small KV cache,
attention DP copies, the bounds on the shared sample, and cross-generation projection labels."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from hardware.gpus import gpu_catalog
from measurements.demo.runs import DATA_DIR
from measurements.importers import import_path
from planner.curves.load import CurveKey, CurvePoint, LoadCurve, curve_from_run
from planner.engine.project import project_through_model
from planner.engine.reach_errors import reach_error
from planner.engine.spec import engine_spec
from planner.physics.projection import CROSS_GENERATION_ERROR, project_curve
from planner.physics.roofline import Ceilings, ceilings, check_curve

H200 = gpu_catalog().find("H200")
B200 = gpu_catalog().find("B200")
assert H200 is not None and B200 is not None


def _ceil(model: str, precision: str, tp: int, dp: int = 1) -> Ceilings:
    found = ceilings(model, precision, H200, tp, engine="sglang", attention_dp=dp)
    assert isinstance(found, Ceilings), found
    return found


def test_decode_reads_the_experts_the_batch_touches_growing_toward_the_whole_model() -> None:
    ceil = _ceil("deepseek-ai/DeepSeek-R1", "fp8", 8)
    spec = engine_spec(ceil, H200, "sglang")
    assert not isinstance(spec, str)
    tokens = np.array([1.0, 8.0, 64.0, 1024.0])
    read = spec.weights_read(tokens, np.ones_like(tokens))
    assert read[0] == pytest.approx(ceil.always_read_bytes + ceil.expert_bytes * 8 / 256)
    assert np.all(np.diff(read) > 0)  # more tokens touch more experts
    assert read[-1] == pytest.approx(ceil.always_read_bytes + ceil.expert_bytes, rel=1e-6)
    # The single-stream bound reads only the active parameters (37B at 1 byte, 8 GPUs).
    assert ceil.decode_read_bytes / 1e9 == pytest.approx(37.6, rel=0.03)


def test_attention_dp_keeps_a_copy_of_the_dense_weights_per_rank() -> None:
    one = _ceil("deepseek-ai/DeepSeek-R1", "fp8", 8, dp=1)
    eight = _ceil("deepseek-ai/DeepSeek-R1", "fp8", 8, dp=8)
    copied = one.weight_bytes - one.expert_bytes
    assert eight.weight_bytes == pytest.approx(one.expert_bytes + 8 * copied)


def test_mla_fits_far_more_streams_than_its_head_count_suggests() -> None:
    ceil = _ceil("deepseek-ai/DeepSeek-R1", "fp8", 8)
    per_token_16bit = ceil.kv_bytes(1.0, 2.0)
    assert per_token_16bit == 61 * 576 * 2  # 70 KB a token, not 61 x 128 heads x 256 x 2
    assert ceil.streams_for(1024, 1024) > 500


def test_no_measured_point_of_the_shared_sample_is_flagged_impossible() -> None:
    runs = import_path(DATA_DIR / "silicon_sample_2026_blackwell_moe.csv").runs
    flags = []
    checked = 0
    for run in runs:
        curve = curve_from_run(run)
        assert curve is not None
        check = check_curve(curve)
        checked += check.ceilings is not None
        flags.extend(check.flags)
    assert flags == []
    assert checked >= len(runs) - 5  # all but the rows whose precision is blank


def test_a_405b_claiming_100_tok_s_on_one_h100_is_flagged() -> None:
    key = CurveKey("vllm", None, "meta-llama/Llama-3.1-405B-Instruct", "fp-8", "H100-SXM-80GB",
                   1, 1, 1024, 1024)  # fmt: skip
    curve = LoadCurve(key, (CurvePoint(1, output_tok_s=100.0),), None, "measured", None, None,
                      None, 1, ())  # fmt: skip
    check = check_curve(curve)
    assert check.ceilings is not None and check.above_ceiling
    assert "single-stream decode ceiling" in check.flags[0]


def test_a_projection_to_blackwell_carries_the_cross_generation_error() -> None:
    runs = import_path(DATA_DIR / "silicon_sample_h100_h200.csv").runs
    curve = next(
        c for c in (curve_from_run(r) for r in runs)
        if c is not None and c.key.gpu == "H200-SXM-141GB" and c.key.engine == "vllm"
        and "70B" in c.key.model
    )  # fmt: skip
    to_b200 = project_through_model(curve, "B200")  # the product's projection
    assert not isinstance(to_b200, str)
    stated = reach_error("across generations", CROSS_GENERATION_ERROR)
    assert to_b200.basis_error == stated
    assert any("across GPU generations" in f and stated.text() in f for f in to_b200.flags)
    assert any("native FP8 on B200" in f for f in to_b200.flags)
    to_h100 = project_through_model(curve, "H100")
    assert not isinstance(to_h100, str) and to_h100.basis_error is None  # same generation, dense


def test_fp4_on_hopper_projects_ttft_by_the_bf16_peaks() -> None:
    key = CurveKey("vllm", None, "openai/gpt-oss-120b", "fp4", "H100-SXM-80GB", 2, 2, 1024, 1024)
    point = CurvePoint(8, output_tok_s=900.0, ttft_ms=120.0, tpot_ms=8.0)
    curve = LoadCurve(key, (point,), None, "published", None, None, None, 2, ())
    projected = project_curve(replace(curve), "B200")
    assert not isinstance(projected, str)
    assert projected.points[0].ttft_ms == pytest.approx(120.0 * 989 / 2250, rel=0.01)
