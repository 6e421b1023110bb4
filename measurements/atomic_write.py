"""Every file capplan writes goes through here: a temp file created exclusively beside the target
(O_CREAT|O_EXCL|O_NOFOLLOW, a random name: a symlink or hard link planted at any name is never
opened, let alone written through), then renamed over the target (which replaces a link, never
what it points at). A crash or a full disk leaves the old file (or none), never half a file."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = ["TEMP_SUFFIX", "atomic_stream", "fresh_file", "open_append", "write_atomic"]

TEMP_SUFFIX = ".tmp"
_TRIES = 100  # random names taken before giving up (each taken name is someone else's file)
_NO_LINKS = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_LINKS


def _random_part() -> str:
    return secrets.token_hex(8)


def _exclusive_temp(path: Path) -> tuple[int, Path]:
    """A new, empty file beside `path` that nobody else has a name for: (its fd, its path)."""
    for _ in range(_TRIES):
        temp = path.with_name(f".{path.name}.{_random_part()}{TEMP_SUFFIX}")
        try:
            return os.open(temp, _NEW, 0o666), temp
        except FileExistsError:
            continue  # a file, a link or a planted name: never ours to open; take another
    raise FileExistsError(errno.EEXIST, f"no free temporary name after {_TRIES} tries", str(path))


@contextlib.contextmanager
def atomic_stream(path: Path) -> Iterator[BinaryIO]:
    """A binary stream to a fresh temp file; on a clean exit it is synced and renamed over
    `path`, on an error removed (the old `path` left as it was). OSError on failure."""
    handle, temp = _exclusive_temp(path)
    try:
        with os.fdopen(handle, "wb") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        temp.replace(path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def write_atomic(path: Path, content: bytes) -> None:
    """Write `content` to `path` through an exclusive temp file and a rename. OSError on failure."""
    with atomic_stream(path) as stream:
        stream.write(content)


def fresh_file(path: Path) -> None:
    """Make `path` a new, empty file of its own (a link there is replaced, never followed)."""
    write_atomic(path, b"")


def open_append(path: Path) -> BinaryIO:
    """Open a file capplan made (fresh_file) to append to it, refusing (OSError) a symlink, and a
    file with other names (a hard link planted there since), whose other name it would grow."""
    handle = os.open(path, os.O_WRONLY | os.O_APPEND | _NO_LINKS)
    facts = os.fstat(handle)
    if not stat.S_ISREG(facts.st_mode) or facts.st_nlink != 1:
        os.close(handle)
        raise OSError(errno.EMLINK, "not a file of its own (a link was put there)", str(path))
    return os.fdopen(handle, "ab")
