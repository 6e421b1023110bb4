"""`capplan probe` against a hostile server (tests/hostile_server.py): lying usage, stalls, one
huge event, an echoed API key, a 300-character `/version`, NUL, ESC and bidi controls in what it
says. Each case ends within a time bound
(and, where the issue measured a blow-up, a memory bound) with the run file written and stored."""

from __future__ import annotations

import gzip
import json
import resource
import sqlite3
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from cli import app
from measurements.probe.defaults import TIMEOUT_DEFAULTS
from tests.hostile_server import MODEL, Hostility, hostile_server

pytestmark = pytest.mark.hostile

runner = CliRunner()
KEY = "Zq8-hostile-key-4471"  # no known key shape: only the remembered key can mask it

# Stalls end at the 1 s timeouts; a stall that reached the request timeout would be the bug, so
# the wall-clock bound is that timeout (not a margin a loaded box could cross).
REQUEST_TIMEOUT_S = 60
STALL_TIMEOUTS = (
    *("--first-byte-timeout", "1", "--chunk-timeout", "1"),
    *("--request-timeout", str(REQUEST_TIMEOUT_S)),
)


def _probe(base_url: str, tmp_path: Path, *extra: str) -> tuple[Result, float]:
    checks = () if "--check-capabilities" in extra else ("--no-check-capabilities",)
    args = [
        "probe",
        *("--model", MODEL, "--isl", "8", "--osl", "8", "--base-url", base_url),
        *("--concurrency", "1,2", "--requests-per-level", "8", *checks),
        *("--out", str(tmp_path / "run.json"), "--db", f"sqlite:///{tmp_path / 'store.db'}"),
        "--json",
        *extra,
    ]
    started = time.perf_counter()
    result = runner.invoke(app, args)
    return result, time.perf_counter() - started


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.parametrize(
    "lie",
    [lambda n, m: -5, lambda n, m: 10**9, lambda n, m: 10**20, lambda n, m: 100 * m],
    ids=["negative", "1e9", "1e20", "100x"],
)
def test_lying_usage_is_that_requests_error_and_the_run_is_stored(
    tmp_path: Path, lie: object
) -> None:
    # Every third answer lies: never three failures in a row, which would be a dead server.
    plan = Hostility(lie_completion=lie, lie_every=3)  # type: ignore[arg-type]
    before = _peak_rss_mib()
    with hostile_server(plan) as url:
        result, took_s = _probe(url, tmp_path)
    assert result.exit_code == 0, result.output
    assert took_s < 30 and _peak_rss_mib() - before < 300
    summary = json.loads(result.stdout)
    assert summary["run_id"] is not None  # stored in --db, like the file
    levels = json.loads((tmp_path / "run.json").read_text())["levels"]
    assert sum(level["failed"] for level in levels) == 5  # of 16: the 3rd, 6th, ... 15th
    for level in levels:
        assert level["failed"] + level["completed"] == 8 and level["completed"] >= 5
        assert level["output_tokens_total"] == 8 * level["completed"]
        errors = {s["error"] for s in level["samples"] if s["error"]}
        assert len(errors) == 1 and next(iter(errors)).startswith("impossible server usage")


def test_usage_below_the_streamed_tokens_is_flagged_not_believed(tmp_path: Path) -> None:
    with hostile_server(Hostility(lie_completion=lambda n, m: 3)) as url:
        result, _ = _probe(url, tmp_path)
    assert result.exit_code == 0, result.output
    for level in json.loads((tmp_path / "run.json").read_text())["levels"]:
        assert level["failed"] == 0 and level["output_tokens_total"] == 8 * 8
        assert "the server's usage disagreed with its own stream" in level["notes"]


@pytest.mark.parametrize("stall", ["headers", "between_chunks", "trickle", "empty_events"])
def test_a_server_that_stalls_after_warm_up_is_declared_dead_in_seconds(
    tmp_path: Path, stall: str
) -> None:
    with hostile_server(Hostility(stall=stall)) as url:
        result, took_s = _probe(url, tmp_path, *STALL_TIMEOUTS)
    assert result.exit_code == 1, result.output  # the server died: the sweep is incomplete
    assert took_s < REQUEST_TIMEOUT_S  # ended by the 1 s timeouts (4 s here), whatever the load
    summary = json.loads(result.stdout)
    assert summary["complete"] is False and summary["run_id"] is not None
    assert "server stopped answering" in summary["stop_reason"]
    assert "Timeout: " in summary["stop_reason"]


def test_events_without_tokens_stall_each_request_by_the_chunk_timeout(tmp_path: Path) -> None:
    # 100 `{"choices":[]}` events a second: before, each reset the timer and a request (and
    # so a level) ran to the 60 s request timeout; now each stalls at the 1 s chunk timeout.
    with hostile_server(Hostility(stall="empty_events")) as url:
        result, took_s = _probe(url, tmp_path, *STALL_TIMEOUTS)
    assert took_s < REQUEST_TIMEOUT_S, result.output
    samples = json.loads((tmp_path / "run.json").read_text())["levels"][0]["samples"]
    errors = [s["error"] for s in samples if s["error"]]
    assert errors and all(
        e.startswith("Timeout: no token for 1 s after 1 token chunk(s), only ")
        and e.endswith("event(s) without one (between-chunks timeout)")
        for e in errors
    )


def test_the_default_timeouts_declare_a_stalled_server_dead_in_seconds() -> None:
    stall_s = max(TIMEOUT_DEFAULTS.first_byte_s, TIMEOUT_DEFAULTS.between_chunks_s)
    assert 3 * stall_s <= 60  # three requests in a row at concurrency 1, then dead
    assert TIMEOUT_DEFAULTS.connect_s <= 10


def test_one_huge_event_fails_its_request_in_bounded_time_and_memory(tmp_path: Path) -> None:
    before = _peak_rss_mib()
    with hostile_server(Hostility(huge_event_chars=16 * 1024 * 1024, token_s=0)) as url:
        result, took_s = _probe(url, tmp_path)
    assert result.exit_code == 0, result.output
    assert took_s < 60 and _peak_rss_mib() - before < 400
    levels = json.loads((tmp_path / "run.json").read_text())["levels"]
    errors = [s["error"] for level in levels for s in level["samples"] if s["error"]]
    assert errors and all(e.startswith("SseEventTooLargeError: one event is over") for e in errors)
    assert all(level["completed"] > 0 for level in levels)


def test_a_300_character_version_is_cut_and_noted_and_the_run_stores(tmp_path: Path) -> None:
    with hostile_server(Hostility(version="v" * 300)) as url:
        result, _ = _probe(url, tmp_path)
    assert result.exit_code == 0, result.output
    run = json.loads((tmp_path / "run.json").read_text())
    assert len(run["deployment"]["engine_version"]) == 64
    assert "/version was 300 characters: kept the first 64" in run["notes"]
    assert json.loads(result.stdout)["run_id"] is not None


SPOILER = "0.3\x1b[31mRED\x1b[0m\u202egnp.exe\x00"  # the issue's /version


def test_a_version_with_nul_escape_and_bidi_is_escaped_noted_and_the_run_stores(
    tmp_path: Path,
) -> None:
    with hostile_server(Hostility(version=SPOILER)) as url:
        result, _ = _probe(url, tmp_path)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["run_id"] is not None  # the finished sweep is stored
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["deployment"]["engine_version"] == "0.3\\x1b[31mRED\\x1b[0m\\u202egnp.exe\\x00"
    assert "the server's /version held control or bidi characters" in run["notes"]
    assert not any(char in (tmp_path / "run.json").read_text() for char in "\x00\x1b\u202e")


def test_error_texts_and_model_ids_with_nul_and_bidi_are_escaped_and_the_run_stores(
    tmp_path: Path,
) -> None:
    plan = Hostility(
        error_text="engine\x00 died\u202e\x1b[2J", extra_model_ids=("lora\u2066x\x00", "z" * 500)
    )
    with hostile_server(plan) as url:
        result, _ = _probe(url, tmp_path)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["run_id"] is not None
    run = json.loads((tmp_path / "run.json").read_text())
    errors = {s["error"] for level in run["levels"] for s in level["samples"] if s["error"]}
    assert errors == {"HTTP 500: engine\\x00 died\\u202e\\x1b[2J"}
    for level in run["levels"]:
        assert "error text(s) from the server held control or bidi characters" in level["notes"]
    assert "2 change(s) to the server's model ids" in run["notes"]
    shown = runner.invoke(app, ["runs", "--db", f"sqlite:///{tmp_path / 'store.db'}"])
    assert shown.exit_code == 0 and "\u202e" not in shown.output and "\x1b[2J" not in shown.output


def test_a_server_echoing_the_key_leaks_it_into_no_file_table_or_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAPPLAN_HOSTILE_KEY", KEY)
    plan = Hostility(echo_auth_every=3, echo_event_every=4, echo_auth_in_version=True)
    with hostile_server(plan) as url:
        result, _ = _probe(
            url, tmp_path, "--api-key-env", "CAPPLAN_HOSTILE_KEY", "--check-capabilities"
        )
    assert result.exit_code == 0, result.output
    assert plan.seen_auth == {f"Bearer {KEY}"}  # the server had the key to echo
    db = tmp_path / "store.db"
    runs = runner.invoke(app, ["runs", "--db", f"sqlite:///{db}", "--json"])
    backup = tmp_path / "store.jsonl.gz"
    made = runner.invoke(app, ["db", "backup", "--db", f"sqlite:///{db}", "--out", str(backup)])
    assert runs.exit_code == 0 and made.exit_code == 0
    with sqlite3.connect(db) as connection:
        dump = "\n".join(connection.iterdump())
    texts = {
        "stdout": result.stdout,
        "stderr": result.stderr,
        "run file": (tmp_path / "run.json").read_text(),
        "every table": dump,
        "runs --json": runs.stdout,
        "backup": gzip.decompress(backup.read_bytes()).decode(),
    }
    for where, text in texts.items():
        assert KEY not in text, where
    assert "invalid credentials: Authorization was Bearer ***" in dump  # the echo was stored
    assert "engine failed for Bearer ***" in dump
    assert "no tools for Bearer *** (***)" in dump  # a capability check's answer, masked
