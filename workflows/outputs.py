"""Output paths that never destroy: every file a command writes (`probe --out`, `report --out`,
`plan --export`, `db backup --out`) is checked before any work (check_output, or output_for with
the store's URL), and written atomically (write_output: checked again, then
measurements.atomic_write: an exclusive temp file + rename).

Refused, each as an InputError naming the flag and the path: an extension that is not the
format's, a folder, a folder that does not exist or cannot be written, the live store (or any
SQLite database), a file the same command reads, and an existing file unless --force."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from errors import InputError
from measurements.atomic_write import write_atomic

SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True, slots=True)
class OutputRule:
    """What one command writes: its flag, what it calls the file, the extensions it takes."""

    flag: str
    what: str
    extensions: tuple[str, ...]


def check_output(
    path: Path,
    rule: OutputRule,
    *,
    force: bool = False,
    protected: Sequence[Path] = (),
    inputs: Sequence[Path] = (),
) -> Path:
    """Refuse `path` before any work (InputError naming rule.flag and the path); returns it.

    `protected` are the live store's files, `inputs` the files the same command reads."""

    def refuse(message: str) -> InputError:
        return InputError(message, field=rule.flag, value=str(path))

    if path.is_dir():
        raise refuse(f"is a folder; give the {rule.what}'s file name")
    if any(_same_file(path, store) for store in protected):
        raise refuse(f"is the live store: writing the {rule.what} there would destroy it")
    if any(_same_file(path, source) for source in inputs):
        raise refuse(f"is a file this command reads: the {rule.what} would replace it")
    if _is_sqlite(path):
        raise refuse(f"is a SQLite database: capplan never writes a {rule.what} over one")
    if not path.name.lower().endswith(rule.extensions):
        raise refuse(f"a {rule.what} must be named *{' or *'.join(rule.extensions)}")
    if (path.exists() or path.is_symlink()) and not force:
        raise refuse(f"exists; pass --force to replace it (or give another {rule.what} name)")
    _check_writable(path, refuse)
    return path


def output_for(
    path: Path,
    rule: OutputRule,
    *,
    store_url: str | None,
    force: bool = False,
    inputs: Sequence[Path] = (),
) -> Path:
    """check_output with the live store at `store_url` (its SQLite files) protected."""
    from db.backup import store_files  # noqa: PLC0415 (the store's URL parser loads on use)

    protected = store_files(store_url) if store_url is not None else ()
    return check_output(path, rule, force=force, protected=protected, inputs=inputs)


def write_output(
    path: Path,
    content: bytes,
    rule: OutputRule,
    *,
    store_url: str | None = None,
    inputs: Sequence[Path] = (),
) -> None:
    """Write a checked output atomically. What may have changed since the check (a symlink to
    the store or an input put in its place, a database copied there) is refused again, and a
    failed write is an InputError naming rule.flag; the old file (or none) is left as it was."""
    output_for(path, rule, store_url=store_url, force=True, inputs=inputs)
    try:
        write_atomic(path, content)
    except OSError as exc:
        raise InputError(
            f"cannot write the {rule.what}: {exc.strerror}", field=rule.flag, value=str(path)
        ) from exc


def _same_file(path: Path, other: Path) -> bool:
    with contextlib.suppress(OSError):
        if path.exists() and other.exists():
            return path.samefile(other)
    return path.resolve() == other.resolve()


def _is_sqlite(path: Path) -> bool:
    if not path.is_file():
        return False
    try:
        with path.open("rb") as stream:
            return stream.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def _check_writable(path: Path, refuse: Callable[[str], InputError]) -> None:
    """Really create (and remove) a file beside `path`: permissions, a read-only file system
    and a folder that is not there all show up now, before any work."""
    folder = path.parent
    if not folder.is_dir():
        raise refuse(f"the folder {folder} does not exist")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise refuse(f"the folder {folder} cannot be written ({exc.strerror})") from None
