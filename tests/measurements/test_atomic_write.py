"""Every writer's temporary file is created exclusively: a symlink or a hard link to a precious
file planted at any temporary name a writer could use (the old fixed `.tmp` name, or the random
name it is about to pick) is never written through; the write succeeds beside it."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from measurements import atomic_write
from measurements.atomic_write import fresh_file, open_append, write_atomic
from measurements.probe.engines import EngineError, launch
from measurements.probe.launch_spec import LaunchSpec
from measurements.run_file import read_run_file, write_run_file
from tests.db.conftest import full_run
from tests.ports import free_port
from workflows.outputs import OutputRule, write_output

PRECIOUS = b"SQLite format 3\x00 the live store, never to be touched"
Plant = Callable[[Path, Path], None]
PLANTS: dict[str, Plant] = {
    "symlink": lambda link, target: link.symlink_to(target),
    "hardlink": lambda link, target: os.link(target, link),
}


def _planted(tmp_path: Path, kind: str, names: list[str]) -> Path:
    store = tmp_path / "store" / "capplan.db"
    store.parent.mkdir()
    store.write_bytes(PRECIOUS)
    for name in names:
        PLANTS[kind](tmp_path / name, store)
    return store


@pytest.fixture
def first_name_planted(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The first random part the writer takes is `planted`: a link waits at that name."""
    parts = iter(["planted", "fresh0", "fresh1"])
    monkeypatch.setattr(atomic_write, "_random_part", lambda: next(parts))
    yield "planted"


def _write_run(path: Path) -> None:
    write_run_file(full_run(), path)


def _write_report(path: Path) -> None:
    write_output(path, b'{"report": 1}', OutputRule("--out", "json report", (".json",)))


WRITERS: dict[str, Callable[[Path], None]] = {
    "write_atomic": lambda path: write_atomic(path, b'{"x": 1}'),
    "run file": _write_run,
    "report": _write_report,
}


@pytest.mark.parametrize("kind", sorted(PLANTS))
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_link_at_any_temporary_name_is_never_written_through(
    tmp_path: Path, kind: str, writer: str, first_name_planted: str
) -> None:
    out = tmp_path / "out.json"
    old_fixed = f"{out.name}.tmp"  # what write_run_file used to write through
    guessed = f".{out.name}.{first_name_planted}{atomic_write.TEMP_SUFFIX}"
    store = _planted(tmp_path, kind, [old_fixed, guessed])
    WRITERS[writer](out)
    assert store.read_bytes() == PRECIOUS
    assert out.read_bytes() != PRECIOUS and not out.is_symlink()
    assert out.stat().st_nlink == 1
    if writer == "run file":
        assert read_run_file(out).label == "full run"
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([guessed, old_fixed, "out.json", "store"])  # no temp file of ours


@pytest.mark.parametrize("kind", sorted(PLANTS))
def test_a_link_at_the_final_name_is_replaced_never_followed(tmp_path: Path, kind: str) -> None:
    store = _planted(tmp_path, kind, ["out.json"])
    write_atomic(tmp_path / "out.json", b"new")
    assert store.read_bytes() == PRECIOUS
    assert (tmp_path / "out.json").read_bytes() == b"new"


def test_no_free_name_is_a_clear_os_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(atomic_write, "_random_part", lambda: "taken")
    store = _planted(tmp_path, "symlink", [".out.json.taken.tmp"])
    with pytest.raises(FileExistsError, match="no free temporary name"):
        write_atomic(tmp_path / "out.json", b"new")
    assert store.read_bytes() == PRECIOUS
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("kind", sorted(PLANTS))
def test_append_refuses_a_link_put_in_place_of_a_fresh_file(tmp_path: Path, kind: str) -> None:
    log = tmp_path / "server.log"
    fresh_file(log)
    with open_append(log) as stream:
        stream.write(b"ours\n")
    log.unlink()
    store = _planted(tmp_path, kind, ["server.log"])
    with pytest.raises(OSError, match="link"):
        open_append(log).close()
    assert store.read_bytes() == PRECIOUS


@pytest.mark.parametrize("kind", sorted(PLANTS))
def test_server_log_planted_as_a_link_leaves_its_target_alone(tmp_path: Path, kind: str) -> None:
    store = _planted(tmp_path, kind, ["server.log"])
    spec = LaunchSpec(engine="other", model="m", port=free_port(), command=("no-such-engine-x",))
    with pytest.raises(EngineError, match="could not start"):
        launch(spec, tmp_path / "server.log")
    assert store.read_bytes() == PRECIOUS
    log = tmp_path / "server.log"
    assert not log.is_symlink() and log.stat().st_nlink == 1
    assert log.read_text(encoding="utf-8").startswith("$ no-such-engine-x")
