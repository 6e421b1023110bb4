"""Engine launchers: start the server (after an engine build, when asked) in its own process
group with its output in a log file, wait for health and a first completion (cold start), and
stop it: SIGTERM to the group, then SIGKILL after a timeout.

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

import httpx

from errors import CapplanError
from measurements.atomic_write import fresh_file, open_append
from measurements.gpu_info import GpuFacts, gpu_facts
from measurements.probe.launch_spec import (
    LaunchSpec,
    TrtBuildSpec,
    server_command,
    trtllm_build_command,
)
from measurements.probe.redaction import redact_argv, redact_text

LOG_TAIL_LINES = 20


class EngineError(CapplanError):
    """A launched engine exited, timed out or could not be reached."""


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
    fresh_file(log_path)  # a link planted at the log's name is replaced, never followed
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
    with open_append(log_path) as log:
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
