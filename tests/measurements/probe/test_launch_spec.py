"""Launch specs: the exact vLLM, trtllm-serve and trtllm-build command lines (pinned to the
engines' documented flags) and the engine arguments read back from an argv."""

from __future__ import annotations

from pathlib import Path

import pytest

from errors import InputError
from measurements.probe.launch_spec import (
    LaunchSpec,
    TrtBuildSpec,
    engine_args,
    port_from_argv,
    server_command,
    trtllm_build_command,
    trtllm_serve_command,
    vllm_command,
)


def test_vllm_serve_command_line() -> None:
    spec = LaunchSpec(
        engine="vllm",
        model="meta-llama/Llama-3.1-70B-Instruct",
        port=8000,
        tp=2,
        max_model_len=16384,
        gpu_memory_utilization=0.9,
        extra_args=("--quantization", "fp8"),
    )
    assert vllm_command(spec) == [
        "vllm", "serve", "meta-llama/Llama-3.1-70B-Instruct",
        "--host", "127.0.0.1", "--port", "8000", "--tensor-parallel-size", "2",
        "--max-model-len", "16384", "--gpu-memory-utilization", "0.9",
        "--quantization", "fp8",
    ]  # fmt: skip


def test_vllm_module_command_line_for_cpu_builds() -> None:
    # The design notes' CPU recipe: the console script fails on package metadata, the module works.
    spec = LaunchSpec(
        engine="vllm",
        model="/tmp/tiny",
        port=8123,
        vllm_entrypoint="module",
        python="/opt/vllm/bin/python",
        max_model_len=2048,
        gpu_memory_utilization=0.1,
        max_batch_size=64,
        served_model_name="tiny",
        extra_args=("--dtype", "bfloat16"),
        env={"VLLM_CPU_KVCACHE_SPACE": "1"},
    )
    assert server_command(spec) == [
        "/opt/vllm/bin/python", "-m", "vllm.entrypoints.openai.api_server", "--model", "/tmp/tiny",
        "--host", "127.0.0.1", "--port", "8123", "--tensor-parallel-size", "1",
        "--served-model-name", "tiny", "--max-model-len", "2048", "--max-num-seqs", "64",
        "--gpu-memory-utilization", "0.1", "--dtype", "bfloat16",
    ]  # fmt: skip


def test_trtllm_serve_command_line() -> None:
    spec = LaunchSpec(
        engine="tensorrt-llm",
        model="meta-llama/Llama-3.1-70B-Instruct",
        host="0.0.0.0",
        port=8000,
        tp=2,
        max_batch_size=128,
        max_num_tokens=8192,
        kv_cache_free_gpu_memory_fraction=0.9,
    )
    assert trtllm_serve_command(spec) == [
        "trtllm-serve", "meta-llama/Llama-3.1-70B-Instruct", "--host", "0.0.0.0", "--port", "8000",
        "--backend", "pytorch", "--tp_size", "2", "--max_batch_size", "128",
        "--max_num_tokens", "8192", "--kv_cache_free_gpu_memory_fraction", "0.9",
    ]  # fmt: skip


def test_trtllm_serves_a_built_engine_with_the_tensorrt_backend_and_tokenizer() -> None:
    build = TrtBuildSpec(
        checkpoint_dir=Path("/data/ckpt"), output_dir=Path("/data/engine"), gemm_plugin="fp8"
    )
    spec = LaunchSpec(engine="tensorrt-llm", model="/data/hf/llama", port=8000, build=build)
    assert trtllm_serve_command(spec) == [
        "trtllm-serve", "/data/engine", "--host", "127.0.0.1", "--port", "8000",
        "--backend", "tensorrt", "--tp_size", "1", "--tokenizer", "/data/hf/llama",
    ]  # fmt: skip


def test_trtllm_build_command_line_as_in_the_seed_article() -> None:
    build = TrtBuildSpec(
        checkpoint_dir=Path("/data/trt_checkpoints/llama70b_fp8"),
        output_dir=Path("/data/engines/llama70b_fp8"),
        gemm_plugin="fp8",
        max_batch_size=128,
        max_num_tokens=16384,
        extra_args=("--gpt_attention_plugin", "fp8"),
    )
    assert trtllm_build_command(build) == [
        "trtllm-build", "--checkpoint_dir", "/data/trt_checkpoints/llama70b_fp8",
        "--output_dir", "/data/engines/llama70b_fp8", "--gemm_plugin", "fp8",
        "--max_batch_size", "128", "--max_num_tokens", "16384",
        "--gpt_attention_plugin", "fp8",
    ]  # fmt: skip


def test_explicit_command_wins_and_other_needs_one() -> None:
    spec = LaunchSpec(engine="vllm", model="m", port=1, command=("my-server", "--port", "1"))
    assert server_command(spec) == ["my-server", "--port", "1"]
    with pytest.raises(InputError, match="command"):
        server_command(LaunchSpec(engine="other", model="m", port=1))


def test_engine_args_and_port_from_argv() -> None:
    argv = ["vllm", "serve", "m", "--port", "8001", "--enforce-eager", "--dtype=bfloat16"]
    assert engine_args(argv) == {"port": "8001", "enforce-eager": "true", "dtype": "bfloat16"}
    assert port_from_argv(argv) == 8001
    assert port_from_argv(["server"]) is None
