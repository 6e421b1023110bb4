"""Safety on real parts: the probe's API key comes only from the environment and lands nowhere
(run file, store, CLI output); uploads are size-limited (zip bombs refused before extracting);
hostile names come out escaped in the HTML report; sign-in gates the app only when configured."""

from __future__ import annotations

import dataclasses
import io
import json
import shutil
import socket
import sys
import threading
import time
import zipfile
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from sqlalchemy import MetaData, create_engine, select
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from cli import app
from db import run_reads
from db.engine import make_engine, upgrade
from db.prices import list_prices
from db.seed import load_demo_data
from errors import InputError
from measurements.probe.config import ProbeConfig
from measurements.probe.redaction import redact_command, redact_url
from measurements.probe.sweep import run_probe
from measurements.run_file import Deployment
from measurements.sim.profiles import get_profile
from measurements.sim.server import create_app, listening_socket
from planner.analysis.capacity import make_plan
from planner.curves.load import curve_from_run
from planner.inputs.scenario import load_scenario
from reports.formats import render_report
from reports.model import build_report, run_meta
from team.roles import SYSTEM
from tests.stores import Stores, query, row_counts
from tests.ui.conftest import shown
from ui.upload_form import MAX_UPLOAD_ENV, check_upload, max_upload_mb

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
KEY_ENV = "CAPPLAN_SAFETY_TEST_KEY"
KEY = "sk-capplan-test-7f3a9c1e5b"
HOSTILE = '<script>alert(1)</script>"onmouseover=alert(2) x="'
RUN_TIMEOUT_S = 60
WHEN = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
runner = CliRunner()

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]


# ---------------------------------------------------------------- API keys


class RequireKey:
    """ASGI wrapper: 401 without `Authorization: Bearer KEY`; records every header it saw."""

    def __init__(self, inner: Asgi, key: str) -> None:
        self.inner, self.key = inner, key
        self.seen: list[str | None] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            given = headers.get(b"authorization")
            self.seen.append(given.decode() if given else None)
            if given != f"Bearer {self.key}".encode():
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b'{"error":"no key"}'})
                return
        await self.inner(scope, receive, send)


@pytest.fixture
def keyed_server() -> Iterator[tuple[str, RequireKey]]:
    """The simulator behind a key check, served by uvicorn on a free port."""
    guard = RequireKey(create_app(get_profile("tiny-fast")), KEY)
    sock = listening_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    config = uvicorn.Config(guard, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(1500):
        if server.started:
            break
        time.sleep(0.01)
    assert server.started
    yield f"http://127.0.0.1:{port}", guard
    server.should_exit = True
    thread.join(timeout=10)
    sock.close()


def _probe_args(base_url: str, out: Path, db: str) -> list[str]:
    return [
        "probe",
        "--base-url",
        base_url,
        "--model",
        "sim-tiny",
        "--isl",
        "32",
        "--osl",
        "8",
        "--concurrency",
        "1,2",
        "--requests-per-level",
        "6",
        "--gpu",
        "H100-SXM-80GB",
        "--tp",
        "1",
        "--no-check-capabilities",
        "--api-key-env",
        KEY_ENV,
        "--out",
        str(out),
        "--db",
        db,
        "--json",
    ]


def test_cli_probe_sends_the_env_key_and_stores_or_prints_it_nowhere(
    keyed_server: tuple[str, RequireKey], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base_url, guard = keyed_server
    monkeypatch.setenv(KEY_ENV, KEY)
    db_path = tmp_path / "capplan.db"
    out = tmp_path / "probe.json"
    result = runner.invoke(app, _probe_args(base_url, out, f"sqlite:///{db_path}"))
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["complete"] is True
    # Every request carried the key from the environment (and was let through).
    assert len(guard.seen) >= 12 and set(guard.seen) == {f"Bearer {KEY}"}
    assert KEY not in result.stdout and KEY not in result.stderr
    assert KEY not in out.read_text(encoding="utf-8")
    engine = make_engine(f"sqlite:///{db_path}")
    stored = run_reads.get_run(engine, document["run_id"]).run
    engine.dispose()
    assert len(stored.levels) == 2
    assert KEY not in stored.model_dump_json()
    assert KEY_ENV not in stored.model_dump_json()  # not even the variable's name
    shutil.copyfile(db_path, tmp_path / "copy.db")  # the WAL is folded in on dispose
    assert KEY.encode() not in (tmp_path / "copy.db").read_bytes()


def test_cli_probe_without_the_key_fails_clearly_and_a_pasted_key_is_not_echoed(
    keyed_server: tuple[str, RequireKey], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base_url, guard = keyed_server
    monkeypatch.delenv(KEY_ENV, raising=False)
    args = _probe_args(base_url, tmp_path / "p.json", f"sqlite:///{tmp_path / 'c.db'}")
    missing = runner.invoke(app, args)
    assert missing.exit_code == 2
    assert "the environment variable named for the API key is not set" in missing.output
    assert KEY_ENV in missing.output
    assert guard.seen == []  # stopped before any request: no key was invented or sent
    pasted = [KEY if word == KEY_ENV else word for word in args]
    echoed = runner.invoke(app, pasted)
    assert echoed.exit_code == 2
    assert "NAME of an environment variable" in echoed.output
    assert KEY not in echoed.output


def test_a_key_typed_into_the_launch_command_or_url_is_masked_in_the_run_file(
    keyed_server: tuple[str, RequireKey], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    base_url, guard = keyed_server
    monkeypatch.setenv(KEY_ENV, KEY)
    config = ProbeConfig.model_validate(
        {
            "base_url": base_url,
            "model": "sim-tiny",
            "concurrencies": [1],
            "requests_per_level": 4,
            "api_key_env": KEY_ENV,
            "workload": {"isl": 32, "osl": 8},
        }
    )
    command = f"vllm serve sim-tiny --api-key {KEY} --port 8000 --hf-token={KEY} --tokenizer t"
    deployment = Deployment(
        engine="vllm",
        model="sim-tiny",
        launch_command=command,
        engine_args={"api-key": KEY, "port": "8000", "tokenizer": "t"},
    )
    out = tmp_path / "run.json"
    outcome = asyncio.run(run_probe(config, deployment=deployment, out=out))
    assert outcome.run.levels[0].completed == 4
    text = out.read_text(encoding="utf-8")
    assert KEY not in text
    stored = outcome.run.deployment
    assert stored.launch_command == (
        "vllm serve sim-tiny --api-key '***' --port 8000 '--hf-token=***' --tokenizer t"
    )
    assert stored.engine_args == {"api-key": "***", "port": "8000", "tokenizer": "t"}
    assert set(guard.seen) == {f"Bearer {KEY}"}
    assert redact_url(f"http://u:{KEY}@h:1/v1?api_key={KEY}&x=1") == (
        "http://u:***@h:1/v1?api_key=***&x=1"
    )
    assert redact_command("serve --max-num-batched-tokens 8192") == (
        "serve --max-num-batched-tokens 8192"
    )


def _every_row(url: str) -> str:
    """Every row of every table, as one text (repr of each row, JSON columns included)."""
    engine = create_engine(url)
    try:
        metadata = MetaData()
        metadata.reflect(engine)
        with engine.connect() as connection:
            return "\n".join(
                repr(tuple(row))
                for table in metadata.sorted_tables
                for row in connection.execute(select(table))
            )
    finally:
        engine.dispose()


def test_cli_probe_into_the_store_under_test_keeps_the_env_key_out_of_every_table(
    keyed_server: tuple[str, RequireKey],
    stores: Stores,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base_url, guard = keyed_server
    monkeypatch.setenv(KEY_ENV, KEY)
    url = stores.migrated("probe-key")  # SQLite file, or a database on Postgres
    result = runner.invoke(app, _probe_args(base_url, tmp_path / "probe.json", url))
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["complete"] is True and document["run_id"] is not None
    assert len(guard.seen) >= 12 and set(guard.seen) == {f"Bearer {KEY}"}
    assert KEY not in result.stdout and KEY not in result.stderr
    counts = row_counts(url)
    assert counts["runs"] == 1 and counts["load_levels"] == 2
    assert counts["request_samples"] >= 12
    rows = _every_row(url)
    assert "sim-tiny" in rows and base_url.removeprefix("http://") in rows  # the search sees data
    assert KEY not in rows and KEY_ENV not in rows


def test_a_key_in_the_launch_environment_prefix_is_masked_in_the_store_log_and_output(
    stores: Stores, tmp_path: Path
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    server = f"{sys.executable} -m cli sim-server --port {port} --profile tiny-fast"
    url = stores.migrated("launch-key")
    out = tmp_path / "launched.json"
    args = ["probe", "--launch", f"HF_TOKEN={KEY} {server}", "--engine", "other"]
    args += ["--model", "sim-tiny", "--isl", "32", "--osl", "8", "--concurrency", "1"]
    args += ["--requests-per-level", "4", "--no-check-capabilities", "--out", str(out)]
    result = runner.invoke(app, [*args, "--db", url, "--json"])
    assert result.exit_code == 0, result.output
    assert KEY not in result.stdout and KEY not in result.stderr
    assert query(url, "SELECT launch_command FROM deployments") == [(f"'HF_TOKEN=***' {server}",)]
    assert KEY not in _every_row(url)
    assert KEY not in out.read_text(encoding="utf-8")
    log = out.with_suffix(".server.log").read_text(encoding="utf-8")
    assert log.splitlines()[0] == f"$ {server}"  # the environment is not echoed into the log
    assert KEY not in log


@pytest.mark.parametrize(
    "args",
    [["db", "upgrade"], ["db", "backup", "--out", "unused.jsonl.gz"], ["demo-data"]],
    ids=["upgrade", "backup", "demo-data"],
)
def test_a_database_password_is_masked_in_cli_errors(args: list[str], tmp_path: Path) -> None:
    url = "postgresql+psycopg://capplan:hunter2-secret@127.0.0.1:1/capplan"  # nothing listens
    result = runner.invoke(app, [*args, "--db", url])
    assert result.exit_code == 2
    assert "postgresql+psycopg://capplan:***@127.0.0.1:1/capplan" in result.output
    assert "hunter2" not in result.output
    assert not (tmp_path / "unused.jsonl.gz").exists()


# ---------------------------------------------------------------- upload limits


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_upload_limit_comes_from_the_environment_and_is_capped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(MAX_UPLOAD_ENV, raising=False)
    assert max_upload_mb() == 50
    monkeypatch.setenv(MAX_UPLOAD_ENV, "2.5")
    assert max_upload_mb() == 2.5
    monkeypatch.setenv(MAX_UPLOAD_ENV, "500")
    assert max_upload_mb() == 50  # the importers refuse more than 50 MiB per file anyway
    monkeypatch.setenv(MAX_UPLOAD_ENV, "lots")
    with pytest.raises(InputError, match=f"field '{MAX_UPLOAD_ENV}'.*positive number"):
        max_upload_mb()


def test_check_upload_refuses_big_files_big_members_and_zip_bombs() -> None:
    mib = 1024 * 1024
    check_upload("small.json", b"{}", 1)
    with pytest.raises(InputError, match=r"big\.json: 1\.5 MiB, over the 1 MiB upload limit"):
        check_upload("big.json", b"x" * (3 * mib // 2), 1)
    # 3 MiB of zeros deflates to a few KiB: the zip is small, the member is not.
    bomb = _zip({"inner.json": b"\0" * (3 * mib)})
    assert len(bomb) < 64 * 1024
    with pytest.raises(InputError, match=r"member 'inner\.json' is 3\.0 MiB uncompressed"):
        check_upload("results.zip", bomb, 1)
    # Twelve 0.9 MiB members: each under 1 MiB, together over 10 x 1 MiB.
    many = _zip({f"m{i}.json": b"\0" * (9 * mib // 10) for i in range(12)})
    with pytest.raises(InputError, match=r"add up to 10\.8 MiB.*over the 10 MiB limit for one zip"):
        check_upload("many.zip", many, 1)
    check_upload("ok.zip", _zip({"a.json": b"{}"}), 1)


def _upload_script() -> None:
    import streamlit as st

    from ui import upload_form

    files = st.file_uploader("Result files", accept_multiple_files=True, key="files")
    kept = upload_form.within_limits([(f.name, f.getvalue()) for f in files or []])
    st.write(f"accepted: {', '.join(name for name, _ in kept) or 'none'}")


def test_upload_form_names_the_refused_file_and_the_limit_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(MAX_UPLOAD_ENV, "1")
    at = AppTest.from_function(_upload_script, default_timeout=RUN_TIMEOUT_S).run()
    bomb = _zip({"inner.json": b"\0" * (2 * 1024 * 1024)})
    at.file_uploader(key="files").set_value(
        [("c8.json", b'{"a": 1}', "application/json"), ("bomb.zip", bomb, "application/zip")]
    ).run()
    assert not at.exception, [e.value for e in at.exception]
    assert [shown(e.value) for e in at.error] == [
        f"bomb.zip: member 'inner.json' is 2.0 MiB uncompressed, over the 1 MiB limit per "
        f"file ({MAX_UPLOAD_ENV})"
    ]
    assert at.markdown[-1].value == "accepted: c8.json"


def test_streamlit_config_limits_uploads_to_the_importers_50_mib() -> None:
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["maxUploadSize"] == 50


# ---------------------------------------------------------------- HTML report escaping


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[str] = []
        self.text: list[str] = []
        self.in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [name for name, _ in attrs]
        self.in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self.in_script = False

    def handle_data(self, data: str) -> None:
        if not self.in_script:
            self.text.append(data)


def _page(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def test_html_report_escapes_hostile_names_labels_and_models(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'demo.db'}"
    upgrade(url)
    engine = make_engine(url)
    load_demo_data(engine, actor=SYSTEM)
    stored = run_reads.load_runs(engine)
    prices = list_prices(engine)
    engine.dispose()
    scenario = load_scenario(ROOT / "docs" / "scenarios" / "agent-platform.yaml")
    curves = [c for c in (curve_from_run(s.run, s.run_id) for s in stored) if c is not None]
    runs = [run_meta(s.run_id, s.imported_at, s.run) for s in stored]

    def hostile_curve(curve: Any) -> Any:
        if curve.key.model != scenario.model:
            return curve
        key = dataclasses.replace(curve.key, model=f"m{HOSTILE}", engine_version=HOSTILE)
        return dataclasses.replace(curve, key=key, label=HOSTILE)

    odd = scenario.model_copy(update={"name": HOSTILE, "model": f"m{HOSTILE}"})
    plan = make_plan(odd, [hostile_curve(c) for c in curves], prices)
    assert plan.options, "the hostile model must still plan"
    hostile_runs = [dataclasses.replace(r, label=HOSTILE, origin_file=HOSTILE) for r in runs]
    html = render_report(
        build_report(plan, ranges=None, swings=None, runs=hostile_runs, generated_at=WHEN), "html"
    ).decode("utf-8")
    plain = render_report(
        build_report(
            make_plan(scenario, curves, prices),
            ranges=None,
            swings=None,
            runs=runs,
            generated_at=WHEN,
        ),
        "html",
    ).decode("utf-8")

    assert "<script>alert(1)</script>" not in html
    assert "</script>alert" not in html and '"onmouseover=' not in html
    page, baseline = _page(html), _page(plain)
    assert page.tags.count("script") == baseline.tags.count("script")
    assert not [name for name in page.attrs if name.startswith("on")]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    shown = "".join(page.text)
    assert HOSTILE in shown  # the name is shown as text, exactly as typed


# ---------------------------------------------------------------- sign-in


AUTH = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "a-long-random-string-for-tests-only",
    "client_id": "capplan",
    "client_secret": "not-a-real-secret",
    "server_metadata_url": "https://idp.example.com/.well-known/openid-configuration",
}


@pytest.fixture
def demo_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'capplan.db'}"
    upgrade(url)
    engine = make_engine(url)
    load_demo_data(engine, actor=SYSTEM)
    engine.dispose()
    monkeypatch.setenv("CAPPLAN_DB", url)
    return url


def test_without_auth_secrets_the_app_runs_open(demo_store: str) -> None:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Plan capacity"
    assert not [b for b in at.button if b.label.startswith("Sign")]


def test_with_auth_secrets_every_page_waits_for_sign_in(demo_store: str) -> None:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S)
    at.secrets["auth"] = AUTH
    at.user = {}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == ["capplan"]
    assert [b.label for b in at.button] == ["Sign in"]
    assert "sign in" in at.info[0].value
    assert not at.dataframe  # no page content before sign-in


def test_named_providers_each_get_a_button(demo_store: str) -> None:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S)
    at.secrets["auth"] = {
        "redirect_uri": AUTH["redirect_uri"],
        "cookie_secret": AUTH["cookie_secret"],
        "okta": {k: AUTH[k] for k in ("client_id", "client_secret", "server_metadata_url")},
        "google": {k: AUTH[k] for k in ("client_id", "client_secret", "server_metadata_url")},
    }
    at.user = {}
    at.run()
    assert [b.label for b in at.button] == ["Sign in with Google", "Sign in with Okta"]


def test_a_signed_in_user_sees_the_app_and_can_sign_out(demo_store: str) -> None:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S)
    at.secrets["auth"] = AUTH
    at.user = {"is_logged_in": True, "name": "Ada Lovelace", "email": "ada@example.com"}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Plan capacity"
    assert "Signed in as Ada Lovelace" in [c.value for c in at.sidebar.caption]
    at.sidebar.button(key="sign_out").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.user == {"is_logged_in": False}
    assert not at.title  # nothing drawn while the browser goes to the sign-out endpoint
    at.run()
    assert [t.value for t in at.title] == ["capplan"]
    assert [b.label for b in at.button] == ["Sign in"]
