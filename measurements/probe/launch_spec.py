"""What to launch: the engine server (and optional TensorRT-LLM engine build) specs, and the exact
`vllm serve` / `trtllm-serve` / `trtllm-build` command lines built from them."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from errors import InputError

VLLM_MODULE = "vllm.entrypoints.openai.api_server"


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TrtBuildSpec(_Spec):
    """An ahead-of-time TensorRT-LLM engine build (`trtllm-build`), timed as engine_build_s."""

    checkpoint_dir: Path = Field(description="TensorRT-LLM checkpoint (convert_checkpoint output)")
    output_dir: Path = Field(description="Where the engine is written; served afterwards")
    gemm_plugin: str = Field("auto", description="--gemm_plugin: auto, fp8, bfloat16, float16")
    max_batch_size: int = Field(256, ge=1, description="--max_batch_size baked into the engine")
    max_num_tokens: int = Field(8192, ge=1, description="--max_num_tokens baked into the engine")
    max_seq_len: int | None = Field(None, ge=1, description="--max_seq_len (prompt + output)")
    extra_args: tuple[str, ...] = Field((), description="Further trtllm-build arguments")
    executable: str = Field("trtllm-build", description="The trtllm-build program")
    timeout_s: float = Field(7200, gt=0, description="Longest the build may take, seconds")


class LaunchSpec(_Spec):
    """How to start one engine server; `command` (argv) overrides the built command line."""

    engine: Literal["vllm", "tensorrt-llm", "other"]
    model: str = Field(description="Model dir or HF name as the engine is given it")
    command: tuple[str, ...] | None = Field(None, description="Explicit argv; else built")
    host: str = "127.0.0.1"
    port: int = Field(ge=1, le=65535)
    tp: int = Field(1, ge=1, description="Tensor-parallel size")
    served_model_name: str | None = None
    max_model_len: int | None = Field(None, ge=1, description="--max-model-len / --max_seq_len")
    max_batch_size: int | None = Field(None, ge=1, description="--max-num-seqs / --max_batch_size")
    max_num_tokens: int | None = Field(
        None, ge=1, description="--max-num-batched-tokens / --max_num_tokens"
    )
    gpu_memory_utilization: float | None = Field(None, gt=0, le=1, description="vLLM only")
    kv_cache_free_gpu_memory_fraction: float | None = Field(
        None, gt=0, le=1, description="trtllm-serve only: free memory share for the KV cache"
    )
    vllm_entrypoint: Literal["serve", "module"] = Field(
        "serve", description="`vllm serve` or `python -m vllm.entrypoints.openai.api_server`"
    )
    python: str = Field("python", description="Interpreter for the module entrypoint")
    trtllm_backend: str | None = Field(
        None, description="trtllm-serve --backend; default pytorch, or tensorrt for an engine dir"
    )
    extra_args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict, description="Added to the environment")
    health_timeout_s: float = Field(1800, gt=0, description="Launch to first completion, at most")
    api_key_env: str | None = Field(
        None, description="NAME of the env var holding the server's API key (never the key)"
    )
    engine_dir: Path | None = Field(None, description="A built TensorRT-LLM engine to serve")
    build: TrtBuildSpec | None = None

    @property
    def base_url(self) -> str:
        """http://host:port of the server this spec starts."""
        return f"http://{self.host}:{self.port}"


def vllm_command(spec: LaunchSpec) -> list[str]:
    """The vLLM argv: `vllm serve MODEL ...` or the api_server module form (CPU builds need it)."""
    if spec.vllm_entrypoint == "module":
        argv = [spec.python, "-m", VLLM_MODULE, "--model", spec.model]
    else:
        argv = ["vllm", "serve", spec.model]
    argv += ["--host", spec.host, "--port", str(spec.port), "--tensor-parallel-size", str(spec.tp)]
    argv += _flags(
        ("--served-model-name", spec.served_model_name),
        ("--max-model-len", spec.max_model_len),
        ("--max-num-seqs", spec.max_batch_size),
        ("--max-num-batched-tokens", spec.max_num_tokens),
        ("--gpu-memory-utilization", spec.gpu_memory_utilization),
    )
    return argv + list(spec.extra_args)


def trtllm_serve_command(spec: LaunchSpec) -> list[str]:
    """The `trtllm-serve` argv; an engine dir is served with the TensorRT backend and the
    model's tokenizer."""
    engine_dir = spec.engine_dir or (spec.build.output_dir if spec.build else None)
    target = str(engine_dir) if engine_dir else spec.model
    backend = spec.trtllm_backend or ("tensorrt" if engine_dir else "pytorch")
    argv = ["trtllm-serve", target, "--host", spec.host, "--port", str(spec.port)]
    argv += ["--backend", backend, "--tp_size", str(spec.tp)]
    argv += _flags(
        ("--tokenizer", spec.model if engine_dir else None),
        ("--served_model_name", spec.served_model_name),
        ("--max_seq_len", spec.max_model_len),
        ("--max_batch_size", spec.max_batch_size),
        ("--max_num_tokens", spec.max_num_tokens),
        ("--kv_cache_free_gpu_memory_fraction", spec.kv_cache_free_gpu_memory_fraction),
    )
    return argv + list(spec.extra_args)


def trtllm_build_command(build: TrtBuildSpec) -> list[str]:
    """The `trtllm-build` argv for an ahead-of-time engine build."""
    argv = [build.executable, "--checkpoint_dir", str(build.checkpoint_dir)]
    argv += ["--output_dir", str(build.output_dir), "--gemm_plugin", build.gemm_plugin]
    argv += ["--max_batch_size", str(build.max_batch_size)]
    argv += ["--max_num_tokens", str(build.max_num_tokens)]
    argv += _flags(("--max_seq_len", build.max_seq_len))
    return argv + list(build.extra_args)


def server_command(spec: LaunchSpec) -> list[str]:
    """The argv `launch` runs: the explicit command, else the engine's own command line."""
    if spec.command is not None:
        return list(spec.command)
    if spec.engine == "vllm":
        return vllm_command(spec)
    if spec.engine == "tensorrt-llm":
        return trtllm_serve_command(spec)
    raise InputError("engine 'other' needs an explicit command (--launch)", field="command")


def engine_args(argv: list[str] | tuple[str, ...]) -> dict[str, str]:
    """`--flag value` pairs of an argv as a dict (a bare flag maps to "true"), for the RunFile."""
    args: dict[str, str] = {}
    for i, word in enumerate(argv):
        if not word.startswith("--"):
            continue
        name, sep, value = word[2:].partition("=")
        if not sep:
            follows = i + 1 < len(argv) and not argv[i + 1].startswith("--")
            value = argv[i + 1] if follows else "true"
        args[name] = value
    return args


def port_from_argv(argv: list[str] | tuple[str, ...]) -> int | None:
    """The value of `--port` in an argv, when there is one."""
    value = engine_args(argv).get("port")
    return int(value) if value is not None and value.isdigit() else None


def _flags(*pairs: tuple[str, object]) -> list[str]:
    out: list[str] = []
    for flag, value in pairs:
        if value is not None:
            out += [flag, str(value)]
    return out
