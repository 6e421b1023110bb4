"""`db backup` never writes through a link: a symlink or a hard link to the live store planted at
the old fixed `OUT.partial` name or at the random temporary name the backup is about to take
leaves the store whole (the backup is written beside it), and an --out that is a link to the
store is refused."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from db.backup import backup
from db.backup_reader import check_file
from db.engine import upgrade
from errors import InputError
from measurements import atomic_write

runner = CliRunner()
PLANTS: dict[str, Callable[[Path, Path], None]] = {
    "symlink": lambda link, target: link.symlink_to(target),
    "hardlink": lambda link, target: os.link(target, link),
}


@pytest.fixture
def live_store(tmp_path: Path) -> Path:
    store = tmp_path / "live" / "capplan.db"
    store.parent.mkdir()
    upgrade(f"sqlite:///{store}")
    return store


def _tables(store: Path) -> list[str]:
    with sqlite3.connect(store) as connection:  # "file is not a database" if it was overwritten
        return [r[0] for r in connection.execute("SELECT name FROM sqlite_master ORDER BY name")]


@pytest.mark.parametrize("via", ["function", "cli"])
@pytest.mark.parametrize("kind", sorted(PLANTS))
def test_links_at_the_temporary_names_leave_the_store_whole(
    live_store: Path, tmp_path: Path, kind: str, via: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    parts = iter(["planted", "fresh"])
    monkeypatch.setattr(atomic_write, "_random_part", lambda: next(parts))
    out = tmp_path / "store.jsonl.gz"
    before, tables = live_store.read_bytes(), _tables(live_store)
    for name in (f"{out.name}.partial", f".{out.name}.planted.tmp"):
        PLANTS[kind](tmp_path / name, live_store)
    url = f"sqlite:///{live_store}"
    if via == "cli":
        result = runner.invoke(app, ["db", "backup", "--out", str(out), "--db", url])
        assert result.exit_code == 0, result.output
    else:
        backup(url, out)
    assert live_store.read_bytes() == before and _tables(live_store) == tables
    check_file(out)  # a whole backup, written beside the links
    assert not out.is_symlink() and out.stat().st_nlink == 1


@pytest.mark.parametrize("kind", sorted(PLANTS))
def test_an_out_that_is_a_link_to_the_store_is_refused(
    live_store: Path, tmp_path: Path, kind: str
) -> None:
    out = tmp_path / "store.jsonl.gz"
    PLANTS[kind](out, live_store)
    before, url = live_store.read_bytes(), f"sqlite:///{live_store}"
    with pytest.raises(InputError, match="would replace the live store"):
        backup(url, out)
    result = runner.invoke(app, ["db", "backup", "--out", str(out), "--db", url, "--force"])
    assert result.exit_code == 2 and "live store" in result.output
    assert live_store.read_bytes() == before
