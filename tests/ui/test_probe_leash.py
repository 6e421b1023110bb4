"""The Probe page on a leash (issue 30): it sends as a key only a variable an operator lists,
never the store's password, reaches only allowed hosts, follows no redirect, and shows a failed
server's HTTP status but never its body. Real servers on 127.0.0.1 record what reached them."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from db import run_lists
from db.engine import make_engine
from tests.hostile_server import MODEL, Hostility, hostile_server
from tests.ui.conftest import APP, RUN_TIMEOUT_S, shown

SECRET_BODY = "internal-only: the ledger password is hunter2"
STORE_PASSWORD = "store-password-0123456789"


@dataclass
class Recorder:
    """What a recording server answers (`models`: /v1/models status, `location`: a redirect)
    and every (method, path, Authorization) that reached it."""

    models_status: int = 200
    location: str | None = None
    seen: list[tuple[str, str, str]] = field(default_factory=list)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def _answer(self) -> None:
        plan = self.server.plan
        plan.seen.append((self.command, self.path, self.headers.get("Authorization", "")))
        status = plan.models_status if self.path.endswith("/v1/models") else 500
        status = 307 if plan.location else status
        listing = json.dumps({"object": "list", "data": [{"id": MODEL}]})
        body = (listing if status == 200 else SECRET_BODY).encode()
        self.send_response(status)
        if plan.location:
            self.send_header("Location", plan.location)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    plan: Recorder


@contextmanager
def recording_server(plan: Recorder) -> Iterator[str]:
    """Serve `plan` on a free port of 127.0.0.1; yields the base URL."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.plan = plan
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def _probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base_url: str, key_env: str = ""
) -> AppTest:
    """The Probe page with its form filled in for `base_url` and sent."""
    monkeypatch.chdir(tmp_path)
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    at.switch_page("ui/probe.py").run()
    at.text_input(key="probe_base_url").set_value(base_url)
    at.text_input(key="probe_model").set_value(MODEL)
    at.number_input(key="probe_isl").set_value(32)
    at.number_input(key="probe_osl").set_value(8)
    at.text_input(key="probe_levels").set_value("1")
    at.number_input(key="probe_requests").set_value(4)
    at.text_input(key="probe_api_key_env").set_value(key_env)
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _errors(at: AppTest) -> str:
    return " ".join(shown(e.value) for e in at.error)


@pytest.mark.parametrize("listed", ["", "PGPASSWORD,CAPPLAN_DB"])
@pytest.mark.parametrize("name", ["PGPASSWORD", "CAPPLAN_DB"])
def test_the_stores_password_is_never_sent_as_a_key(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, listed: str
) -> None:
    monkeypatch.setenv("PGPASSWORD", STORE_PASSWORD)
    monkeypatch.setenv("CAPPLAN_PROBE_KEY_VARS", listed)  # even an operator's listing: refused
    plan = Recorder()
    with recording_server(plan) as base_url:
        at = _probe(tmp_path, monkeypatch, base_url, key_env=name)
    assert plan.seen == []  # refused before any request
    assert "api_key_env" in _errors(at) and name in _errors(at) and not at.success
    assert STORE_PASSWORD not in _errors(at) and store_url not in _errors(at)


def test_only_a_key_variable_the_operator_lists_is_sent(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_PROBE_KEY", "sk-probe-key-for-tests")
    monkeypatch.setenv("OTHER_KEY", "sk-not-for-the-probe")
    monkeypatch.setenv("CAPPLAN_PROBE_KEY_VARS", "MY_PROBE_KEY")
    before = len(run_lists.list_runs(make_engine(store_url)))
    plan = Hostility()
    with hostile_server(plan) as base_url:
        refused = _probe(tmp_path, monkeypatch, base_url, key_env="OTHER_KEY")
        assert "CAPPLAN_PROBE_KEY_VARS" in _errors(refused) and "OTHER_KEY" in _errors(refused)
        assert plan.seen_auth == set()
        at = _probe(tmp_path, monkeypatch, base_url, key_env="MY_PROBE_KEY")
    assert _errors(at) == ""
    assert "Sweep complete" in at.success[0].value
    assert plan.seen_auth == {"Bearer sk-probe-key-for-tests"}
    assert len(run_lists.list_runs(make_engine(store_url))) == before + 1


def test_a_host_not_allowed_is_refused_naming_the_url_host_and_setting(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = Recorder()
    with recording_server(plan) as base_url, recording_server(Recorder()) as other_url:
        monkeypatch.setenv("CAPPLAN_PROBE_ALLOWED_HOSTS", other_url.removeprefix("http://"))
        at = _probe(tmp_path, monkeypatch, f"{base_url}/v1")
    assert plan.seen == []
    error = _errors(at)
    assert f"{base_url}/v1" in error and "'127.0.0.1'" in error
    assert "CAPPLAN_PROBE_ALLOWED_HOSTS" in error and not at.success


def test_a_redirect_to_a_host_not_allowed_is_not_followed(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = Recorder()
    with recording_server(elsewhere) as other_url:
        plan = Recorder(location=f"{other_url}/v1/models")
        with recording_server(plan) as base_url:
            monkeypatch.setenv("CAPPLAN_PROBE_ALLOWED_HOSTS", base_url.removeprefix("http://"))
            at = _probe(tmp_path, monkeypatch, base_url)
    assert elsewhere.seen == [] and [path for _, path, _ in plan.seen] == ["/v1/models"]
    assert "HTTP 307" in _errors(at) and "hunter2" not in _errors(at) and not at.success


@pytest.mark.parametrize("models_status", [500, 200])
def test_a_failing_server_shows_its_status_never_its_body(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, models_status: int
) -> None:
    # 500: /v1/models refuses; 200: the model list comes, then every completion answers 500.
    plan = Recorder(models_status=models_status)
    with recording_server(plan) as base_url:
        at = _probe(tmp_path, monkeypatch, base_url.replace("127.0.0.1", "localhost"))
    assert plan.seen, "loopback is allowed by default when the app runs without sign-in"
    assert "HTTP 500" in _errors(at) and "hunter2" not in _errors(at) and not at.success
    runs = tmp_path / "data" / "probe-runs"
    assert not any("hunter2" in p.read_text() for p in runs.glob("*.json"))
