"""One request by STYLE.md's probe invariants: a scripted clock moved by the fake stream,
recorded vLLM bodies and trtllm-serve bodies through httpx.MockTransport."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path

import httpx
import numpy as np
import pytest

from measurements.aggregate import per_token_gaps
from measurements.probe import send as send_module
from measurements.probe.config import ProbeConfig
from measurements.probe.prompts import PromptSpec
from measurements.probe.redaction import remember_secret
from measurements.probe.send import RequestRecord, send_request
from measurements.probe.workloads import WorkloadConfig

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
BODIES = {
    "vllm-completions": FIXTURES / "vllm-cpu-real" / "vllm-completions-stream.sse",
    "vllm-chat": FIXTURES / "vllm-cpu-real" / "vllm-chat-stream.sse",
    "trtllm-completions": FIXTURES / "sse" / "trtllm-completions-continuous.sse",
    "trtllm-chat": FIXTURES / "sse" / "trtllm-chat-continuous.sse",
}
CONFIG = ProbeConfig(
    base_url="http://server:8000",
    model="m",
    concurrencies=(1,),
    workload=WorkloadConfig(isl=8, osl=8),
)
PROMPT = PromptSpec("hello there", input_tokens=8, max_tokens=8)
Handler = Callable[[httpx.Request], Coroutine[None, None, httpx.Response]]


class ScriptedClock:
    """A perf_counter stand-in that the fake stream moves forward before each piece it sends."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def events(path: Path) -> list[bytes]:
    return [part for part in re.split(rb"(?<=\n\n)", path.read_bytes()) if part]


def scripted(
    clock: ScriptedClock, pieces: list[tuple[float, bytes]], *, hang: bool = False
) -> Handler:
    async def handler(request: httpx.Request) -> httpx.Response:
        async def body() -> AsyncIterator[bytes]:
            for at_s, piece in pieces:
                clock.now = at_s
                yield piece
            if hang:
                await asyncio.Event().wait()

        return httpx.Response(200, content=body())

    return handler


def send(
    handler: Handler, clock: Callable[[], float], config: ProbeConfig = CONFIG
) -> RequestRecord:
    async def go() -> RequestRecord:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await asyncio.wait_for(send_request(client, config, PROMPT, clock), 10)

    return asyncio.run(go())


def test_ttft_is_taken_at_the_first_content_chunk_not_the_role_chunk() -> None:
    clock = ScriptedClock()
    times = [0.050] + [0.080 + 0.01 * i for i in range(8)] + [0.3, 0.4]
    record = send(
        scripted(clock, list(zip(times, events(BODIES["vllm-chat"]), strict=True))), clock
    )
    assert record.ok and record.send_s == 0.0
    assert record.first_token_s == 0.080 and record.end_s == pytest.approx(0.150)


@pytest.mark.parametrize("body", sorted(BODIES))
def test_e2e_minus_ttft_equals_the_sum_of_token_gaps(body: str) -> None:
    clock = ScriptedClock()
    pieces = events(BODIES[body])
    times = np.cumsum(np.random.default_rng(len(body)).uniform(0.001, 0.2, len(pieces)))
    record = send(scripted(clock, list(zip(times.tolist(), pieces, strict=True))), clock)
    assert record.ok and record.tokens_exact and record.end_s is not None
    assert record.first_token_s is not None
    gaps = per_token_gaps(record.chunk_times_s, record.chunk_tokens)
    assert record.end_s - record.first_token_s == pytest.approx(sum(gaps))
    assert len(gaps) + record.chunk_tokens[0] == record.output_tokens == 8


def test_trailing_usage_chunk_does_not_extend_latency() -> None:
    clock = ScriptedClock()
    pieces = events(BODIES["trtllm-completions"])
    times = [0.1, 0.2, 0.3, 0.4, 0.5, 9.0, 9.5]  # the usage chunk comes 8.5 s after the last token
    record = send(scripted(clock, list(zip(times, pieces, strict=True))), clock)
    assert record.end_s == 0.5 and record.chunk_tokens == (1, 3, 2, 1, 1)


def test_the_finish_chunk_that_carries_the_last_token_ends_the_request() -> None:
    clock = ScriptedClock()
    times = [0.1 * (i + 1) for i in range(10)]  # 7 text chunks, "" finish chunk, usage, [DONE]
    record = send(
        scripted(clock, list(zip(times, events(BODIES["vllm-completions"]), strict=True))), clock
    )
    assert (
        record.end_s == pytest.approx(0.8)
        and record.output_tokens == 8
        and record.input_tokens == 6
    )


def test_reading_stops_at_done(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(send_module, "DRAIN_AFTER_DONE_S", 0.05)
    clock = ScriptedClock()
    pieces = list(
        zip([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7], events(BODIES["trtllm-completions"]), strict=True)
    )
    pieces.append((5.0, b'data: {"choices": [{"text": "after done"}]}\n\ndata: {broken\n\n'))
    record = send(scripted(clock, pieces, hang=True), clock)  # the server never closes the stream
    assert record.ok and record.end_s == 0.5 and sum(record.chunk_tokens) == 8


def test_two_events_in_one_network_read_share_its_arrival_time() -> None:
    clock = ScriptedClock()
    parts = events(BODIES["vllm-chat"])
    pieces = [
        (0.1, parts[0] + parts[1] + parts[2]),
        *((0.2 + i, p) for i, p in enumerate(parts[3:])),
    ]
    record = send(scripted(clock, pieces), clock)
    assert record.chunk_times_s[:3] == (0.1, 0.1, 0.2)


def test_an_error_event_inside_an_http_200_stream_is_a_failure() -> None:
    clock = ScriptedClock()
    pieces = events(FIXTURES / "sse" / "vllm-error-event.sse")
    record = send(scripted(clock, list(zip([0.1, 0.2, 0.3, 0.4], pieces, strict=True))), clock)
    assert record.http_status == 200 and not record.ok
    assert record.error == "stream error event: The engine core died unexpectedly."


@pytest.mark.parametrize(
    ("pieces", "error"),
    [
        ([b'data: {"choices": [{"text": "a"}]}\n\n'], "stream ended before [DONE]"),
        (
            [b'data: {"choices": [], "usage": {"completion_tokens": 0}}\n\ndata: [DONE]\n\n'],
            "no token",
        ),
    ],
)
def test_streams_without_an_end_or_without_tokens_fail(pieces: list[bytes], error: str) -> None:
    clock = ScriptedClock()
    record = send(scripted(clock, [(0.1, piece) for piece in pieces]), clock)
    assert record.error is not None and record.error.startswith(error)


def test_http_errors_refusals_and_timeouts_are_data_not_exceptions() -> None:
    async def unavailable(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, json={"error": "overloaded"})

    async def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    assert send(unavailable, time.perf_counter).error == 'HTTP 503: {"error":"overloaded"}'
    record = send(refused, time.perf_counter)
    assert record.error == "ConnectError: connection refused" and record.http_status is None
    slow = CONFIG.model_copy(update={"request_timeout_s": 0.05})
    clock = ScriptedClock()
    hung = send(scripted(clock, [(0.1, events(BODIES["vllm-chat"])[1])], hang=True), clock, slow)
    assert hung.error == "Timeout: no full answer within 0.05 s" and hung.first_token_s == 0.1


def test_request_body_and_api_key_header(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[httpx.Request] = []

    async def capture(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(500)

    monkeypatch.setenv("CAPPLAN_TEST_KEY", "sk-secret")
    chat = CONFIG.model_copy(update={"endpoint": "chat", "api_key_env": "CAPPLAN_TEST_KEY"})
    send(capture, time.perf_counter, chat)
    send(capture, time.perf_counter, CONFIG.model_copy(update={"continuous_usage": False}))
    chat_body, plain_body = (json.loads(r.content) for r in seen)
    assert seen[0].url == "http://server:8000/v1/chat/completions"
    assert seen[0].headers["authorization"] == "Bearer sk-secret"
    assert chat_body["messages"] == [{"role": "user", "content": "hello there"}]
    assert chat_body["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
    assert (chat_body["max_tokens"], chat_body["ignore_eos"], chat_body["stream"]) == (
        8,
        True,
        True,
    )
    assert plain_body["prompt"] == "hello there" and "authorization" not in seen[1].headers
    assert plain_body["stream_options"] == {"include_usage": True}


def test_each_stall_is_named_by_the_timeout_that_ended_it() -> None:
    quick = CONFIG.model_copy(
        update={"first_byte_timeout_s": 0.05, "chunk_timeout_s": 0.05, "request_timeout_s": 5}
    )

    async def no_headers(request: httpx.Request) -> httpx.Response:
        await asyncio.Event().wait()
        raise AssertionError("never answers")

    started = time.perf_counter()
    silent = send(no_headers, time.perf_counter, quick)
    assert silent.error == "Timeout: no response within 0.05 s of sending (first-byte timeout)"
    clock = ScriptedClock()
    first = events(BODIES["vllm-completions"])[0]
    hung = send(scripted(clock, [(0.1, first)], hang=True), clock, quick)
    assert hung.error == (
        "Timeout: the stream went silent for 0.05 s after 1 token chunk(s) (between-chunks timeout)"
    )
    # Ended by the short timeouts, not the request timeout (a busy box only adds to the 0.05 s).
    assert time.perf_counter() - started < quick.request_timeout_s

    async def keep_alive(request: httpx.Request) -> httpx.Response:
        async def body() -> AsyncIterator[bytes]:
            yield first
            while True:  # bytes that are never an event: silence all the same
                await asyncio.sleep(0.01)
                yield b": ping\n\n"

        return httpx.Response(200, content=body())

    assert "between-chunks timeout" in str(send(keep_alive, time.perf_counter, quick).error)


def test_events_without_a_token_never_restart_the_between_chunks_wait() -> None:
    quick = CONFIG.model_copy(update={"chunk_timeout_s": 0.05, "request_timeout_s": 5})
    first = events(BODIES["vllm-completions"])[0]

    async def empty_events(request: httpx.Request) -> httpx.Response:
        async def body() -> AsyncIterator[bytes]:
            yield first
            while True:  # well-formed events, each without a token
                await asyncio.sleep(0.001)
                yield b'data: {"choices":[]}\n\n'

        return httpx.Response(200, content=body())

    started = time.perf_counter()
    record = send(empty_events, time.perf_counter, quick)
    assert time.perf_counter() - started < quick.request_timeout_s  # not the request timeout
    assert record.chunk_tokens == (1,) and record.error is not None
    assert record.error.startswith("Timeout: no token for 0.05 s after 1 token chunk(s), only ")
    assert record.error.endswith(" event(s) without one (between-chunks timeout)")


def test_an_error_body_is_read_bounded_and_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAPPLAN_TEST_ECHO_KEY", "plain-echoed-key-99")
    keyed = CONFIG.model_copy(update={"api_key_env": "CAPPLAN_TEST_ECHO_KEY"})
    remember_secret("plain-echoed-key-99")  # as the sweep does when it reads the key
    reads: list[int] = []

    async def echo(request: httpx.Request) -> httpx.Response:
        async def endless() -> AsyncIterator[bytes]:
            header = request.headers["authorization"]
            yield f"bad key {header} and {header.removeprefix('Bearer ')} ".encode()
            while True:
                reads.append(1)
                yield b"x" * 65536

        return httpx.Response(401, content=endless())

    record = send(echo, time.perf_counter, keyed)
    assert record.error is not None and record.http_status == 401
    assert record.error.startswith("HTTP 401: bad key Bearer *** and *** ")
    assert len(record.error) <= len("HTTP 401: ") + 300 and len(reads) <= 2
