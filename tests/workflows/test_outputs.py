"""Output paths that never destroy: `probe`, `report`, `plan --export` and `db backup` refuse a
bad output path before any work (no request sent, no store opened), keep existing files unless
--force, and check the format against the extension; writes are atomic."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from errors import InputError
from measurements.atomic_write import write_atomic
from tests.hostile_server import MODEL, Hostility, hostile_server
from workflows.outputs import OutputRule, check_output

pytestmark = pytest.mark.hostile

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "docs" / "scenarios" / "agent-platform.yaml"
RULE = OutputRule("--out", "run file", (".json",))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _store(tmp_path: Path) -> tuple[str, Path]:
    file = tmp_path / "store.db"
    url = f"sqlite:///{file}"
    assert runner.invoke(app, ["db", "upgrade", "--db", url]).exit_code == 0
    return url, file


def test_check_output_refuses_each_destructive_path_naming_the_flag(tmp_path: Path) -> None:
    existing = tmp_path / "kept.json"
    existing.write_text("{}")
    sqlite_file = tmp_path / "other.json"
    sqlite_file.write_bytes(b"SQLite format 3\x00" + bytes(100))
    (tmp_path / "folder.json").mkdir()
    not_a_folder = tmp_path / "plain.txt"
    not_a_folder.write_text("x")
    cases = {
        tmp_path / "run.txt": "must be named *.json",
        tmp_path / "folder.json": "is a folder",
        tmp_path / "store.json": "is the live store",
        tmp_path / "input.json": "is a file this command reads",
        sqlite_file: "is a SQLite database",
        existing: "exists; pass --force",
        not_a_folder / "run.json": "does not exist",
    }
    for path, why in cases.items():
        with pytest.raises(InputError, match=re.escape(why)) as caught:
            check_output(
                path,
                RULE,
                protected=[tmp_path / "store.json"],
                inputs=[tmp_path / "input.json"],
            )
        assert caught.value.field == "--out" and caught.value.value == str(path)
    assert check_output(existing, RULE, force=True) == existing
    assert existing.read_text() == "{}"  # checking writes nothing


def test_write_atomic_replaces_whole_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old")
    write_atomic(target, b"new")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]
    with pytest.raises(OSError):
        write_atomic(tmp_path / "missing" / "x.json", b"never")


def test_db_backup_never_replaces_the_live_store_or_an_existing_file(tmp_path: Path) -> None:
    url, file = _store(tmp_path)
    before = _digest(file)
    for out in (file, Path(f"{file}-wal")):
        result = runner.invoke(app, ["db", "backup", "--db", url, "--out", str(out)])
        assert result.exit_code == 2 and "Traceback" not in result.output
    live = runner.invoke(app, ["db", "backup", "--db", url, "--out", str(file), "--force"])
    assert live.exit_code == 2 and "is the live store" in live.stderr
    assert _digest(file) == before
    backup = tmp_path / "b.jsonl.gz"
    assert runner.invoke(app, ["db", "backup", "--db", url, "--out", str(backup)]).exit_code == 0
    kept = _digest(backup)
    again = runner.invoke(app, ["db", "backup", "--db", url, "--out", str(backup)])
    assert again.exit_code == 2 and "exists; pass --force" in again.stderr
    assert _digest(backup) == kept
    forced = ["db", "backup", "--db", url, "--out", str(backup), "--force"]
    assert runner.invoke(app, forced).exit_code == 0


@pytest.mark.parametrize(
    ("out", "why"),
    [
        ("store.db", "is the live store"),
        ("folder", "is a folder"),
        ("existing.json", "exists; pass --force"),
        ("run.csv", "must be named *.json"),
        ("plain.txt/run.json", "does not exist"),
    ],
)
def test_probe_refuses_its_out_before_any_request(tmp_path: Path, out: str, why: str) -> None:
    url, file = _store(tmp_path)
    (tmp_path / "folder").mkdir()
    (tmp_path / "existing.json").write_text("{}")
    (tmp_path / "plain.txt").write_text("x")
    before = {name: _digest(tmp_path / name) for name in ("store.db", "existing.json")}
    plan = Hostility()
    with hostile_server(plan) as base_url:
        result = runner.invoke(
            app,
            [
                "probe",
                *("--model", MODEL, "--isl", "8", "--osl", "8", "--base-url", base_url),
                *("--concurrency", "1", "--out", str(tmp_path / out), "--db", url),
            ],
        )
    assert result.exit_code == 2, result.output
    line = " ".join(result.stderr.split())
    assert "field '--out'" in line and why in line and "Traceback" not in result.output
    assert plan.completions == 0  # refused before the warm-up
    assert {name: _digest(tmp_path / name) for name in before} == before
    assert file.exists()


def test_probe_force_replaces_an_existing_run_file(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    target.write_text("{}")
    with hostile_server(Hostility()) as base_url:
        result = runner.invoke(
            app,
            [
                "probe",
                *("--model", MODEL, "--isl", "8", "--osl", "8", "--base-url", base_url),
                *("--concurrency", "1", "--requests-per-level", "4", "--out", str(target)),
                *("--no-check-capabilities", "--force"),
            ],
        )
    assert result.exit_code == 0, result.output
    assert '"levels"' in target.read_text()


@pytest.mark.parametrize(
    ("fmt", "out", "why"),
    [
        ("html", "x.pdf", "a html report must be named *.html or *.htm"),
        ("pdf", "existing.pdf", "exists; pass --force"),
        ("json", "store.db", "is the live store"),
        ("json", "scenario.json", "is a file this command reads"),
    ],
)
def test_report_refuses_its_out_before_planning(
    tmp_path: Path, fmt: str, out: str, why: str
) -> None:
    (tmp_path / "existing.pdf").write_bytes(b"%PDF-1.7 kept")
    scenario = tmp_path / "scenario.json"
    scenario.write_text(SCENARIO.read_text())
    store = tmp_path / "store.db"
    args = ["report", str(scenario), "--format", fmt, "--out", str(tmp_path / out)]
    result = runner.invoke(app, [*args, "--db", f"sqlite:///{store}"])
    assert result.exit_code == 2, result.output
    line = " ".join(result.stderr.split())
    assert "field '--out'" in line and why in line
    assert not store.exists()  # refused before the store was opened
    assert (tmp_path / "existing.pdf").read_bytes() == b"%PDF-1.7 kept"


def test_a_folder_that_cannot_be_written_is_refused_before_any_work(tmp_path: Path) -> None:
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        # root writes through permissions: a read-only file system (sysfs) stands in for it
        target = folder if os.geteuid() != 0 else Path("/sys")
        if not target.is_dir():
            pytest.skip("no read-only folder to write into on this machine")
        with pytest.raises(InputError, match="cannot be written"):
            check_output(target / "run.json", RULE)
    finally:
        folder.chmod(0o755)


@pytest.mark.parametrize(
    ("out", "why"),
    [
        ("link.json", "is the live store"),  # a symlink to the store (issue 25's case)
        ("store.db", "is the live store"),
        ("scenario.json", "is a file this command reads"),
        ("existing.json", "exists; pass --force"),
        ("plan.pdf", "must be named *.json or *.csv or *.xlsx"),
        ("folder.json", "is a folder"),
    ],
)
def test_plan_export_refuses_a_destructive_path_before_planning(
    tmp_path: Path, out: str, why: str
) -> None:
    url, file = _store(tmp_path)
    (tmp_path / "link.json").symlink_to(file)
    (tmp_path / "existing.json").write_text('{"kept": true}')
    (tmp_path / "folder.json").mkdir()
    scenario = tmp_path / "scenario.json"
    scenario.write_text(SCENARIO.read_text())
    kept = {
        name: _digest(tmp_path / name) for name in ("store.db", "existing.json", "scenario.json")
    }
    args = ["plan", str(scenario), "--export", str(tmp_path / out), "--db", url, "--samples", "0"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    line = " ".join(result.stderr.split())
    assert "field '--export'" in line and why in line and "Traceback" not in result.output
    assert {name: _digest(tmp_path / name) for name in kept} == kept
    assert runner.invoke(app, ["runs", "--db", url]).exit_code == 0  # the store still opens


def test_plan_export_force_replaces_an_existing_export_and_never_the_store(tmp_path: Path) -> None:
    url, file = _store(tmp_path)
    assert runner.invoke(app, ["demo-data", "--db", url]).exit_code == 0
    target = tmp_path / "plan.json"
    target.write_text("old")
    args = ["plan", str(SCENARIO), "--export", str(target), "--db", url, "--samples", "0"]
    assert runner.invoke(app, [*args, "--force"]).exit_code == 0
    assert '"options"' in target.read_text()
    (tmp_path / "link.json").symlink_to(file)
    before = _digest(file)
    linked = ["plan", str(SCENARIO), "--export", str(tmp_path / "link.json"), "--db", url]
    forced = runner.invoke(app, [*linked, "--samples", "0", "--force"])
    assert forced.exit_code == 2 and "is the live store" in forced.stderr
    assert _digest(file) == before
