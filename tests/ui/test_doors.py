"""The served app's doors on the real server, started as `capplan app` starts it: the sign-in
line, no WebSocket for a page at another host name or origin, no server path or version sent to
a client, and uploads bounded per session and refused before sign-in (ui/doors.py)."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NewSession_pb2 import Config
from streamlit.web.server.starlette.starlette_app_utils import generate_xsrf_token_string
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Origin, Subprotocol

from tests.browser.app_server import PYTHON, ROOT, STARTUP_TIMEOUT_S, healthy
from tests.ports import free_port
from ui.sign_in import OFF_LINE

BUDGET_MB = "0.01"  # 10,485 bytes: two 6,000-byte files pass it, a third is refused
FILE_BYTES = 6000
AUTH_SECRETS = """[auth]
redirect_uri = "http://localhost:8501/oauth2callback"
cookie_secret = "a-long-random-string-for-tests-only"
client_id = "capplan"
client_secret = "not-a-real-secret"
server_metadata_url = "https://idp.example.com/.well-known/openid-configuration"
"""


@dataclass(frozen=True, slots=True)
class Served:
    """A `capplan app` that answers: its port, base URL and output."""

    port: int
    base: str
    log: Path

    def said(self, text: str, wait_s: float = 30.0) -> bool:
        """Whether the app's output has text (waiting for it up to wait_s)."""
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if text in self.log.read_text(encoding="utf-8", errors="replace"):
                return True
            time.sleep(0.2)
        return False


@contextmanager
def _capplan_app(workdir: Path, db: Path) -> Iterator[Served]:
    port, log = free_port(), workdir / "app.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CAPPLAN_MAX_SESSION_UPLOAD_MB": BUDGET_MB}
    command = [str(PYTHON), "-m", "cli", "app", "--port", str(port), "--db", f"sqlite:///{db}"]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, cwd=workdir, env=env, stdout=sink, stderr=sink)
        try:
            served = Served(port, f"http://127.0.0.1:{port}", log)
            deadline = time.monotonic() + STARTUP_TIMEOUT_S
            while not healthy(served.base):
                assert process.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.25)
            yield served
        finally:
            process.terminate()
            process.wait(timeout=30)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("store") / "capplan.db"


@pytest.fixture(scope="module")
def open_app(tmp_path_factory: pytest.TempPathFactory, store: Path) -> Iterator[Served]:
    """`capplan app` without an [auth] section (run from a folder without secrets)."""
    with _capplan_app(tmp_path_factory.mktemp("open"), store) as served:
        yield served


@pytest.fixture(scope="module")
def signed_app(tmp_path_factory: pytest.TempPathFactory, store: Path) -> Iterator[Served]:
    """`capplan app` run from a folder whose .streamlit/secrets.toml turns sign-in on."""
    workdir = tmp_path_factory.mktemp("signed")
    (workdir / ".streamlit").mkdir()
    (workdir / ".streamlit" / "secrets.toml").write_text(AUTH_SECRETS, encoding="utf-8")
    with _capplan_app(workdir, store) as served:
        yield served


def _upgrade_status(served: Served, host: str, origin: str) -> str:
    """The status line the server answers a WebSocket upgrade with, Host and Origin as given."""
    request = (
        "GET /_stcore/stream HTTP/1.1\r\n"
        f"Host: {host}\r\nOrigin: {origin}\r\n"
        "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: streamlit\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
        sock.sendall(request.encode("ascii"))
        return sock.recv(4096).decode("latin-1").split("\r\n", 1)[0]


@contextmanager
def _session(served: Served) -> Iterator[tuple[ClientConnection, ForwardMsg]]:
    """A browser-like session: the WebSocket open, the script run, its new_session message."""
    uri = f"ws://127.0.0.1:{served.port}/_stcore/stream"
    protocols, origin = [Subprotocol("streamlit")], Origin(served.base)
    with connect(uri, subprotocols=protocols, origin=origin) as ws:
        back = BackMsg()
        back.rerun_script.query_string = ""
        ws.send(back.SerializeToString())
        while True:
            msg = ForwardMsg()
            msg.ParseFromString(ws.recv(timeout=60))
            if msg.HasField("new_session"):
                yield ws, msg
                return


def _put(served: Served, session_id: str, file_id: str, data: bytes) -> tuple[int, str]:
    """Upload one file as the browser's file uploader does; (HTTP status, body)."""
    token, boundary = generate_xsrf_token_string(), "capplanboundary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
        f'filename="{file_id}.json"\r\nContent-Type: application/json\r\n\r\n'
    )
    body = head.encode() + data + f"\r\n--{boundary}--\r\n".encode()
    request = urllib.request.Request(
        f"{served.base}/_stcore/upload_file/{session_id}/{file_id}",
        data=body,
        method="PUT",
        headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "X-Xsrftoken": token,
            "Cookie": f"_streamlit_xsrf={token}",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_capplan_app_says_sign_in_is_off_and_the_host_names_it_takes(open_app: Served) -> None:
    assert open_app.said(OFF_LINE)
    assert open_app.said("allowed host names: localhost, 127.0.0.1, ::1")


def test_a_page_at_another_host_name_or_origin_gets_no_websocket(open_app: Served) -> None:
    port, own = open_app.port, open_app.base
    assert " 101 " in _upgrade_status(open_app, f"127.0.0.1:{port}", own)  # the app's own page
    rebound = _upgrade_status(
        open_app, f"rebind.evil.example:{port}", f"http://rebind.evil.example:{port}"
    )
    assert " 403 " in rebound  # DNS rebinding: the attacker's name, resolved to this machine
    foreign = _upgrade_status(open_app, f"127.0.0.1:{port}", "https://evil.example")
    assert " 403 " in foreign  # another site's page opening the app's WebSocket


def test_no_server_path_or_version_reaches_a_client(open_app: Served) -> None:
    for path in ("/_stcore/health", "/_stcore/host-config", "/"):
        with urllib.request.urlopen(f"{open_app.base}{path}", timeout=30) as response:
            assert str(ROOT).encode() not in response.read(), path
    with _session(open_app) as (_, msg):
        assert msg.new_session.main_script_path == "app.py"
        env = msg.new_session.initialize.environment_info
        assert (env.streamlit_version, env.python_version, env.server_os) == ("", "", "")
        assert str(ROOT).encode() not in msg.SerializeToString()


def test_visitors_get_no_toolbar_and_no_deploy_button(open_app: Served) -> None:
    # "viewer" hides the developer menu but still draws Deploy on localhost; "minimal" hides both.
    minimal = Config.ToolbarMode.Value("MINIMAL")
    with _session(open_app) as (_, msg):
        assert msg.new_session.config.toolbar_mode == minimal
    assert 'toolbarMode = "minimal"' in (ROOT / ".streamlit" / "config.toml").read_text()


def test_a_session_holds_at_most_its_upload_budget_and_one_file(open_app: Served) -> None:
    with _session(open_app) as (_, msg):
        session_id = msg.new_session.initialize.session_id
        first = _put(open_app, session_id, "one", b"1" * FILE_BYTES)
        second = _put(open_app, session_id, "two", b"2" * FILE_BYTES)  # passes the budget
        third = _put(open_app, session_id, "three", b"3" * FILE_BYTES)
    assert (first[0], second[0]) == (204, 204)
    assert third[0] == 413
    assert "CAPPLAN_MAX_SESSION_UPLOAD_MB" in third[1] and "0.01 MiB budget" in third[1]


def test_with_sign_in_on_nothing_is_uploaded_before_sign_in(signed_app: Served) -> None:
    assert signed_app.said("sign-in: on (provider from [auth])")
    with _session(signed_app) as (_, msg):
        status, body = _put(signed_app, msg.new_session.initialize.session_id, "one", b"{}")
    assert status == 413
    assert "sign in first" in body
