"""Serving-model calibrations kept across processes, so a new `capplan plan` or a freshly started
app reads a deployment's calibration instead of fitting it again (a least-squares fit per
deployment: about half of a cold plan's time).

The folder is the user's own: `$CAPPLAN_CACHE_DIR`, else `$XDG_CACHE_HOME/capplan`, else
`~/.cache/capplan`; `CAPPLAN_CACHE_DIR=off` keeps calibrations in memory only. Inside it, one
folder per version of the planner's code (a hash of its source: a changed step law never reads
an old calibration), one JSON file per deployment and levels. Nothing there is trusted: a file is
plain JSON checked field by field (planner.engine.calibrate.calibration_from_json), so a damaged,
foreign or planted file is fitted again, never executed; a folder another user can write to, or
that is not a folder of this user's, is not used at all. Writes go through an exclusive temporary
file and a rename (measurements.atomic_write); a failed write only costs the next process a fit.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from functools import lru_cache
from pathlib import Path

from measurements.atomic_write import write_atomic
from planner.engine.calibrate import share_calibrations

__all__ = ["CACHE_ENV", "DiskCalibrations", "cache_folder", "keep_calibrations"]

CACHE_ENV = "CAPPLAN_CACHE_DIR"
OFF = "off"
MAX_FILE_BYTES = 64 * 1024  # a calibration is about 2 KB; anything larger is not ours
PLANNER = Path(__file__).resolve().parents[1] / "planner"


def cache_folder() -> Path | None:
    """The folder calibrations are kept in, or None when turned off."""
    given = os.environ.get(CACHE_ENV, "").strip()
    if given.lower() == OFF:
        return None
    if given:
        return Path(given).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg else Path.home() / ".cache") / "capplan"


class DiskCalibrations:
    """Calibrations as JSON files in a private folder (planner.engine.calibrate's
    SharedCalibrations)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def get(self, key: str) -> object | None:
        path = self._path(key)
        try:
            handle = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None  # not kept yet (or a link planted there: never followed)
        with os.fdopen(handle, "rb") as stream:
            facts = os.fstat(stream.fileno())
            if not stat.S_ISREG(facts.st_mode) or facts.st_size > MAX_FILE_BYTES:
                return None
            try:
                value: object = json.loads(stream.read(MAX_FILE_BYTES + 1))
            except (ValueError, UnicodeDecodeError):
                return None
        return value

    def put(self, key: str, value: dict[str, object]) -> None:
        # A full disk or a read-only home costs the next process a fit, nothing more.
        with contextlib.suppress(OSError, ValueError):
            write_atomic(self._path(key), json.dumps(value, allow_nan=False).encode("utf-8"))

    def _path(self, key: str) -> Path:
        if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
            raise ValueError(f"not a calibration key: {key!r}")
        return self.folder / f"{key}.json"


def keep_calibrations() -> DiskCalibrations | None:
    """Share calibrations through the user's cache folder from now on (the CLI and the app call
    this once at start); None, and memory only, when it is off or not a private folder."""
    folder = cache_folder()
    usable = None if folder is None else _private_folder(folder / "calibrations" / code_version())
    shared = None if usable is None else DiskCalibrations(usable)
    share_calibrations(shared)
    return shared


@lru_cache(maxsize=1)
def code_version() -> str:
    """A hash of the planner's source files (names and bytes), 16 hex digits."""
    digest = hashlib.sha256()
    for path in sorted(PLANNER.rglob("*.py")):
        digest.update(path.relative_to(PLANNER).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _private_folder(folder: Path) -> Path | None:
    """`folder`, made with mode 0700 where missing, if it and every folder capplan made on the
    way are this user's and writable by nobody else; else None."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        for part in (folder, *folder.parents):
            facts = part.lstat()
            if stat.S_ISLNK(facts.st_mode) and part == folder:
                return None
            if part == folder.parents[2]:  # the cache root's parent (~/.cache): not ours to judge
                break
            if facts.st_uid != os.getuid() or facts.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                return None
    except OSError:
        return None
    return folder
