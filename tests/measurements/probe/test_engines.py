"""Engine launchers: real launch/stop of small Python HTTP servers in their own process groups
(no mocks), engine builds timed before the server starts, and VRAM taken at idle."""

from __future__ import annotations

import os
import signal
import stat
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from measurements.gpu_info import facts_from_smi
from measurements.probe.engines import EngineError, attach, launch, log_tail
from measurements.probe.launch_spec import LaunchSpec, TrtBuildSpec
from tests.ports import free_port

# A stand-in engine: stdlib HTTP server with switches for every start-up failure shape.
FAKE_ENGINE = textwrap.dedent(
    """
    import json, os, signal, subprocess, sys, time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    opts = dict(a.split("=", 1) for a in sys.argv[1:])
    print("fake engine: loading weights", flush=True)
    with open(opts["pidfile"], "w") as f:
        f.write(str(os.getpid()))
    if "die_after" in opts:
        time.sleep(float(opts["die_after"]))
        print("fake engine: CUDA out of memory while loading weights", flush=True)
        sys.exit(int(opts.get("exit_code", "3")))
    if "ignore_sigterm" in opts:
        signal.signal(signal.SIGTERM, lambda *_: print("fake engine: SIGTERM ignored", flush=True))
    if "child_pidfile" in opts:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        with open(opts["child_pidfile"], "w") as f:
            f.write(str(child.pid))
    time.sleep(float(opts.get("delay", "0")))
    healthy = "never_healthy" not in opts

    class Handler(BaseHTTPRequestHandler):
        def _send(self, code, body=b""):
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/health":
                self._send(200 if healthy else 503)
            elif self.path == "/v1/models":
                self._send(200, json.dumps({"data": [{"id": "fake-model"}]}).encode())
            else:
                self._send(404)

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            wanted = "Bearer " + opts["api_key"] if "api_key" in opts else None
            if wanted and self.headers.get("Authorization") != wanted:
                return self._send(401, b'{"error": "Unauthorized"}')
            ok = self.path == "/v1/completions" and body.get("model") == "fake-model"
            answer = {"choices": [{"index": 0, "text": " hi"}]}
            self._send(200 if ok else 404, json.dumps(answer).encode())

        def log_message(self, fmt, *args):
            print("fake engine: " + fmt % args, flush=True)

    server = ThreadingHTTPServer(("127.0.0.1", int(opts["port"])), Handler)
    print("fake engine: listening", flush=True)
    server.serve_forever()
    """
)


def _alive(pid: int) -> bool:
    # A killed process whose parent is gone may linger as a zombie until init reaps it.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def _gone_within(pid: int, timeout_s: float = 3.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return False


@pytest.fixture
def fake_engine(tmp_path: Path) -> Path:
    script = tmp_path / "fake_engine.py"
    script.write_text(FAKE_ENGINE, encoding="utf-8")
    return script


def _spec(script: Path, tmp_path: Path, *options: str, timeout_s: float = 20) -> LaunchSpec:
    port = free_port()
    argv = (sys.executable, str(script), f"port={port}", f"pidfile={tmp_path / 'pid'}", *options)
    return LaunchSpec(
        engine="other", model="fake-model", command=argv, port=port, health_timeout_s=timeout_s
    )


def test_launch_waits_for_a_completion_and_stop_ends_the_group(
    fake_engine: Path, tmp_path: Path
) -> None:
    spec = _spec(fake_engine, tmp_path, "delay=0.3", f"child_pidfile={tmp_path / 'child'}")
    log = tmp_path / "logs" / "server.log"
    with launch(spec, log) as server:
        assert server.cold_start_s is not None
        assert 0.3 <= server.cold_start_s < 15
        assert server.served_model == "fake-model"
        assert server.base_url == spec.base_url
        assert server.engine_build_s is None
        assert server.process is not None
        pid = server.process.pid
        child = int((tmp_path / "child").read_text())
        assert os.getpgid(child) == pid  # the worker shares the server's new group
        answer = httpx.get(f"{server.base_url}/v1/models")
        assert answer.json()["data"][0]["id"] == "fake-model"
    assert server.process.returncode is not None
    assert _gone_within(child), "a worker in the server's group survived stop()"
    text = log.read_text()
    assert text.startswith("$ ")
    assert "fake engine: listening" in text
    assert server.launch_command is not None
    assert "fake_engine.py" in server.launch_command


def test_server_dying_during_start_up_names_exit_code_and_log_tail(
    fake_engine: Path, tmp_path: Path
) -> None:
    spec = _spec(fake_engine, tmp_path, "die_after=0.2", "exit_code=3")
    with pytest.raises(EngineError) as caught:
        launch(spec, tmp_path / "server.log")
    message = str(caught.value)
    assert "exited with code 3 during start-up" in message
    assert "CUDA out of memory while loading weights" in message


def test_health_timeout_quotes_the_log_and_stops_the_server(
    fake_engine: Path, tmp_path: Path
) -> None:
    # 2.5 s: long enough for Python to start the fake engine on a busy box.
    spec = _spec(fake_engine, tmp_path, "never_healthy=1", timeout_s=2.5)
    started = time.monotonic()
    with pytest.raises(EngineError) as caught:
        launch(spec, tmp_path / "server.log")
    assert 2.5 <= time.monotonic() - started < 15
    message = str(caught.value)
    assert (
        "did not answer a completion within 2.5 s of launch (last try: /health answered HTTP 503)"
        in message
    )
    assert "fake engine: listening" in message
    assert '"GET /health HTTP/1.1" 503' in message
    assert _gone_within(int((tmp_path / "pid").read_text()))


def test_server_ignoring_sigterm_is_killed_after_the_timeout(
    fake_engine: Path, tmp_path: Path
) -> None:
    spec = _spec(fake_engine, tmp_path, "ignore_sigterm=1")
    server = launch(spec, tmp_path / "server.log")
    assert server.process is not None
    started = time.monotonic()
    server.stop(timeout_s=0.5)
    assert time.monotonic() - started >= 0.5
    assert server.process.returncode == -signal.SIGKILL
    assert "SIGTERM ignored" in log_tail(tmp_path / "server.log")
    server.stop()  # a second stop is harmless


def test_api_key_is_read_from_the_named_variable(
    fake_engine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keyless = _spec(fake_engine, tmp_path, "api_key=s3cret", timeout_s=2.5)
    with pytest.raises(EngineError, match="last try: /v1/completions answered HTTP 401"):
        launch(keyless, tmp_path / "server.log")
    monkeypatch.setenv("CAPPLAN_TEST_KEY", "s3cret")
    keyed = _spec(fake_engine, tmp_path, "api_key=s3cret")
    keyed = keyed.model_copy(update={"api_key_env": "CAPPLAN_TEST_KEY"})
    with launch(keyed, tmp_path / "server2.log") as server:
        assert server.served_model == "fake-model"


def test_unknown_program_is_an_engine_error(tmp_path: Path) -> None:
    spec = LaunchSpec(engine="other", model="m", port=free_port(), command=("no-such-engine-x",))
    with pytest.raises(EngineError, match="could not start 'no-such-engine-x'"):
        launch(spec, tmp_path / "server.log")


def _fake_build(tmp_path: Path, exit_code: int) -> Path:
    tool = tmp_path / "trtllm-build"
    tool.write_text(
        f"#!{sys.executable}\n"
        "import pathlib, sys, time\n"
        "args = dict(zip(sys.argv[1::2], sys.argv[2::2]))\n"
        "print('building engine from', args['--checkpoint_dir'], flush=True)\n"
        "time.sleep(0.3)\n"
        f"if {exit_code}:\n"
        "    print('[TRT] [E] out of host memory', flush=True)\n"
        f"    sys.exit({exit_code})\n"
        "out = pathlib.Path(args['--output_dir']); out.mkdir(parents=True)\n"
        "(out / 'rank0.engine').write_bytes(b'engine')\n",
        encoding="utf-8",
    )
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    return tool


def test_engine_build_is_timed_before_the_server_starts(fake_engine: Path, tmp_path: Path) -> None:
    build = TrtBuildSpec(
        checkpoint_dir=tmp_path / "ckpt",
        output_dir=tmp_path / "engine",
        executable=str(_fake_build(tmp_path, exit_code=0)),
    )
    spec = _spec(fake_engine, tmp_path).model_copy(update={"build": build})
    log = tmp_path / "server.log"
    with launch(spec, log) as server:
        assert server.engine_build_s is not None
        assert 0.3 <= server.engine_build_s < 15
        assert (tmp_path / "engine" / "rank0.engine").exists()
    text = log.read_text()
    assert text.index("building engine from") < text.index("fake engine: listening")
    assert "--gemm_plugin auto --max_batch_size 256 --max_num_tokens 8192" in text


def test_failed_engine_build_names_the_exit_code(fake_engine: Path, tmp_path: Path) -> None:
    build = TrtBuildSpec(
        checkpoint_dir=tmp_path / "ckpt",
        output_dir=tmp_path / "engine",
        executable=str(_fake_build(tmp_path, exit_code=2)),
    )
    spec = _spec(fake_engine, tmp_path).model_copy(update={"build": build})
    with pytest.raises(EngineError, match=r"engine build exited with code 2(.|\n)*out of host"):
        launch(spec, tmp_path / "server.log")
    assert not (tmp_path / "pid").exists(), "the server must not start after a failed build"


def test_vram_at_idle_is_what_the_server_added(fake_engine: Path, tmp_path: Path) -> None:
    idle = facts_from_smi("0, NVIDIA H200, 570.1, 143771, 1, 1", None)
    loaded = facts_from_smi("0, NVIDIA H200, 570.1, 143771, 68001, 1", None)
    readings = iter([idle, loaded])
    spec = _spec(fake_engine, tmp_path)
    with launch(spec, tmp_path / "s.log", gpu_probe=lambda: next(readings)) as server:
        assert server.vram_idle_gb == pytest.approx(68000 * 1024 * 1024 / 1e9)


def test_no_gpu_means_no_vram_figure(fake_engine: Path, tmp_path: Path) -> None:
    with launch(_spec(fake_engine, tmp_path), tmp_path / "s.log", gpu_probe=lambda: None) as server:
        assert server.vram_idle_gb is None


def test_attach_has_nothing_to_stop() -> None:
    server = attach("http://127.0.0.1:9/")
    assert server.base_url == "http://127.0.0.1:9"
    assert server.process is None and server.cold_start_s is None
    server.stop()
