"""Files and folders this user may not write or read, tried as an unprivileged user (issue 25
item 9): root writes through permissions, so under root (as CI runs) each command runs as
`nobody` through setpriv. Every case exits 2 with one line naming the path and what to do, and
leaves the store as it was.

As root, `nobody` must be able to reach the Python interpreter: scripts/prepare-unprivileged.sh
(run by scripts/test.sh) adds the search bit on the folders above it. Without it these tests
fail under CI and skip elsewhere, saying so.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.ports import free_port

pytestmark = [pytest.mark.hostile, pytest.mark.sqlite_only]

ROOT = Path(__file__).resolve().parents[2]
C8 = ROOT / "tests" / "fixtures" / "vllm-cpu-real" / "c8.json"
SCENARIO = ROOT / "docs" / "scenarios" / "agent-platform.yaml"
NOBODY = 65534
AS_ROOT = os.geteuid() == 0


@dataclass(frozen=True)
class Place:
    """A folder this user cannot write (holding a store it cannot write, with one run), and
    one it can."""

    read_only: Path
    writable: Path

    @property
    def store(self) -> Path:
        """The read-only store."""
        return self.read_only / "store.db"

    @property
    def store_url(self) -> str:
        """Its URL."""
        return f"sqlite:///{self.store}"


def _as_user(args: list[str]) -> list[str]:
    command = [sys.executable, "-m", "cli", *args]
    if not AS_ROOT:
        return command
    ids = [f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    return ["setpriv", *ids, *command]


def _capplan(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _as_user(args),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HOME": str(home), "CAPPLAN_DB": f"sqlite:///{home / 'default.db'}"},
        check=False,
    )


@pytest.fixture(scope="module")
def place() -> Iterator[Place]:
    if AS_ROOT and shutil.which("setpriv") is None:
        pytest.fail("setpriv (util-linux) is needed to run these cases as nobody")
    base = Path(tempfile.mkdtemp(prefix="capplan-perm-", dir="/tmp"))
    base.chmod(0o755)
    read_only, writable = base / "read-only", base / "writable"
    read_only.mkdir()
    writable.mkdir()
    found = Place(read_only, writable)
    seeded = subprocess.run(
        [sys.executable, "-m", "cli", "import", str(C8), "--db", found.store_url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert seeded.returncode == 0, seeded.stderr
    if AS_ROOT:
        os.chown(writable, NOBODY, NOBODY)  # root's read-only folder and store stay root's
    else:
        found.store.chmod(0o444)
        read_only.chmod(0o555)
    reach = _capplan(["--help"], writable)
    if reach.returncode != 0:
        message = (
            "nobody cannot run this Python (run scripts/prepare-unprivileged.sh as root): "
            + reach.stderr[-300:]
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    try:
        yield found
    finally:
        read_only.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)


def _one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def _runs(place: Place) -> int:
    """Runs in the read-only store, read without writing it (immutable: this test's user may
    not be able to write it either)."""
    with closing(sqlite3.connect(f"file:{place.store}?immutable=1", uri=True)) as connection:
        return int(connection.execute("SELECT count(*) FROM runs").fetchone()[0])


def test_an_import_into_a_read_only_store_says_so_and_stores_nothing(place: Place) -> None:
    line = _one_line(_capplan(["import", str(C8), "--db", place.store_url], place.writable))
    assert f"the file {place.store} is read-only to user" in line
    assert "ask its owner for write access" in line
    assert _runs(place) == 1


def test_a_read_only_store_cannot_even_be_listed_and_says_why(place: Place) -> None:
    line = _one_line(_capplan(["runs", "--db", place.store_url], place.writable))
    assert "SQLite writes its store even to read it" in line


def test_a_new_store_in_a_folder_this_user_cannot_write_is_refused(place: Place) -> None:
    url = f"sqlite:///{place.read_only / 'new.db'}"
    line = _one_line(_capplan(["import", str(C8), "--db", url], place.writable))
    assert f"the folder {place.read_only} cannot be written by user" in line
    assert not (place.read_only / "new.db").exists()


def test_a_restore_into_a_read_only_store_changes_nothing(place: Place) -> None:
    backup = place.writable / "store.jsonl.gz"
    made = _capplan(["db", "backup", "--db", place.store_url, "--out", str(backup)], place.writable)
    assert made.returncode == 2  # reading the store needs writing it too: no backup either
    assert not backup.exists()
    good = place.writable / "mine.db"
    assert (
        _capplan(["import", str(C8), "--db", f"sqlite:///{good}"], place.writable).returncode == 0
    )
    backup_args = ["db", "backup", "--db", f"sqlite:///{good}", "--out", str(backup)]
    assert _capplan(backup_args, place.writable).returncode == 0
    restore = ["db", "restore", str(backup), "--db", place.store_url, "--replace"]
    line = _one_line(_capplan(restore, place.writable))
    assert "is read-only to user" in line
    assert _runs(place) == 1


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["plan", str(SCENARIO), "--export", "{ro}/plan.json"], "--export"),
        (["report", str(SCENARIO), "--format", "pdf", "--out", "{ro}/report.pdf"], "--out"),
        (["db", "backup", "--out", "{ro}/store.jsonl.gz"], "--out"),
    ],
    ids=["plan-export", "report", "backup"],
)
def test_an_output_into_a_folder_this_user_cannot_write_is_refused_before_any_work(
    place: Place, args: list[str], flag: str
) -> None:
    filled = [arg.replace("{ro}", str(place.read_only)) for arg in args]
    line = _one_line(_capplan(filled, place.writable))
    assert f"field '{flag}'" in line and f"the folder {place.read_only} cannot be written" in line
    assert sorted(path.name for path in place.read_only.iterdir()) == ["store.db"]


def test_a_probe_into_a_read_only_store_is_refused_before_it_sends_a_request(
    place: Place,
) -> None:
    out = place.writable / "run.json"
    args = [
        *("probe", "--base-url", f"http://127.0.0.1:{free_port()}", "--model", "m"),
        *("--isl", "8", "--osl", "8", "--concurrency", "1", "--out", str(out)),
        *("--db", place.store_url),
    ]
    line = _one_line(_capplan(args, place.writable))
    # The store is refused first: no server answers that port, and the error is not about it.
    assert "cannot be written by this user" in line and "could not reach" not in line
    assert not out.exists()


def test_a_probe_run_file_into_a_read_only_folder_is_refused(place: Place) -> None:
    args = [
        *("probe", "--base-url", f"http://127.0.0.1:{free_port()}", "--model", "m"),
        *("--isl", "8", "--osl", "8", "--concurrency", "1"),
        *("--out", str(place.read_only / "run.json")),
    ]
    line = _one_line(_capplan(args, place.writable))
    assert "field '--out'" in line and "cannot be written" in line


def test_a_result_file_this_user_cannot_read_is_named(place: Place) -> None:
    secret = place.writable / "secret.json"
    shutil.copyfile(C8, secret)
    secret.chmod(0o600 if AS_ROOT else 0o000)
    try:
        url = f"sqlite:///{place.writable / 'mine2.db'}"
        result = _capplan(["import", str(secret), "--db", url], place.writable)
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert "secret.json' is not readable" in " ".join(result.stderr.split())
        assert not (place.writable / "mine2.db").exists()
    finally:
        secret.unlink()


def test_a_scenario_this_user_cannot_read_is_named(place: Place) -> None:
    secret = place.writable / "secret.yaml"
    shutil.copyfile(SCENARIO, secret)
    secret.chmod(0o600 if AS_ROOT else 0o000)
    try:
        result = _capplan(["plan", str(secret)], place.writable)
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert "secret.yaml' is not readable" in " ".join(result.stderr.split())
    finally:
        secret.unlink()


def test_a_probe_without_db_is_not_refused_for_a_store_it_does_not_write(place: Place) -> None:
    """The store in use ($CAPPLAN_DB) is only kept from being written over; without --db the
    probe does not store, so a read-only store there is no reason to refuse."""
    args = [
        *("probe", "--base-url", f"http://127.0.0.1:{free_port()}", "--model", "m"),
        *("--isl", "8", "--osl", "8", "--concurrency", "1"),
        *("--out", str(place.writable / "run.json")),
    ]
    result = subprocess.run(
        _as_user(args),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HOME": str(place.writable), "CAPPLAN_DB": place.store_url},
        check=False,
    )
    line = _one_line(result)
    assert "could not reach" in line and "read-only" not in line
