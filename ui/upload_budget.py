"""Upload bytes bounded per session, across every uploader (Runs files and folder, Models
config files and folder, the Plan page's scenario file): $CAPPLAN_MAX_SESSION_UPLOAD_MB.

Two doors (docs/SECURITY.md): the server (ui/serve.py) takes no upload from a session that
already holds the budget, nor from one not signed in when sign-in is on, so a session holds at
most the budget plus one file; the page then refuses, with a message naming it, the file that
passed the budget, so the session's uploads hold the budget at most when anything is read.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Protocol, TypeVar

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from errors import CapplanError, InputError
from ui.text import plain

SESSION_BUDGET_ENV = "CAPPLAN_MAX_SESSION_UPLOAD_MB"
DEFAULT_SESSION_BUDGET_MB = 200.0
MIB = 1024 * 1024
# Every st.file_uploader's key: what the session's uploads hold is the sum over all of them.
UPLOADER_KEYS = ("upload_files", "upload_folder", "model_files", "model_folder", "plan_yaml")


class Upload(Protocol):
    """What the budget reads of an uploaded file (Streamlit's UploadedFile has both)."""

    @property
    def name(self) -> str: ...
    @property
    def size(self) -> int: ...
    @property
    def file_id(self) -> str: ...


U = TypeVar("U", bound=Upload)


def session_budget_mb() -> float:
    """The per-session upload budget in MiB: $CAPPLAN_MAX_SESSION_UPLOAD_MB, default 200."""
    return env_mib(SESSION_BUDGET_ENV, DEFAULT_SESSION_BUDGET_MB, example=200)


def env_mib(name: str, default: float, *, example: int) -> float:
    """A positive number of MiB from environment variable `name` (`default` when unset);
    anything else is refused naming the variable and its value."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value > 0:
        raise InputError(
            f"expected a positive number of MiB (e.g. {example})", field=name, value=raw
        )
    return value


def server_refusal(held_bytes: int, *, signed_in: bool) -> str | None:
    """Why the server refuses one more upload from a session holding held_bytes, or None."""
    if not signed_in:
        return "sign in first: uploads are taken only from signed-in users"
    budget_mb = session_budget_mb()
    if held_bytes >= budget_mb * MIB:
        return (
            f"this session's uploads already hold {_size(held_bytes)}, its "
            f"{budget_mb:g} MiB budget ({SESSION_BUDGET_ENV}); remove files from the uploaders"
        )
    return None


def _held(exclude: Sequence[Upload]) -> list[Upload]:
    """The files every uploader of this session holds now, less those in exclude."""
    skip = {upload.file_id for upload in exclude}
    held: list[Upload] = []
    for key in UPLOADER_KEYS:
        value = st.session_state.get(key)
        uploads = value if isinstance(value, list) else [value] if value is not None else []
        held += [u for u in uploads if isinstance(u, UploadedFile) and u.file_id not in skip]
    return held


def within_budget(uploads: Sequence[U]) -> list[U]:
    """The uploads that fit in the session's budget with what its other uploaders hold, in
    order; the file that passes it and every one after get an st.error naming the file."""
    try:
        budget = session_budget_mb() * MIB
    except CapplanError as exc:
        st.error(plain(str(exc)))
        return []
    used = sum(upload.size for upload in _held(uploads))
    kept: list[U] = []
    for upload in uploads:
        if used + upload.size > budget:
            st.error(plain(_over(upload, used, budget)))
            continue
        used += upload.size
        kept.append(upload)
    return kept


def _size(size: float) -> str:
    return f"{size / MIB:.1f} MiB" if size >= MIB / 10 else f"{size / 1024:.1f} KiB"


def _over(upload: Upload, used: float, budget: float) -> str:
    return (
        f"{upload.name}: not read: {_size(upload.size)} more would pass this session's "
        f"{budget / MIB:g} MiB upload budget ({SESSION_BUDGET_ENV}; {_size(used)} held by the "
        "uploaders already); remove files from the uploaders, or import in parts"
    )
