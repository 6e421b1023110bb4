"""The validation split is pinned: which families are held out, and the GPU held out per model."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.validation.split import (  # noqa: E402
    DEV,
    FAMILY,
    HELD_OUT,
    family,
    gpu_split_of,
    held_out_gpu,
    split_of,
)


def test_the_held_out_families_are_pinned() -> None:
    held = sorted({f for f in FAMILY.values() if split_of(f) == HELD_OUT})
    assert held == ["gpt-oss-120b", "llama-3-70b"]


def test_twins_and_re_releases_fall_together() -> None:
    assert family("deepseek-ai/DeepSeek-R1") == family("deepseek-ai/DeepSeek-V3")
    assert split_of("meta-llama/Llama-3.3-70B-Instruct") == split_of("meta-llama/Llama-3.1-70B")
    assert split_of("deepseek-ai/DeepSeek-R1") == split_of("nvidia/DeepSeek-V3.1-NVFP4") == DEV


def test_a_model_on_three_gpus_holds_one_out_and_its_cases_with_it() -> None:
    gpus = ("H200-SXM-141GB", "B200-SXM-180GB", "GB200-NVL72-186GB", "B300-SXM-288GB")
    held = held_out_gpu("deepseek-ai/DeepSeek-R1", gpus)
    assert held == "B200-SXM-180GB"
    assert held_out_gpu("deepseek-ai/DeepSeek-R1", gpus[:2]) is None
    assert gpu_split_of("deepseek-ai/DeepSeek-R1", ("H200-SXM-141GB", held), held) == HELD_OUT
    pair = ("H200-SXM-141GB", "GB200-NVL72-186GB")
    assert gpu_split_of("deepseek-ai/DeepSeek-R1", pair, held) == DEV
