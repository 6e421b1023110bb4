"""The README's first command, run as written in a fresh copy of the repository: it installs
capplan into its own .venv, starts the app on the embedded default store (SQLite, demo data on
first start), and the page in chromium shows a recommendation with a monthly cost.

This is what a new user does first; no other test goes through scripts/run-app.sh and
`capplan app` (the other browser tests start Streamlit themselves).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from tests.browser.app_server import ROOT, healthy
from tests.browser.conftest import VIEWPORT
from tests.browser.pages import open_page, recommendation
from tests.ports import free_port

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# A fresh .venv: pip installs every requirement (from its cache after the first time).
INSTALL_AND_START_TIMEOUT_S = 900.0
STOP_TIMEOUT_S = 20.0


def readme_first_command() -> str:
    """The first command of the README's quick start (the first ```bash block after its heading)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Quick start")
    match = re.search(r"```bash\n(.+?)\n```", readme[start:], flags=re.DOTALL)
    assert match is not None, "the README's quick start has no ```bash block"
    lines = [line for line in match.group(1).splitlines() if line.strip()]
    assert len(lines) == 1, f"the quick start's first block should be one command: {lines}"
    return lines[0]


def fresh_copy(target: Path) -> Path:
    """The files git would hand a new clone (tracked and new, not ignored), nothing built."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if not source.is_file():
            continue  # deleted in the work tree, not yet committed
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination)
    return target


def _tail(log: Path) -> str:
    return log.read_text(encoding="utf-8", errors="replace")[-4000:] if log.exists() else ""


@pytest.fixture(scope="module")
def quickstart_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The README's first command running in a fresh copy; yields its URL and the copy."""
    copy = fresh_copy(tmp_path_factory.mktemp("fresh-clone"))
    port = free_port()
    log = copy / "quickstart.log"
    env = {key: value for key, value in os.environ.items() if not key.startswith("CAPPLAN_")}
    env.pop("VIRTUAL_ENV", None)
    command = f"{readme_first_command()} --port {port}"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            ["bash", "-c", command],
            cwd=copy,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + INSTALL_AND_START_TIMEOUT_S
        while not healthy(base):
            if process.poll() is not None:
                pytest.fail(
                    f"`{command}` exited with code {process.returncode} before the app answered:"
                    f"\n{_tail(log)}",
                    pytrace=False,
                )
            if time.monotonic() > deadline:
                pytest.fail(f"`{command}` did not answer {base} in time:\n{_tail(log)}")
            time.sleep(1.0)
        yield base, copy
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=STOP_TIMEOUT_S)


def test_readme_quick_start_serves_a_recommendation(
    quickstart_app: tuple[str, Path], browser: Browser
) -> None:
    base, copy = quickstart_app
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    try:
        open_page(page, base, "plan")
        text = recommendation(page).inner_text()
        assert re.search(r"\$[\d,]+/month", text), text
    finally:
        context.close()
    # The embedded default store, made in the copy itself, holding the demo data.
    store = copy / "data" / "capplan.db"
    assert store.is_file() and store.stat().st_size > 0, sorted(copy.glob("data/*"))
    log = (copy / "quickstart.log").read_text(encoding="utf-8", errors="replace")
    assert f"capplan on http://localhost:{base.rsplit(':', 1)[1]}" in log, log[-2000:]
