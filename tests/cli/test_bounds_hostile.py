"""Every numeric flag has a stated range: a value beyond it is refused at once (exit 2, one line
naming the flag, the value and the limit), before any planning, store or request, so
`plan --samples 1000000000` never asks for 37 GiB and `probe --concurrency 100000` never starts."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from cli import app
from measurements.probe.defaults import PROBE_LIMITS
from tests.hostile_server import MODEL, Hostility, hostile_server

pytestmark = pytest.mark.hostile

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
SCENARIO = str(ROOT / "docs" / "scenarios" / "agent-platform.yaml")
PROBE = ["probe", "--model", "m", "--isl", "8", "--osl", "8", "--base-url", "http://127.0.0.1:9"]
# What each command needs besides the flag under test (files that need not exist: the flag is
# refused before any is read).
NEEDS: dict[str, list[str]] = {
    "import": ["import", "missing.json"],
    "runs": ["runs"],
    "audit": ["audit"],
    "fit": ["fit"],
    "predict": ["predict", "--concurrency", "8"],
    "plan": ["plan", SCENARIO],
    "report": ["report", SCENARIO, "--format", "json"],
    "probe": [*PROBE, "--concurrency", "1"],
    "sim-server": ["sim-server"],
    "app": ["app"],
}
# (command, flag, a value beyond its range, the range's words as the error says them)
BEYOND = [
    ("import", "--gpu-count", "5000", "between 1 and 4,096"),
    ("import", "--tp", "0", "between 1 and 1,024"),
    ("import", "--pp", "2000", "between 1 and 1,024"),
    ("import", "--concurrency", "10000000", "between 1 and 1,000,000"),
    ("import", "--request-rate", "nan", "between 0.001 and 1,000,000"),
    ("runs", "--limit", "1000000000000", "between 1 and 100,000"),
    ("audit", "--limit", "0", "between 1 and 10,000"),
    ("runs", "--offset", "-1", "between 0 and 9,223,372,036,854,775,807"),
    ("fit", "--run", "10" + "0" * 30, "between 1 and 9,223,372,036,854,775,807"),
    ("predict", "--run", "0", "between 1 and"),
    ("plan", "--samples", "1000000000", "between 0 and 100,000"),
    ("report", "--samples", "100000000", "between 0 and 100,000"),
    ("report", "--record", "-5", "between 1 and"),
    ("sim-server", "--port", "70000", "between 1 and 65,535"),
    ("sim-server", "--time-scale", "0", "between 0.001 and 1,000"),
    ("app", "--port", "0", "between 1 and 65,535"),
    ("probe", "--isl", "100000000", "less than or equal to 16777216"),
    ("probe", "--osl", "100000000", "less than or equal to 16777216"),
    ("probe", "--burstiness", "1e9", "less than or equal to 100"),
    ("probe", "--requests-per-level", "100000000", "less than or equal to 100000"),
    ("probe", "--duration-per-level", "1e9", "less than or equal to 86400"),
    ("probe", "--isl-stddev", "1e12", "less than or equal to 16777216"),
    ("probe", "--osl-stddev", "1e12", "less than or equal to 16777216"),
    ("probe", "--min-gain-pct", "1e12", "less than or equal to 1000"),
    ("probe", "--ttft-blowup", "1e12", "less than or equal to 10000"),
    ("probe", "--gpu-count", "100000", "less than or equal to 4096"),
    ("probe", "--tp", "100000", "less than or equal to 1024"),
    ("probe", "--pp", "100000", "less than or equal to 1024"),
    ("probe", "--connect-timeout", "1e9", "less than or equal to 86400"),
    ("probe", "--first-byte-timeout", "1e9", "less than or equal to 86400"),
    ("probe", "--chunk-timeout", "1e9", "less than or equal to 86400"),
    ("probe", "--request-timeout", "1e9", "less than or equal to 86400"),
]
DOUBLING = ",".join(str(2**k) for k in range(11))  # 1 .. 1024: 11 levels
# Numeric flags whose range is checked elsewhere than BEYOND's one value (text lists of levels).
LISTS = {("probe", "--concurrency"), ("probe", "--rate"), ("predict", "--concurrency")}


@pytest.mark.parametrize(
    ("command", "flag", "value", "limit"), BEYOND, ids=[f"{c} {f}" for c, f, _, _ in BEYOND]
)
def test_a_value_beyond_a_flags_range_is_refused_at_once_naming_flag_value_and_limit(
    tmp_path: Path, command: str, flag: str, value: str, limit: str
) -> None:
    store = tmp_path / "store.db"
    args = [*NEEDS[command], flag, value]
    if command in ("report", "probe"):
        args += ["--out", str(tmp_path / "r.json")]
    if command != "sim-server":
        args += ["--db", f"sqlite:///{store}"]
    started = time.process_time()  # CPU seconds: a busy box stretches wall time, not these
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert time.process_time() - started < 10
    assert f"field '{flag}'" in result.stderr and limit in result.stderr, result.stderr
    quoted = {f"(got {value})", f"(got {float(value)!r})"}  # as typed, or as the float it read
    assert any(q in result.stderr for q in quoted), result.stderr
    assert not store.exists() and not (tmp_path / "r.json").exists()  # nothing was done


def test_every_numeric_flag_has_a_range_case() -> None:
    command = typer.main.get_command(app)
    numeric = {
        (name, param.opts[0])
        for name, sub in command.commands.items()  # type: ignore[attr-defined]
        if not hasattr(sub, "commands")
        for param in sub.params
        if param.bare_type() in ("int", "float")
    }
    cased = {(c, f) for c, f, _, _ in BEYOND}
    assert numeric <= cased, sorted(numeric - cased)
    assert LISTS.isdisjoint(numeric)  # lists are text flags, checked by the tests below


@pytest.mark.parametrize(
    ("levels", "flag", "words"),
    [
        (["--concurrency", "100000", "--requests-per-level", "100000"], "--concurrency", "10000"),
        (["--rate", "1,2,20000"], "--rate", "less than or equal to 10000"),
        (["--concurrency", ",".join(map(str, range(1, 70)))], "--concurrency", "at most 64 items"),
        (
            ["--concurrency", DOUBLING, "--requests-per-level", "100000"],
            "--requests-per-level",
            "11 levels make 1,100,000 measured requests; one sweep sends at most 1,000,000",
        ),
        (
            ["--concurrency", ",".join(str(c) for c in range(9000, 10000, 50))],
            "--concurrency",
            "one sweep sends at most 1,000,000",
        ),
        (
            ["--concurrency", "1,2,3,4,5,6,7,8", "--duration-per-level", "86400"],
            "--duration-per-level",
            "8 levels of 86400 s is 691,200 s; one sweep runs at most 604,800 s",
        ),
    ],
    ids=["level", "rate", "levels", "requests", "default-requests", "duration"],
)
def test_a_probe_sweep_beyond_its_limits_sends_no_request(
    tmp_path: Path, levels: list[str], flag: str, words: str
) -> None:
    plan = Hostility()
    with hostile_server(plan) as url:
        args = ["probe", "--model", MODEL, "--isl", "8", "--osl", "8", "--base-url", url]
        result = runner.invoke(app, [*args, *levels, "--out", str(tmp_path / "r.json")])
    assert result.exit_code == 2, result.output
    assert f"field '{flag}'" in result.stderr and words in result.stderr, result.stderr
    assert plan.completions == 0 and not (tmp_path / "r.json").exists()


def test_the_limits_leave_a_demanding_real_sweep_alone() -> None:
    biggest = PROBE_LIMITS.concurrency
    levels = [2**k for k in range(14)] + [biggest]  # 1 .. 8192, then 10,000
    defaults = sum(max(32, 8 * c) for c in levels)  # max(32, 8 x load) measured requests each
    assert defaults <= PROBE_LIMITS.requests_per_sweep
    assert len(levels) <= PROBE_LIMITS.levels
