"""The served app's doors, closed in the server process before Streamlit starts (ui/serve.py):
uploads bounded per session and refused before sign-in, and no server path or version in the
message every client gets when its session starts (docs/SECURITY.md, "The app's doors").

Streamlit has no setting for either, so both wrap one Streamlit method each; tests/ui/
test_doors.py pins them on the real server (`capplan app`) so a Streamlit upgrade that moves
them fails a test rather than opening a door.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from pathlib import PurePath
from typing import Any

from streamlit import runtime
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.uploaded_file_manager import UploadedFileRec

from ui.sign_in import auth_section, start_up_line
from ui.upload_budget import server_refusal

# One upload is checked and stored at a time, so two at once cannot both pass a full budget.
_UPLOADS = threading.Lock()
HTTP_REFUSED = 413


@functools.cache
def sign_in_on() -> bool:
    """Whether .streamlit/secrets.toml has an [auth] section (read once, as the app reads it)."""
    return auth_section() is not None


def sign_in_line() -> str:
    """The start-up line about sign-in (ui.sign_in.start_up_line) for this server."""
    return start_up_line(auth_section())


def _signed_in(session_id: str) -> bool:
    """Whether the session's browser is signed in; always True when sign-in is off."""
    if not sign_in_on():
        return True
    if not runtime.exists():
        return False
    # Streamlit keeps a session's identity (from its signed cookie) on the AppSession only.
    info = runtime.get_instance()._session_mgr.get_active_session_info(session_id)
    user = getattr(info.session, "_user_info", None) if info is not None else None
    return bool(isinstance(user, dict) and user.get("is_logged_in"))


def _held_bytes(manager: MemoryUploadedFileManager, session_id: str, file_id: str) -> int:
    """What the session's uploads hold now, less a file the new one replaces."""
    with manager._lock:
        stored = manager.file_storage.get(session_id, {})
        return sum(len(rec.data) for fid, rec in stored.items() if fid != file_id)


def _guarded_add_file(
    original: Callable[[MemoryUploadedFileManager, str, UploadedFileRec], None],
) -> Callable[[MemoryUploadedFileManager, str, UploadedFileRec], None]:
    def add_file(self: MemoryUploadedFileManager, session_id: str, file: UploadedFileRec) -> None:
        # Imported here: starlette is the server's, loaded with it.
        from starlette.exceptions import HTTPException  # noqa: PLC0415

        with _UPLOADS:
            held = _held_bytes(self, session_id, file.file_id)
            refusal = server_refusal(held, signed_in=_signed_in(session_id))
            if refusal is not None:
                raise HTTPException(status_code=HTTP_REFUSED, detail=refusal)
            original(self, session_id, file)

    return add_file


def _scrubbed_new_session(original: Callable[..., ForwardMsg]) -> Callable[..., ForwardMsg]:
    def create(self: AppSession, *args: Any, **kwargs: Any) -> ForwardMsg:
        msg = original(self, *args, **kwargs)
        # The client needs no place on the server's disk: the script's name is enough.
        msg.new_session.main_script_path = PurePath(msg.new_session.main_script_path).name
        env = msg.new_session.initialize.environment_info
        env.streamlit_version = env.python_version = env.server_os = ""
        return msg

    return create


def close() -> None:
    """Wrap Streamlit's upload store and its new-session message (once per process)."""
    if getattr(MemoryUploadedFileManager.add_file, "capplan_guard", False):
        return
    guarded = _guarded_add_file(MemoryUploadedFileManager.add_file)
    guarded.capplan_guard = True  # type: ignore[attr-defined]
    MemoryUploadedFileManager.add_file = guarded  # type: ignore[method-assign,assignment]
    AppSession._create_new_session_message = _scrubbed_new_session(  # type: ignore[method-assign]
        AppSession._create_new_session_message
    )
