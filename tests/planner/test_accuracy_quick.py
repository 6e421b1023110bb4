"""The accuracy benchmark's quick mode holds its targets on the measured silicon sample."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_fit_accuracy.py"
TOK_S_TARGET_PCT = 5.0
TTFT_TARGET_PCT = 15.0


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_fit_accuracy", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def quick() -> Any:
    """The quick report (the bench script is not a package, so its types stay dynamic)."""
    return _bench().report(quick=True)


def _mape(report: Any, group: str, metric: str) -> float:
    value = report.mape[group][metric]["mape_pct"]
    assert isinstance(value, float)
    return value


def test_quick_mode_covers_every_engine_gpu_pair_of_the_sample(quick: Any) -> None:
    assert quick.curves == 11
    assert set(quick.mape) == {
        "tensorrt-llm H200-SXM-141GB",
        "vllm H100-SXM-80GB",
        "vllm H200-SXM-141GB",
    }


@pytest.mark.parametrize("group", ["tensorrt-llm H200-SXM-141GB", "vllm H100-SXM-80GB"])
def test_output_tok_s_meets_the_5_pct_target(quick: Any, group: str) -> None:
    assert _mape(quick, group, "output_tok_s") <= TOK_S_TARGET_PCT


def test_vllm_h200_output_tok_s_meets_the_5_pct_target_with_the_sibling_shape(
    quick: Any,
) -> None:
    assert _mape(quick, "vllm H200-SXM-141GB", "output_tok_s") <= TOK_S_TARGET_PCT


def test_the_sibling_shape_is_what_brings_vllm_h200_under_the_target(quick: Any) -> None:
    """Plain fits miss it (7.4%): at TP 1-4 the measured tok/s sags at 32 streams and recovers
    at 64, which no smooth per-curve law predicts from the other levels."""
    plain = _mape(quick, "vllm H200-SXM-141GB", "output_tok_s_plain")
    assert 7.0 < plain <= 7.5
    assert _mape(quick, "vllm H200-SXM-141GB", "output_tok_s") < plain - 2.5


def test_the_sibling_shape_changes_output_tok_s_only() -> None:
    bench = _bench()
    curves = [
        c
        for c in bench.load_curves(quick=True)
        if c.key.engine == "vllm" and c.key.gpu == "H200-SXM-141GB"
    ]
    fits = [bench.fit_curve(c) for c in curves]
    curve = curves[0]
    shape = bench.shape_for(curve, fits)
    assert shape is not None
    shaped, plain = bench.held_out(curve, shape), bench.held_out(curve, None)
    assert [p for p in shaped if p.metric != "output_tok_s"] == [
        p for p in plain if p.metric != "output_tok_s"
    ]
    moved = [
        (a.predicted, b.predicted)
        for a, b in zip(shaped, plain, strict=True)
        if a.metric == "output_tok_s"
    ]
    assert moved and any(a != b for a, b in moved)


@pytest.mark.parametrize(
    "group", ["tensorrt-llm H200-SXM-141GB", "vllm H100-SXM-80GB", "vllm H200-SXM-141GB"]
)
def test_ttft_meets_the_15_pct_target_and_beats_aiconfigurator(quick: Any, group: str) -> None:
    stats = quick.mape[group]["ttft_ms"]
    assert stats["mape_pct"] <= TTFT_TARGET_PCT
    assert stats["aic_mape_pct"] is not None and stats["mape_pct"] < stats["aic_mape_pct"]


@pytest.mark.parametrize("metric", ["output_tok_s", "ttft_ms", "tpot_ms"])
def test_engine_ranking_is_right_wherever_the_gap_exceeds_the_band(quick: Any, metric: str) -> None:
    row = quick.ranking[metric]
    assert row["decisive_pairs"] >= 3
    assert row["agreement_pct"] == 100.0


def test_json_output_is_strict_json_with_every_held_out_level(quick: Any) -> None:
    body = json.loads(quick.to_json())
    assert body["quick"] is True and body["curves"] == 11
    assert len(body["held_out"]) == sum(
        stats["levels"] for group in body["mape"].values() for stats in group.values()
    )
