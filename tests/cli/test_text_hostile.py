"""What `capplan runs` prints of a stored text never drives or reorders the terminal: an engine
version holding ESC and a right-to-left isolate (U+2066) is shown escaped; a model name holding a
right-to-left override (U+202E) is stored without it (names are cleaned where they enter)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app

pytestmark = pytest.mark.hostile

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
C8 = ROOT / "tests" / "fixtures" / "vllm-cpu-real" / "c8.json"
MODEL = "evil\u202egnp.exe"
VERSION = "0.3\x1b[31mRED\u2066"


def test_runs_shows_bidi_and_escape_characters_escaped(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    facts = ["--engine", "vllm", "--engine-version", VERSION, "--gpu", "H100-SXM-80GB"]
    made = runner.invoke(app, ["import", str(C8), "--model", MODEL, *facts, "--db", url])
    assert made.exit_code == 0, made.output
    # In its own process, as a terminal would run it: rich's width in a shared test process
    # can follow another test's terminal and cut the name short.
    shown = subprocess.run(
        [sys.executable, "-m", "cli", "runs", "--db", url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "300"},
        timeout=120,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert not any(char in shown.stdout for char in "\u202e\u2066\x1b")
    assert "evilgnp.exe" in shown.stdout and "0.3\\x1b[31mRED\\u2066" in shown.stdout
    listed = runner.invoke(app, ["runs", "--json", "--db", url])
    assert "\u202e" not in listed.stdout  # JSON writes it as the \u202e escape
    assert "\u2066" not in listed.stdout  # JSON writes it as the \u2066 escape
    stored = json.loads(listed.stdout)[0]["deployment"]
    assert stored["model"] == "evilgnp.exe"  # a name: the override removed as it entered
    assert stored["engine_version"] == VERSION  # not a name: stored as given, shown escaped
