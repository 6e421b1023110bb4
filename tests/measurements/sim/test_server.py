"""The simulated engine: vLLM's SSE chunk structure (against real vLLM bodies), request handling,
the continuous-batching scheduler, the profiles' calibration and 1,024 concurrent streams."""

from __future__ import annotations

import asyncio
import csv
import json
import random
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from errors import InputError
from measurements.sim.profiles import (
    PROFILES,
    TINY_FAST,
    TRTLLM_H100_LLAMA70B_FP8,
    VLLM_H100_LLAMA70B_FP8,
    SimProfile,
    fit_step_law,
    get_profile,
)
from measurements.sim.replies import approx_prompt_tokens, parse_reply
from measurements.sim.scheduler import BatchScheduler, SimSequence
from measurements.sim.server import listening_socket, start_in_thread

ROOT = Path(__file__).resolve().parents[3]
VLLM_SSE = ROOT / "tests" / "fixtures" / "vllm-cpu-real"
VLLM_SHAPES = ROOT / "tests" / "fixtures" / "vllm-cpu-shapes"
SEED_CSV = ROOT / "measurements" / "demo" / "data" / "seed_article_h100_llama31_70b_fp8.csv"


@pytest.fixture(scope="module")
def sim() -> Iterator[str]:
    base_url, stop = start_in_thread(TINY_FAST, seed=7)
    yield base_url
    stop()


def _events(body: str) -> list[str]:
    assert body.endswith("\n\n")
    events = body.split("\n\n")[:-1]
    assert all(e.startswith("data: ") for e in events)
    return [e.removeprefix("data: ") for e in events]


def _shape(value: Any) -> Any:
    """Keys in order and value types, recursively: the structure without the content."""
    if isinstance(value, dict):
        return [(k, _shape(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return type(value).__name__


def _shapes(events: list[str]) -> list[Any]:
    return [e if e == "[DONE]" else _shape(json.loads(e)) for e in events]


def _stream(base_url: str, path: str, body: dict[str, Any]) -> list[str]:
    answer = httpx.post(f"{base_url}{path}", json={**body, "stream": True}, timeout=30)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/event-stream")
    return _events(answer.text)


# --- SSE structure ----------------------------------------------------------------------------

REAL_REQUEST = {"max_tokens": 8, "ignore_eos": True, "stream_options": {"include_usage": True}}


def test_chat_stream_has_vllm_chunk_structure(sim: str) -> None:
    real = _events((VLLM_SSE / "vllm-chat-stream.sse").read_text(encoding="utf-8"))
    body = {"model": "sim-tiny", "messages": [{"role": "user", "content": "Hi"}], **REAL_REQUEST}
    ours = _stream(sim, "/v1/chat/completions", body)
    assert _shapes(ours) == _shapes(real)
    first = json.loads(ours[0])
    assert first["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert re.fullmatch(r"chatcmpl-[0-9a-f]{16}", first["id"])
    assert json.loads(ours[-2])["usage"]["completion_tokens"] == 8


def test_completions_stream_has_vllm_chunk_structure(sim: str) -> None:
    real = _events((VLLM_SSE / "vllm-completions-stream.sse").read_text(encoding="utf-8"))
    ours = _stream(sim, "/v1/completions", {"model": "sim-tiny", "prompt": "Hi", **REAL_REQUEST})
    assert _shapes(ours) == _shapes(real)
    assert re.fullmatch(r"cmpl-[0-9a-f]{16}", json.loads(ours[0])["id"])
    finish = [json.loads(e)["choices"][0]["finish_reason"] for e in ours[:-2]]
    assert finish == [None] * 7 + ["length"]


def _recorded(name: str) -> str:
    return (VLLM_SHAPES / name).read_text(encoding="utf-8")


CONTINUOUS = {"include_usage": True, "continuous_usage_stats": True}


def test_chat_continuous_usage_has_vllm_structure_and_counts(sim: str) -> None:
    body = {"messages": [{"role": "user", "content": "x" * 40}], "max_tokens": 3}
    ours = _stream(
        sim, "/v1/chat/completions", {**body, "ignore_eos": True, "stream_options": CONTINUOUS}
    )
    assert _shapes(ours) == _shapes(_events(_recorded("chat-continuous.sse")))
    usages = [json.loads(e)["usage"] for e in ours[:-1]]
    assert [u["completion_tokens"] for u in usages] == [0, 1, 2, 3, 3]
    prompt = 3 + approx_prompt_tokens("x" * 40)
    assert all(u["prompt_tokens"] == prompt for u in usages)
    assert all(u["total_tokens"] == prompt + u["completion_tokens"] for u in usages)


def test_completions_continuous_usage_has_vllm_structure(sim: str) -> None:
    body = {"prompt": "Hi", "max_tokens": 3, "ignore_eos": True, "stream_options": CONTINUOUS}
    ours = _stream(sim, "/v1/completions", body)
    assert _shapes(ours) == _shapes(_events(_recorded("completions-continuous.sse")))


def test_without_include_usage_the_finish_chunk_carries_the_fingerprint(sim: str) -> None:
    ours = _stream(sim, "/v1/completions", {"prompt": "Hi", "max_tokens": 3, "ignore_eos": True})
    assert _shapes(ours) == _shapes(_events(_recorded("completions-nousage.sse")))
    assert json.loads(ours[-2])["system_fingerprint"] == "sim-tiny-fast"


@pytest.mark.parametrize(
    ("path", "body", "recorded"),
    [
        ("/v1/completions", {"prompt": "Hi"}, "completion-nonstream.json"),
        (
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": "Hi"}]},
            "chat-nonstream.json",
        ),
    ],
)
def test_non_streamed_bodies_have_vllm_structure(
    sim: str, path: str, body: dict[str, Any], recorded: str
) -> None:
    answer = httpx.post(f"{sim}{path}", json={**body, "max_tokens": 3}).json()
    assert _shape(answer) == _shape(json.loads(_recorded(recorded)))


def test_continuous_usage_needs_include_usage_as_in_vllm(sim: str) -> None:
    options = {"continuous_usage_stats": True}
    events = _stream(
        sim, "/v1/completions", {"prompt": "Hi", "max_tokens": 2, "stream_options": options}
    )
    assert all("usage" not in json.loads(e) for e in events[:-1])


# --- requests ---------------------------------------------------------------------------------


def test_non_streamed_completion_text_recounts_to_its_usage(sim: str) -> None:
    answer = httpx.post(
        f"{sim}/v1/completions", json={"prompt": "a" * 101, "max_tokens": 12, "ignore_eos": True}
    ).json()
    usage = answer["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["total_tokens"]) == (
        26,
        12,
        38,
    )
    assert approx_prompt_tokens(answer["choices"][0]["text"]) == 12
    assert answer["choices"][0]["finish_reason"] == "length"


def test_without_ignore_eos_some_replies_stop_early() -> None:
    rng = random.Random(3)
    replies = [
        parse_reply({"prompt": "Hi", "max_tokens": 400}, TINY_FAST, rng, chat=False)
        for _ in range(40)
    ]
    for reply in replies:
        assert (reply.finish_reason == "length") == (len(reply.pieces) == 400)
    stopped = [len(r.pieces) for r in replies if r.finish_reason == "stop"]
    assert stopped  # mean natural length 200 << 400
    assert sum(stopped) / len(stopped) < 300
    body = {"prompt": "Hi", "max_tokens": 400, "ignore_eos": True}
    ignoring = parse_reply(body, TINY_FAST, rng, chat=False)
    assert (len(ignoring.pieces), ignoring.finish_reason) == (400, "length")


def test_default_completion_length_is_vllms_16(sim: str) -> None:
    answer = httpx.post(f"{sim}/v1/completions", json={"prompt": "Hi", "ignore_eos": True}).json()
    assert answer["usage"]["completion_tokens"] == 16


def test_version_and_models_say_simulated(sim: str) -> None:
    version = httpx.get(f"{sim}/version").json()
    assert version == {
        "version": "sim-0",
        "simulated": True,
        "profile": "tiny-fast",
        "imitates": "none",
        "time_scale": 1.0,
    }
    listing = httpx.get(f"{sim}/v1/models").json()
    recorded = json.loads(_recorded("models.json"))
    assert _shape(listing["data"][0]) == _shape(recorded["data"][0])
    cards = listing["data"]
    assert [c["id"] for c in cards] == ["sim-tiny", "sim-tiny-lora"]
    assert all(c["id"].startswith("sim-") for c in cards)
    assert cards[1]["parent"] == "sim-tiny"
    assert httpx.get(f"{sim}/health").status_code == 200


@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        ({"model": "gpt-4", "prompt": "Hi"}, 404, "The model `gpt-4` does not exist."),
        ({"prompt": "x" * 400, "max_tokens": 65500}, 400, "maximum context length is 65536"),
        ({"prompt": ""}, 400, "prompt"),
        ({"prompt": "Hi", "max_tokens": 0}, 400, "max_tokens must be at least 1"),
        ({"prompt": "Hi", "n": 2}, 400, "n=1"),
        ({"prompt": "Hi", "stream_options": {"include_usage": True}}, 400, "stream=True"),
    ],
)
def test_refused_requests_answer_vllm_style_errors(
    sim: str, body: dict[str, Any], status: int, fragment: str
) -> None:
    answer = httpx.post(f"{sim}/v1/completions", json=body)
    assert answer.status_code == status
    assert fragment in answer.json()["error"]["message"]
    assert answer.json()["error"]["code"] == status


def test_connections_to_the_thread_server_use_tcp_nodelay() -> None:
    # Headers and body leave in two writes; without TCP_NODELAY Nagle can hold the body back
    # until the client's delayed ACK (40 ms). asyncio sets it only on sockets marked TCP.
    async def accepted_nodelay() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def on_connect(_r: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            conn = writer.get_extra_info("socket")
            seen.set_result(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        sock = listening_socket("127.0.0.1", 0)
        server = await asyncio.start_server(on_connect, sock=sock)
        _r, writer = await asyncio.open_connection(*sock.getsockname())
        result = await seen
        writer.close()
        server.close()
        return result

    assert asyncio.run(accepted_nodelay()) == 1


def test_lora_adapter_answers_under_its_own_name(sim: str) -> None:
    answer = httpx.post(f"{sim}/v1/completions", json={"model": "sim-tiny-lora", "prompt": "Hi"})
    assert answer.json()["model"] == "sim-tiny-lora"


SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "enum": ["Rome"]}, "days": {"type": "integer"}},
    "required": ["city", "days"],
}


def test_structured_output_returns_json_of_the_schema(sim: str) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": SCHEMA}}
    body = {"messages": [{"role": "user", "content": "Hi"}], "response_format": fmt}
    answer = httpx.post(f"{sim}/v1/chat/completions", json=body).json()
    assert json.loads(answer["choices"][0]["message"]["content"]) == {"city": "Rome", "days": 1}
    streamed = _stream(sim, "/v1/chat/completions", {**body, "ignore_eos": True})
    text = "".join(json.loads(e)["choices"][0]["delta"].get("content", "") for e in streamed[:-1])
    assert json.loads(text) == {"city": "Rome", "days": 1}


def test_tool_call_names_the_function_with_conforming_arguments(sim: str) -> None:
    tool = {"type": "function", "function": {"name": "book", "parameters": SCHEMA}}
    body = {"messages": [{"role": "user", "content": "Book Rome"}], "tools": [tool]}
    answer = httpx.post(f"{sim}/v1/chat/completions", json=body).json()
    choice = answer["choices"][0]
    call = choice["message"]["tool_calls"][0]
    assert (call["type"], call["function"]["name"]) == ("function", "book")
    assert json.loads(call["function"]["arguments"]) == {"city": "Rome", "days": 1}
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None


def test_trtllm_profile_ignores_schemas_and_refuses_auto_tools() -> None:
    base_url, stop = start_in_thread(TRTLLM_H100_LLAMA70B_FP8, time_scale=0.01)
    try:
        fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": SCHEMA}}
        body = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 6}
        text = httpx.post(f"{base_url}/v1/chat/completions", json={**body, "response_format": fmt})
        with pytest.raises(json.JSONDecodeError):
            json.loads(text.json()["choices"][0]["message"]["content"])
        tool = {"type": "function", "function": {"name": "book", "parameters": SCHEMA}}
        refused = httpx.post(f"{base_url}/v1/chat/completions", json={**body, "tools": [tool]})
        assert refused.status_code == 400
        assert "--enable-auto-tool-choice" in refused.json()["error"]["message"]
    finally:
        stop()


def test_a_client_that_hangs_up_frees_its_batch_slot(sim: str) -> None:
    body = {"prompt": "Hi", "max_tokens": 60000, "ignore_eos": True, "stream": True}
    with httpx.Client(timeout=30) as client:
        with client.stream("POST", f"{sim}/v1/completions", json=body) as answer:
            lines = answer.iter_lines()
            assert next(lines).startswith("data: ")
        for _ in range(200):
            if httpx.get(f"{sim}/sim/stats").json()["running"] == 0:
                break
            time.sleep(0.02)
    assert httpx.get(f"{sim}/sim/stats").json()["running"] == 0


# --- scheduler (no HTTP, no clock) ------------------------------------------------------------


def _profile(**changes: Any) -> SimProfile:
    from dataclasses import replace

    return replace(TINY_FAST, **changes)


def test_batch_is_capped_and_the_queue_is_fifo() -> None:
    scheduler = BatchScheduler(_profile(max_batch=2))
    seqs = [SimSequence(prompt_tokens=10 * (i + 1), output_tokens=2 - (i == 0)) for i in range(3)]
    scheduler.waiting.extend(seqs)
    assert scheduler.admit() == 30  # the first two join; their prompts are prefilled this step
    assert scheduler.running == seqs[:2] and list(scheduler.waiting) == [seqs[2]]
    scheduler.emit()  # seq 0 (one token) finishes
    assert scheduler.admit() == 30
    assert scheduler.running == [seqs[1], seqs[2]]
    scheduler.emit()
    scheduler.emit()
    assert [s.generated for s in seqs] == [1, 2, 2]
    assert scheduler.running == [] and scheduler.stats.tokens_emitted == 5


def test_cancelled_sequences_leave_without_tokens() -> None:
    scheduler = BatchScheduler(_profile(max_batch=4))
    keep, drop = SimSequence(1, 5), SimSequence(1, 5)
    scheduler.waiting.extend([keep, drop])
    scheduler.admit()
    drop.cancelled = True
    scheduler.emit()
    assert scheduler.running == [keep] and drop.generated == 0


def test_step_time_is_a_plus_b_batch_plus_prefill() -> None:
    p = VLLM_H100_LLAMA70B_FP8
    assert p.step_time_s(64, 4000) == pytest.approx(13.936e-3 + 64 * 0.14965e-3 + 0.198)
    assert p.decode_tok_s(1000) == pytest.approx(p.decode_tok_s(p.max_batch))


def test_simulated_throughput_follows_the_step_law() -> None:
    # Real HTTP, 5x faster than real time: each stream asks 3 x 48 tokens, c = 1 and 8.
    profile = VLLM_H100_LLAMA70B_FP8
    scale = 0.2
    base_url, stop = start_in_thread(profile, time_scale=scale)
    try:
        for concurrency in (1, 8):
            stats_before = httpx.get(f"{base_url}/sim/stats").json()
            elapsed_s = asyncio.run(_closed_loop(base_url, concurrency, isl_chars=40, osl=48))
            stats = httpx.get(f"{base_url}/sim/stats").json()
            tokens = stats["tokens_emitted"] - stats_before["tokens_emitted"]
            busy_s = stats["busy_s"] - stats_before["busy_s"]
            expected = profile.closed_loop_tok_s(concurrency, isl=10, osl=48)
            alone = profile.closed_loop_tok_s(1, isl=10, osl=48)
            # The engine's own clock (sum of simulated step times) follows the law exactly at
            # c=1, whatever the box's load: a batch of one, and no step while none is running.
            # At c=8 a client slowed by a busy box leaves slots empty between requests, so the
            # batch lies between one and eight streams, and the rate between the two laws.
            assert alone * 0.88 <= tokens / busy_s <= expected * 1.12
            if concurrency == 1:
                assert tokens / busy_s == pytest.approx(expected, rel=0.12)
            # Wall time, scaled back, never beats the law: load and round trips only slow it
            # (within 5 % of the law on a quiet 2-core box; the other jobs on a loaded box can
            # take any share of the CPU, so no lower bound but a positive rate).
            wall_tok_s = tokens * scale / elapsed_s
            assert 0 < wall_tok_s < expected * 1.1
    finally:
        stop()


async def _closed_loop(base_url: str, concurrency: int, isl_chars: int, osl: int) -> float:
    body = {"prompt": "x" * isl_chars, "max_tokens": osl, "ignore_eos": True}
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:

        async def user() -> None:
            for _ in range(3):
                answer = await client.post("/v1/completions", json=body)
                assert answer.json()["usage"]["completion_tokens"] == osl

        started = time.perf_counter()
        await asyncio.gather(*(user() for _ in range(concurrency)))
        return time.perf_counter() - started


async def _raw_streams(host: str, port: int, streams: int, osl: int) -> list[int]:
    """Open `streams` concurrent SSE requests with a lean socket client; count events each."""
    body = json.dumps(
        {"prompt": "Hi", "max_tokens": osl, "stream": True, "ignore_eos": True}
    ).encode()
    head = (
        f"POST /v1/completions HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()

    async def one() -> int:
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(head + body)
        data = await reader.read()  # until the server closes: the whole chunked body
        writer.close()
        return data.count(b"data: ")

    return list(await asyncio.gather(*(one() for _ in range(streams))))


def test_one_thousand_and_twenty_four_concurrent_streams_complete() -> None:
    base_url, stop = start_in_thread(TINY_FAST)
    try:
        host, port = base_url.removeprefix("http://").split(":")
        counts = asyncio.run(_raw_streams(host, int(port), 1024, osl=64))
        stats = httpx.get(f"{base_url}/sim/stats").json()
    finally:
        stop()
    assert counts == [65] * 1024  # 64 token events + [DONE]
    assert stats["max_running"] > 512  # they really ran as one batch, not one by one


# --- profiles ---------------------------------------------------------------------------------


def _seed_curve(engine: str) -> tuple[list[float], list[float]]:
    lines = [x for x in SEED_CSV.read_text(encoding="utf-8").splitlines() if not x.startswith("#")]
    rows = [r for r in csv.DictReader(lines) if r["engine"] == engine]
    return [float(r["concurrency_or_rate"]) for r in rows], [float(r["output_tok_s"]) for r in rows]


@pytest.mark.parametrize(
    ("profile", "engine", "residuals_pct"),
    [
        (VLLM_H100_LLAMA70B_FP8, "vllm", (4.1, -3.0, -4.2, 4.3)),
        (TRTLLM_H100_LLAMA70B_FP8, "tensorrt-llm", (4.5, -3.3, -4.0, 4.0)),
    ],
)
def test_profiles_are_the_fit_of_the_seed_article_curves(
    profile: SimProfile, engine: str, residuals_pct: tuple[float, ...]
) -> None:
    concurrency, tok_s = _seed_curve(engine)
    assert concurrency == [1, 16, 64, 128]
    fit = fit_step_law(concurrency, tok_s)
    assert profile.step_base_s == pytest.approx(fit.step_base_s, rel=1e-3)
    assert profile.step_per_seq_s == pytest.approx(fit.step_per_seq_s, rel=1e-3)
    assert fit.residuals_pct == pytest.approx(residuals_pct, abs=0.06)  # as the docstring says
    for c, published in zip(concurrency, tok_s, strict=True):
        assert profile.decode_tok_s(int(c)) == pytest.approx(published, rel=0.05)


def test_fit_recovers_known_parameters() -> None:
    a, b = 0.02, 0.0003
    c = [1, 4, 16, 64, 256]
    fit = fit_step_law(c, [x / (a + b * x) for x in c])
    assert fit.step_base_s == pytest.approx(a)
    assert fit.step_per_seq_s == pytest.approx(b)
    assert max(abs(r) for r in fit.residuals_pct) < 1e-9


def test_profiles_are_labelled_simulated_and_unknown_names_are_input_errors() -> None:
    assert all(p.model.startswith("sim-") for p in PROFILES.values())
    assert get_profile("tiny-fast") is TINY_FAST
    with pytest.raises(InputError, match="known: tiny-fast, trtllm-h100-llama70b-fp8, vllm-h100"):
        get_profile("vllm-fast")
    with pytest.raises(InputError, match="at least two"):
        fit_step_law([1], [10])
    with pytest.raises(InputError, match="time_scale"):
        start_in_thread(TINY_FAST, time_scale=0)
