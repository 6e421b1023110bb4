"""A small hostile OpenAI-compatible HTTP server for the probe's hostile-input tests: it streams
honest answers until told to lie about usage, stall (before the headers, between chunks, or
with an endless trickle of keep-alive comments or of events without a token), echo the
request's Authorization header back (in 401 bodies, error events, `/version` and a response
header), send one huge event, answer a `/version` of its choosing (very long, or with NUL, ESC
and bidi controls), list model ids of its choosing, or fail requests with an error text of its
choosing. Real sockets (the probe's aiohttp transport), one thread per request; `stop()`
releases every stalled request."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "hostile-model"


@dataclass
class Hostility:
    """What the server does; `n` below is the request's number (1 = the first completion)."""

    honest_first: int = 4  # the probe's warm-up requests are answered honestly
    lie_completion: Callable[[int, int], int] | None = None  # (n, max_tokens) -> usage to claim
    lie_every: int = 2  # of the requests after honest_first, every lie_every-th lies
    stall: str | None = None  # "headers", "between_chunks", "trickle", "empty_events": after
    # honest_first (trickle: keep-alive comments forever; empty_events: `{"choices":[]}` forever)
    echo_auth_every: int | None = None  # answer 401 echoing Authorization every k-th request
    echo_event_every: int | None = None  # an error event echoing Authorization every k-th
    huge_event_chars: int | None = None  # one event this long, on every 3rd request after warm-up
    version: str = "0.32.0-hostile"  # what /version says
    extra_model_ids: tuple[str, ...] = ()  # listed in /v1/models after the served model
    error_text: str | None = None  # every error_every-th after warm-up: HTTP 500, this raw text
    error_every: int = 3
    echo_auth_in_version: bool = False
    token_s: float = 0.0005
    seen_auth: set[str] = field(default_factory=set)
    completions: int = 0
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def number(self) -> int:
        """Count one completion request; its number."""
        with self.lock:
            self.completions += 1
            return self.completions

    def after_warm_up(self, n: int) -> int:
        """How many requests after the honest ones this is (0: one of those)."""
        return max(0, n - self.honest_first)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the tests read what the probe recorded, not this log."""

    def do_GET(self) -> None:
        plan = self.server.plan
        auth = self.headers.get("Authorization", "")
        if self.path.endswith("/v1/models"):
            card = {"id": MODEL, "object": "model", "owned_by": "hostile", "max_model_len": 4096}
            extra = [{"id": name, "object": "model"} for name in plan.extra_model_ids]
            self._json(200, {"object": "list", "data": [card, *extra]})
        elif self.path.endswith("/version"):
            version = f"{plan.version} {auth}" if plan.echo_auth_in_version else plan.version
            self._json(200, {"version": version})
        else:
            self._json(404, {"detail": "Not Found"})

    def do_POST(self) -> None:
        plan = self.server.plan
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        auth = self.headers.get("Authorization", "")
        plan.seen_auth.add(auth)
        if not body.get("stream"):  # a capability check: not a measured completion
            self._capability(plan, auth)
            return
        n = plan.number()
        late = plan.after_warm_up(n)
        if plan.echo_auth_every and late and late % plan.echo_auth_every == 0:
            self._json(401, {"error": f"invalid credentials: Authorization was {auth}"})
            return
        if plan.error_text is not None and late and late % plan.error_every == 0:
            self._text(500, plan.error_text)
            return
        if plan.stall == "headers" and late:
            plan.release.wait(120)
            return
        self._stream(plan, n, late, int(body["max_tokens"]), auth)

    def _capability(self, plan: Hostility, auth: str) -> None:
        if plan.echo_auth_every:
            self._json(400, {"error": {"message": f"no tools for {auth} ({auth[7:]})"}})
            return
        choice = {"index": 0, "message": {"role": "assistant", "content": "no"}}
        self._json(200, {"choices": [choice], "usage": {"completion_tokens": 1}})

    def _stream(self, plan: Hostility, n: int, late: int, max_tokens: int, auth: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("X-Echo", auth)  # a header never stored
        self.end_headers()
        try:
            for event in _events(plan, n, late, max_tokens, auth):
                if event is None:  # the stall point
                    self._stall(plan)
                    return
                self.wfile.write(event)
                self.wfile.flush()
                plan.release.wait(plan.token_s)
        except (BrokenPipeError, ConnectionResetError):
            return  # the probe gave up on this answer: what the test wants

    def _stall(self, plan: Hostility) -> None:
        trickle = {"trickle": b": keep-alive\n\n", "empty_events": _data({"choices": []})}
        if plan.stall in trickle:  # keep-alive comments or empty events: bytes, never a token
            pause_s = 0.2 if plan.stall == "trickle" else 0.01
            while not plan.release.wait(pause_s):
                self.wfile.write(trickle[plan.stall])
                self.wfile.flush()
            return
        plan.release.wait(120)

    def _text(self, status: int, text: str) -> None:
        payload = text.encode()  # raw: NUL, ESC and bidi controls as they are, not JSON-escaped
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _json(self, status: int, document: object) -> None:
        payload = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def _events(
    plan: Hostility, n: int, late: int, max_tokens: int, auth: str
) -> Iterator[bytes | None]:
    """The answer's SSE events; None where the server stalls."""
    if plan.echo_event_every and late and late % plan.echo_event_every == 0:
        yield _data({"error": {"message": f"engine failed for {auth}", "code": 500}})
        return
    if plan.huge_event_chars and late and late % 3 == 0:
        text = "x" * plan.huge_event_chars
        yield from (
            f"data: {text[i : i + 16384]}".encode() if i == 0 else text[i : i + 16384].encode()
            for i in range(0, len(text), 16384)
        )
        yield b"\n\n"
    for done in range(1, max_tokens + 1):
        if plan.stall == "between_chunks" and late and done == 2:
            yield None
            return
        if plan.stall in ("trickle", "empty_events") and late and done == 2:
            yield None
            return
        finish = "length" if done == max_tokens else None
        usage = {"prompt_tokens": 8, "completion_tokens": done}
        choice = {"index": 0, "text": f" t{done}", "finish_reason": finish}
        yield _data({"id": f"c{n}", "choices": [choice], "usage": usage})
    claimed = max_tokens
    if plan.lie_completion is not None and late and late % plan.lie_every == 0:
        claimed = plan.lie_completion(n, max_tokens)
    yield _data(
        {"id": f"c{n}", "choices": [], "usage": {"prompt_tokens": 8, "completion_tokens": claimed}}
    )
    yield b"data: [DONE]\n\n"


def _data(document: object) -> bytes:
    return f"data: {json.dumps(document)}\n\n".encode()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    plan: Hostility


@contextmanager
def hostile_server(plan: Hostility) -> Iterator[str]:
    """Serve `plan` on a free local port; yields the base URL, and releases every stalled
    request and stops on exit."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.plan = plan
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        plan.release.set()
        server.shutdown()
        server.server_close()
        thread.join(10)
