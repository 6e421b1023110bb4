"""Serving-model calibrations and curve fits kept across processes (planner.fitting.kept), so a new
`capplan plan` or a freshly started app reads a deployment's calibration and a curve's fits
instead of fitting them again (together most of a cold plan's time, and the optimiser's import).

The folder is the user's own: `$CAPPLAN_CACHE_DIR`, else `$XDG_CACHE_HOME/capplan`, else
`~/.cache/capplan`; `CAPPLAN_CACHE_DIR=off` keeps calibrations in memory only. Inside it, one
folder per kind and version of the planner's code (a hash of its source: a changed step law or
fit never reads an old result), one JSON file per deployment and levels, or per series. Nothing
there is trusted: a file is plain JSON checked field by field (planner.engine.calibrate's
calibration_from_json, planner.fitting.kept_fits' fit_from_json), so a damaged,
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
from importlib import metadata
from pathlib import Path

from measurements.atomic_write import write_atomic
from planner.fitting.kept import KINDS, keep

__all__ = ["CACHE_ENV", "DiskResults", "cache_folder", "keep_results"]

CACHE_ENV = "CAPPLAN_CACHE_DIR"
OFF = "off"
# A calibration is about 2 KB, a fit 1-10 KB (an interpolation of many points more): larger is
# not ours.
MAX_FILE_BYTES = 4 * 1024 * 1024
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


class DiskResults:
    """One kind of kept result as JSON files in a private folder (planner.fitting.kept's
    KeptResults)."""

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
            raise ValueError(f"not a result key: {key!r}")
        return self.folder / f"{key}.json"


def keep_results() -> dict[str, DiskResults]:
    """Keep calibrations and fits in the user's cache folder from now on (the CLI and the app
    call this once at start): the folders in use by kind; none, and memory only, where it is off
    or not a private folder."""
    folder = cache_folder()
    used: dict[str, DiskResults] = {}
    for kind in KINDS:
        usable = None if folder is None else _private_folder(folder / kind / code_version())
        shared = None if usable is None else DiskResults(usable)
        keep(kind, shared)
        if shared is not None:
            used[kind] = shared
    return used


@lru_cache(maxsize=1)
def code_version() -> str:
    """A hash of the planner's source files (names and bytes) and of the numeric libraries'
    versions (an optimiser's release may land a fit elsewhere), 16 hex digits."""
    digest = hashlib.sha256()
    for library in ("numpy", "scipy"):
        digest.update(f"{library}=={_version(library)}\n".encode())
    for path in sorted(PLANNER.rglob("*.py")):
        digest.update(path.relative_to(PLANNER).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _version(library: str) -> str:
    try:
        return metadata.version(library)
    except metadata.PackageNotFoundError:
        return "absent"


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
