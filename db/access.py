"""Whether this user can write a SQLite store: its file and its folder, checked before any work
and named in a refused write's error."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import make_url
from sqlalchemy.exc import ArgumentError

from errors import StoreError


def check_store_writable(url: str) -> None:
    """Refuse, before any work, a SQLite store this user cannot write (the file or its folder):
    StoreError with the same hint a refused write gets. A server database is checked by its
    first write."""
    from db.engine import redact  # noqa: PLC0415 - db.engine imports this module

    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(f"not a database URL: {redact(url)!r} ({exc})") from exc
    if parsed.get_backend_name() != "sqlite":
        return
    hint = sqlite_access_hint(parsed.database)
    if hint:
        raise StoreError(f"database {redact(url)} cannot be written by this user{hint}")


def sqlite_access_hint(database: str | None) -> str:
    """Why this user cannot open or write a SQLite file, read off the file and its folder."""
    if not database or database == ":memory:" or database.startswith("file:"):
        return ""
    path = Path(database)
    user = f"user {os.getuid()}" if hasattr(os, "getuid") else "this user"
    if path.exists() and not os.access(path, os.R_OK | os.W_OK):
        return (
            f"; the file {path} is read-only to {user}. SQLite writes its store even to read "
            "it (WAL): ask its owner for write access, or copy the file (and its -wal file, if "
            "any) into a folder you can write and use that copy"
        )
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # make_engine creates the missing folders inside this one
    if not os.access(folder, os.W_OK | os.X_OK):
        return (
            f"; the folder {folder} cannot be written by {user}, and SQLite keeps its "
            "-wal and -shm files beside the store (even to read it): use a store in a folder "
            "you can write"
        )
    return ""
