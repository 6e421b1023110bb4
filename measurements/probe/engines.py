"""Engine launchers: build the exact `vllm serve` / `trtllm-serve` / `trtllm-build` command lines,
start the server in its own process group with its output in a log file, wait for health and a
first completion (cold start), and stop it: SIGTERM to the group, then SIGKILL after a timeout.

CapplanError
 +-- EngineError    the server (or engine build) exited, timed out or cannot be reached;
                    the message quotes the exit code and the last lines of the log
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field

from errors import CapplanError, InputError
from measurements.gpu_info import GpuFacts, gpu_facts
from measurements.probe.redaction import redact_argv, redact_text, redact_url

LOG_TAIL_LINES = 20
VLLM_MODULE = "vllm.entrypoints.openai.api_server"


class EngineError(CapplanError):
    """A launched engine exited, timed out or could not be reached."""


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


class RunningServer:
    """A server capplan launched (or attached to): where it is, how it started, how to stop it."""

    def __init__(
        self,
        base_url: str,
        process: subprocess.Popen[bytes] | None = None,
        *,
        log_path: Path | None = None,
        command: list[str] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.process = process
        self.log_path = log_path
        self.command = command
        self.env = dict(env or {})
        self.cold_start_s: float | None = None
        self.engine_build_s: float | None = None
        self.vram_idle_gb: float | None = None
        self.served_model: str | None = None

    @property
    def launch_command(self) -> str | None:
        """The command line (after any `NAME=value` it was given in its environment) as one
        shell-quoted string with secrets masked, for Deployment.launch_command."""
        if not self.command:
            return None
        assignments = [f"{name}={value}" for name, value in self.env.items()]
        return shlex.join(redact_argv([*assignments, *self.command]))

    def stop(self, timeout_s: float = 30) -> None:
        """SIGTERM the process group, wait up to timeout_s, then SIGKILL whatever is left."""
        if self.process is None:
            return
        _stop_group(self.process, timeout_s)

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def attach(base_url: str) -> RunningServer:
    """A server already running (`--base-url`): nothing to start or stop."""
    return RunningServer(base_url)


def launch(
    spec: LaunchSpec,
    log_path: Path,
    *,
    gpu_probe: Callable[[], GpuFacts | None] = gpu_facts,
) -> RunningServer:
    """Build (when asked), start the server, wait for health and one completion; time both."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text("", encoding="utf-8")
    build_s = _run_build(spec.build, log_path) if spec.build else None
    before = gpu_probe()
    argv = server_command(spec)
    process, started_s = _start(argv, spec.env, log_path)
    server = RunningServer(spec.base_url, process, log_path=log_path, command=argv, env=spec.env)
    server.engine_build_s = build_s
    ready = False
    try:
        server.served_model = _wait_ready(server, process, spec, started_s + spec.health_timeout_s)
        server.cold_start_s = time.monotonic() - started_s
        server.vram_idle_gb = _vram_delta_gb(before, gpu_probe())
        ready = True
    finally:
        if not ready:  # timed out, died, or interrupted: never leave a server behind
            server.stop(timeout_s=10)
    return server


def _start(
    argv: list[str], env: dict[str, str], log_path: Path
) -> tuple[subprocess.Popen[bytes], float]:
    with log_path.open("ab") as log:
        log.write(f"$ {shlex.join(redact_argv(argv))}\n".encode())
        log.flush()
        try:
            process = subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **env},
                start_new_session=True,  # its own process group: stop() reaches every worker
            )
        except OSError as exc:
            shown = redact_argv(argv)[0]
            raise EngineError(redact_text(f"could not start {shown!r}: {exc}")) from exc
    return process, time.monotonic()


def _run_build(build: TrtBuildSpec, log_path: Path) -> float:
    argv = trtllm_build_command(build)
    process, started_s = _start(argv, {}, log_path)
    try:
        code = process.wait(timeout=build.timeout_s)
    except subprocess.TimeoutExpired:
        _stop_group(process, 10)
        raise EngineError(
            f"engine build did not finish within {build.timeout_s:g} s; "
            f"last lines of {log_path}:\n{log_tail(log_path)}"
        ) from None
    elapsed_s = time.monotonic() - started_s
    if code != 0:
        raise EngineError(
            f"engine build exited with code {code}; last lines of {log_path}:\n{log_tail(log_path)}"
        )
    return elapsed_s


def _wait_ready(
    server: RunningServer, process: subprocess.Popen[bytes], spec: LaunchSpec, deadline: float
) -> str:
    """Poll until the server answers health and one completion; return the served model id."""
    key = os.environ.get(spec.api_key_env, "") if spec.api_key_env else ""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    timeout = httpx.Timeout(30, connect=2)
    with httpx.Client(base_url=server.base_url, headers=headers, timeout=timeout) as client:
        why = "no attempt yet"
        for _ in _backoff(deadline):
            code = process.poll()
            if code is not None:
                raise EngineError(
                    f"server exited with code {code} during start-up; last lines of "
                    f"{server.log_path}:\n{log_tail(server.log_path)}"
                )
            model, why = _try_first_completion(client, spec)
            if model is not None:
                return model
    raise EngineError(
        f"server did not answer a completion within {spec.health_timeout_s:g} s of launch "
        f"(last try: {why}); last lines of {server.log_path}:\n{log_tail(server.log_path)}"
    )


def _backoff(deadline: float) -> Iterator[None]:
    delay_s = 0.05
    while time.monotonic() < deadline:
        yield
        time.sleep(min(delay_s, max(0.0, deadline - time.monotonic())))
        delay_s = min(delay_s * 1.5, 1.0)


def _try_first_completion(client: httpx.Client, spec: LaunchSpec) -> tuple[str | None, str]:
    """One health + completion attempt: (served model id, "") once ready, else (None, why)."""
    try:
        health = client.get("/health")
        if health.status_code == 404:  # servers without /health: /v1/models is the readiness
            health = client.get("/v1/models")
        if health.status_code != 200:
            return None, f"{health.request.url.path} answered HTTP {health.status_code}"
        model = spec.served_model_name or _first_model(client) or spec.model
        body = {"model": model, "prompt": "Hello", "max_tokens": 1, "stream": False}
        answer = client.post("/v1/completions", json=body)
        if answer.status_code in (404, 405):
            chat = {"model": model, "messages": [{"role": "user", "content": "Hello"}]}
            answer = client.post("/v1/chat/completions", json={**chat, "max_tokens": 1})
    except httpx.HTTPError as exc:
        return None, f"{type(exc).__name__}: {exc}"
    if answer.status_code != 200:
        path = answer.request.url.path
        return None, f"{path} answered HTTP {answer.status_code}: {answer.text[:200]!r}"
    return model, ""


def _first_model(client: httpx.Client) -> str | None:
    try:
        data = client.get("/v1/models").json().get("data") or []
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    first = data[0] if isinstance(data, list) and data else None
    return str(first["id"]) if isinstance(first, dict) and "id" in first else None


def _vram_delta_gb(before: GpuFacts | None, after: GpuFacts | None) -> float | None:
    # What the server took: memory in use after start-up minus before (other tenants cancel out).
    if before is None or after is None:
        return None
    return max(0.0, after.memory_used_gb - before.memory_used_gb)


def _stop_group(process: subprocess.Popen[bytes], timeout_s: float) -> None:
    pgid = process.pid  # start_new_session made the server its own group leader
    _signal_group(pgid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=timeout_s)
    # Workers (vLLM's engine core, TP ranks) may outlive the leader: the group gets SIGKILL.
    _signal_group(pgid, signal.SIGKILL)
    # A process stuck in the kernel ignores even SIGKILL for a while; do not hang on it.
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # the whole group is already gone
        os.killpg(pgid, sig)


def log_tail(log_path: Path | None, lines: int = LOG_TAIL_LINES) -> str:
    """The last lines of a server log (reads at most the last 64 KiB), secrets masked: servers
    print their arguments (vLLM: `non-default args: {'api_key': ...}`) and the tail is shown."""
    if log_path is None or not log_path.exists():
        return "(no log)"
    with log_path.open("rb") as log:
        log.seek(max(0, log.seek(0, os.SEEK_END) - 65536))
        text = log.read().decode("utf-8", errors="replace")
    return redact_text("\n".join(text.splitlines()[-lines:])) or "(log is empty)"


class ServerFacts(_Spec):
    """What a running server says about itself (`/version`, `/v1/models`)."""

    base_url: str
    version: str | None = Field(None, description="`/version` as reported; None when absent")
    models: tuple[str, ...] = Field((), description="Served model ids, base model first")
    max_model_len: int | None = Field(None, description="The base model's max_model_len")
    owned_by: str | None = Field(None, description="`owned_by` of the base model (vllm, ...)")
    lora_adapters: tuple[str, ...] = Field((), description="Models listed with a parent")
    simulated: bool = Field(False, description="True for capplan's simulated engine")
    profile: str | None = Field(None, description="The simulator profile, when simulated")


async def server_facts(
    base_url: str,
    api_key: str | None = None,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    timeout_s: float = 10,
) -> ServerFacts:
    """Read `/version` and `/v1/models`; an unreachable server raises EngineError."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    url = base_url.rstrip("/")
    async with httpx.AsyncClient(
        base_url=url, headers=headers, timeout=timeout_s, transport=transport
    ) as client:
        cards = await _model_cards(client, redact_url(url))  # url only names it in errors
        version = await _version(client)
    base = next((c for c in cards if not c.get("parent")), cards[0] if cards else {})
    max_len = base.get("max_model_len")
    return ServerFacts(
        base_url=url,
        version=_text(version.get("version")),
        models=tuple(str(c["id"]) for c in sorted(cards, key=lambda c: bool(c.get("parent")))),
        max_model_len=max_len if isinstance(max_len, int) else None,
        owned_by=_text(base.get("owned_by")),
        lora_adapters=tuple(str(c["id"]) for c in cards if c.get("parent")),
        simulated=version.get("simulated") is True,
        profile=_text(version.get("profile")),
    )


async def _model_cards(client: httpx.AsyncClient, url: str) -> list[dict[str, object]]:
    try:
        answer = await client.get("/v1/models")
    except httpx.HTTPError as exc:
        raise EngineError(
            redact_text(
                f"could not reach {url}/v1/models ({type(exc).__name__}: {exc}); "
                "is the server running and is the base URL right?"
            )
        ) from exc
    if answer.status_code != 200:
        hint = " (set the API key's environment variable)" if answer.status_code == 401 else ""
        raise EngineError(
            redact_text(
                f"{url}/v1/models answered HTTP {answer.status_code}{hint}: {answer.text[:200]!r}"
            )
        )
    try:
        data = answer.json().get("data")
    except (ValueError, AttributeError) as exc:
        raise EngineError(f"{url}/v1/models did not answer an OpenAI model list") from exc
    return [c for c in data if isinstance(c, dict) and "id" in c] if isinstance(data, list) else []


async def _version(client: httpx.AsyncClient) -> dict[str, object]:
    # /version is optional (older trtllm-serve lacks it): its absence is not an error.
    try:
        answer = await client.get("/version")
        body = answer.json() if answer.status_code == 200 else {}
    except (httpx.HTTPError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def _text(value: object) -> str | None:
    return None if value is None else str(value)
