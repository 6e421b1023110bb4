"""A simulated OpenAI-compatible engine (`capplan sim-server`): vLLM's exact SSE chunk shapes over
a continuous-batching scheduler, always labelled simulated (`/version`, model ids `sim-...`);
`/sim/stats` exposes the scheduler's counters. `time_scale` < 1 runs faster than real time."""

from __future__ import annotations

import contextlib
import json
import random
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from errors import CapplanError, InputError
from measurements.sim.profiles import SimProfile, get_profile
from measurements.sim.replies import (
    ReplyError,
    SimReply,
    chat_response,
    completion_response,
    parse_reply,
)
from measurements.sim.scheduler import BatchScheduler, SimSequence


@dataclass(slots=True)
class _Chunks:
    """Pre-built pieces of one stream's SSE events, so each token costs one string join."""

    head: str  # 'data: {"id":...,"model":...,"choices":[{"index":0,'
    base: str  # 'data: {"id":...,"model":...,'
    chat: bool
    prompt_tokens: int
    continuous: bool
    include_usage: bool
    fingerprint: str

    def usage(self, completion_tokens: int, *, running: bool = False) -> str:
        """The usage object in vLLM's key order; chat's per-chunk (continuous) usage also says
        completion_tokens_details, as vLLM 0.32 does."""
        total = self.prompt_tokens + completion_tokens
        details = ',"completion_tokens_details":null' if running and self.chat else ""
        return (
            f'"usage":{{"prompt_tokens":{self.prompt_tokens},"total_tokens":{total},'
            f'"completion_tokens":{completion_tokens}{details}}}'
        )

    def role(self) -> str:
        """The chat stream's first event: the assistant role with empty content."""
        usage = "," + self.usage(0, running=True) if self.continuous else ""
        return (
            f'{self.head}"delta":{{"role":"assistant","content":""}},"logprobs":null,'
            f'"finish_reason":null}}]{usage},"prompt_token_ids":null,"prompt_text":null}}\n\n'
        )

    def token(self, piece_json: str, count: int, finish_reason: str | None) -> str:
        """One content event; the last token's event carries the finish reason."""
        if self.chat:
            body = f'"delta":{{"content":{piece_json}}},"logprobs":null,'
            tail = '"token_ids":null}]'
        else:
            body = f'"text":{piece_json},"logprobs":null,'
            tail = '"prompt_token_ids":null,"token_ids":null}]'
        if finish_reason is None:
            reason = '"finish_reason":null,'
            reason += "" if self.chat else '"stop_reason":null,'
        else:
            reason = f'"finish_reason":"{finish_reason}","stop_reason":null,'
        extra = "," + self.usage(count, running=True) if self.continuous else ""
        if finish_reason is not None and not self.include_usage:
            extra += f',"system_fingerprint":"{self.fingerprint}"'
        return f"{self.head}{body}{reason}{tail}{extra}}}\n\n"

    def end(self, completion_tokens: int) -> str:
        """The trailing usage event (when asked for) and `[DONE]`."""
        done = "data: [DONE]\n\n"
        if not self.include_usage:
            return done
        usage = self.usage(completion_tokens)
        return (
            f'{self.base}"choices":[],{usage},"system_fingerprint":"{self.fingerprint}"}}\n\n{done}'
        )


class SimEngine:
    """The app's state: profile, scheduler, seeded randomness and the served model ids."""

    def __init__(self, profile: SimProfile, *, seed: int, time_scale: float) -> None:
        self.profile = profile
        self.scheduler = BatchScheduler(profile, time_scale=time_scale)
        self.rng = random.Random(seed)
        self.fingerprint = f"sim-{profile.name}"
        self.models = (profile.model, *profile.lora_adapters)

    def request_id(self, chat: bool) -> str:
        """A vLLM-style id: cmpl- / chatcmpl- and 16 hex digits."""
        return ("chatcmpl-" if chat else "cmpl-") + f"{self.rng.getrandbits(64):016x}"


async def _generate(engine: SimEngine, request: Request, chat: bool) -> Response:
    try:
        raw = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return _error(400, "request body is not JSON", "BadRequestError")
    if not isinstance(raw, dict):
        return _error(400, "request body must be a JSON object", "BadRequestError")
    try:
        reply = parse_reply(raw, engine.profile, engine.rng, chat=chat)
    except ReplyError as exc:
        return _error(exc.status, exc.message, exc.kind, exc.param)
    seq = SimSequence(reply.prompt_tokens, len(reply.pieces))
    engine.scheduler.submit(seq)
    rid = engine.request_id(chat)
    if reply.stream:
        chunks = _chunks(engine, reply, rid, chat)
        return StreamingResponse(_stream(seq, reply, chunks), media_type="text/event-stream")
    try:
        while await seq.next_count() < seq.output_tokens:
            pass
    finally:
        seq.cancelled = True
    build = chat_response if chat else completion_response
    return JSONResponse(build(reply, rid, engine.fingerprint))


def _chunks(engine: SimEngine, reply: SimReply, rid: str, chat: bool) -> _Chunks:
    kind = "chat.completion.chunk" if chat else "text_completion"
    base = (
        f'data: {{"id":"{rid}","object":"{kind}","created":{int(time.time())},'
        f'"model":{json.dumps(reply.model)},'
    )
    return _Chunks(
        head=base + '"choices":[{"index":0,',
        base=base,
        chat=chat,
        prompt_tokens=reply.prompt_tokens,
        continuous=reply.continuous_usage,
        include_usage=reply.include_usage,
        fingerprint=engine.fingerprint,
    )


async def _stream(seq: SimSequence, reply: SimReply, chunks: _Chunks) -> AsyncIterator[str]:
    sent = 0
    total = seq.output_tokens
    try:
        while sent < total:
            count = await seq.next_count()
            # Tokens that piled up while this stream waited go out in one write, still as
            # one SSE event per token (what vLLM does when its output loop falls behind).
            parts = [chunks.role()] if sent == 0 and chunks.chat else []
            for k in range(sent + 1, count + 1):
                reason = reply.finish_reason if k == total else None
                parts.append(chunks.token(json.dumps(reply.pieces[k - 1]), k, reason))
            sent = count
            if sent >= total:
                parts.append(chunks.end(total))
            yield "".join(parts)
    finally:
        seq.cancelled = True


def _error(status: int, message: str, kind: str, param: str | None = None) -> JSONResponse:
    body = {"error": {"message": message, "type": kind, "param": param, "code": status}}
    return JSONResponse(body, status_code=status)


def create_app(profile: SimProfile, *, seed: int = 0, time_scale: float = 1.0) -> Starlette:
    """The simulated engine as an ASGI app; `time_scale` < 1 runs faster than real time."""
    if not time_scale > 0:
        raise InputError(
            "time_scale must be a positive number", field="time_scale", value=time_scale
        )
    engine = SimEngine(profile, seed=seed, time_scale=time_scale)

    async def health(_: Request) -> Response:
        return Response(status_code=200)

    async def version(_: Request) -> Response:
        return JSONResponse(
            {
                "version": f"sim-{profile.engine_version}",
                "simulated": True,
                "profile": profile.name,
                "imitates": profile.imitates,
                "time_scale": time_scale,
            }
        )

    async def models(_: Request) -> Response:
        return JSONResponse(
            {"object": "list", "data": [_model_card(engine, m) for m in engine.models]}
        )

    async def stats(_: Request) -> Response:
        s = engine.scheduler.stats
        body = {
            "steps": s.steps,
            "tokens_emitted": s.tokens_emitted,
            "busy_s": s.busy_s,
            "requests_admitted": s.requests_admitted,
            "max_running": s.max_running,
            "running": len(engine.scheduler.running),
            "waiting": len(engine.scheduler.waiting),
        }
        return JSONResponse(body)

    async def completions(request: Request) -> Response:
        return await _generate(engine, request, chat=False)

    async def chat(request: Request) -> Response:
        return await _generate(engine, request, chat=True)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        yield
        await engine.scheduler.close()

    routes = [
        Route("/health", health),
        Route("/version", version),
        Route("/v1/models", models),
        Route("/sim/stats", stats),
        Route("/v1/completions", completions, methods=["POST"]),
        Route("/v1/chat/completions", chat, methods=["POST"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


def _model_card(engine: SimEngine, model_id: str) -> dict[str, object]:
    base = engine.profile.model
    return {
        "id": model_id,
        "object": "model",
        "created": 0,
        "owned_by": "capplan-sim",
        "root": model_id,
        "parent": None if model_id == base else base,
        "max_model_len": engine.profile.max_model_len,
        "permission": [_PERMISSION],
    }


_PERMISSION = {  # what vLLM 0.32 lists for every model
    "id": "modelperm-sim",
    "object": "model_permission",
    "created": 0,
    "allow_create_engine": False,
    "allow_sampling": True,
    "allow_logprobs": True,
    "allow_search_indices": False,
    "allow_view": True,
    "allow_fine_tuning": False,
    "organization": "*",
    "group": None,
    "is_blocking": False,
}


def _config(app: Starlette, host: str, port: int) -> uvicorn.Config:
    # No access log: at thousands of chunks per second it would cost more than the engine.
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
        backlog=4096,
    )


def serve(
    host: str, port: int, profile_name: str, *, seed: int = 0, time_scale: float = 1.0
) -> None:
    """Run the simulated engine until interrupted (blocks)."""
    app = create_app(get_profile(profile_name), seed=seed, time_scale=time_scale)
    uvicorn.Server(_config(app, host, port)).run()


def start_in_thread(
    profile: SimProfile | str,
    port: int = 0,
    *,
    host: str = "127.0.0.1",
    seed: int = 0,
    time_scale: float = 1.0,
) -> tuple[str, Callable[[], None]]:
    """Serve in a background thread; return the base URL and a function that stops it."""
    chosen = get_profile(profile) if isinstance(profile, str) else profile
    app = create_app(chosen, seed=seed, time_scale=time_scale)
    sock = listening_socket(host, port)
    bound_port = sock.getsockname()[1]
    server = uvicorn.Server(_config(app, host, bound_port))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in _until(15.0):
        if server.started or not thread.is_alive():
            break
    if not server.started:
        sock.close()
        raise CapplanError(f"simulated server did not start on {host}:{bound_port}")

    def stop() -> None:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()

    return f"http://{host}:{bound_port}", stop


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound TCP socket for uvicorn; port 0 picks a free port."""
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on sockets that say they are
    # TCP, and without it Nagle + delayed ACK can hold a response body back for 40 ms.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    return sock


def _until(timeout_s: float) -> Iterator[None]:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        yield
        time.sleep(0.01)
