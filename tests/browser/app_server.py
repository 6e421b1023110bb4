"""Start the real capplan app (streamlit run app.py) on a free port and a given SQLite store,
and find Debian's chromium for Playwright: shared by the browser tests and scripts/screenshots.py.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
STREAMLIT = ROOT / ".venv" / "bin" / "streamlit"
PYTHON = ROOT / ".venv" / "bin" / "python"
# Streamlit imports plotly, pandas and the planner before it answers: 5 s here, far more on a
# loaded 2-core CI box.
STARTUP_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 20.0
LOG_TAIL_CHARS = 3000
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
# Debian's chromium runs as root in CI containers: without --no-sandbox it refuses to start.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-dev-shm-usage"]


class AppStartError(RuntimeError):
    """The app did not answer its health check (the message carries the log tail)."""


@dataclass(frozen=True, slots=True)
class RunningApp:
    """A started app: its base URL, the store it uses and its log file."""

    url: str
    db_url: str
    log: Path


def chromium_path() -> str | None:
    """The chromium executable: $CAPPLAN_CHROMIUM, else Debian's /usr/bin/chromium, else PATH."""
    configured = os.environ.get("CAPPLAN_CHROMIUM")
    if configured:
        return configured if Path(configured).exists() else None
    for candidate in CHROMIUM_CANDIDATES:
        if Path(candidate).exists():
            return candidate
    return shutil.which("chromium")


def _log_tail(log: Path) -> str:
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    return text[-LOG_TAIL_CHARS:]


def healthy(base: str) -> bool:
    """True when the app at base answers its health check."""
    try:
        with urllib.request.urlopen(f"{base}/_stcore/health", timeout=5) as response:
            return bool(response.status == 200 and response.read().strip() == b"ok")
    except (urllib.error.URLError, OSError):
        return False


def _wait_healthy(process: subprocess.Popen[bytes], base: str, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AppStartError(
                f"streamlit exited with code {process.returncode} before answering:\n"
                f"{_log_tail(log)}"
            )
        if healthy(base):
            return
        time.sleep(0.25)
    raise AppStartError(
        f"streamlit did not answer {base}/_stcore/health within {STARTUP_TIMEOUT_S:.0f} s:\n"
        f"{_log_tail(log)}"
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=STOP_TIMEOUT_S)


@contextmanager
def running_app(
    db_url: str, log: Path, prepare: Callable[[str], None] | None = None
) -> Iterator[RunningApp]:
    """Run `streamlit run app.py` on the store at db_url (a store without runs gets the demo data
    on first start); prepare, when given, gets the URL first (to seed it before the app starts)."""
    if not STREAMLIT.exists():
        raise AppStartError(f"{STREAMLIT} is missing: run scripts/bootstrap.sh dev first")
    port = free_port()
    if prepare is not None:
        prepare(db_url)
    command = [
        str(PYTHON),
        "-m",
        "ui.serve",  # as `capplan app` does: streamlit run, the pages' imports loaded first
        "run",
        str(ROOT / "app.py"),
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
    ]
    env = {**os.environ, "CAPPLAN_DB": db_url}
    base = f"http://127.0.0.1:{port}"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT
        )
        try:
            _wait_healthy(process, base, log)
            yield RunningApp(url=base, db_url=db_url, log=log)
        finally:
            _stop(process)
