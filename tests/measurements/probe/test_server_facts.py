"""Server facts (`/version`, `/v1/models`) from the simulator and from a vLLM-shaped model list;
an unreachable or refusing server is an EngineError."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from measurements.probe.engines import EngineError
from measurements.probe.server_facts import ANSWER_BYTES, MODEL_IDS, server_facts
from measurements.sim.server import start_in_thread


def test_server_facts_from_the_simulator() -> None:
    base_url, stop = start_in_thread("vllm-h100-llama70b-fp8")
    try:
        facts = asyncio.run(server_facts(base_url))
    finally:
        stop()
    assert facts.simulated is True
    assert facts.profile == "vllm-h100-llama70b-fp8"
    assert facts.version == "sim-0.7.3"
    assert facts.models == ("sim-llama-3.1-70b-fp8", "sim-lora-sql", "sim-lora-support")
    assert facts.lora_adapters == ("sim-lora-sql", "sim-lora-support")
    assert facts.max_model_len == 16384


def test_server_facts_reads_a_vllm_model_list_without_version() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models":
            assert request.headers["authorization"] == "Bearer k-123"
            card = {"id": "llama", "owned_by": "vllm", "parent": None, "max_model_len": 8192}
            return httpx.Response(200, json={"object": "list", "data": [card]})
        return httpx.Response(404, json={"detail": "Not Found"})

    facts = asyncio.run(
        server_facts("http://gpu-box:8000/", "k-123", transport=httpx.MockTransport(handler))
    )
    assert (facts.models, facts.owned_by, facts.max_model_len) == (("llama",), "vllm", 8192)
    assert facts.version is None and facts.simulated is False


def test_server_facts_unreachable_or_refusing_server_is_an_engine_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("Connection refused", request=request)

    with pytest.raises(EngineError, match=r"could not reach http://h:1/v1/models \(ConnectError"):
        asyncio.run(server_facts("http://h:1", transport=httpx.MockTransport(refuse)))

    def unauthorised(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, json={"error": "Unauthorized"})

    with pytest.raises(EngineError, match="HTTP 401 \\(set the API key"):
        asyncio.run(server_facts("http://h:1", transport=httpx.MockTransport(unauthorised)))


def test_over_long_server_strings_are_cut_and_noted_and_answers_read_bounded() -> None:
    reads: list[int] = []

    async def endless_models() -> AsyncIterator[bytes]:
        yield b'{"object": "list", "data": [{"id": "m"}], "pad": "'
        while True:
            reads.append(1)
            yield b"x" * 65536

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models":
            return httpx.Response(200, json={"data": [{"id": "m", "owned_by": "o" * 500}]})
        return httpx.Response(200, json={"version": "v" * 300})

    facts = asyncio.run(server_facts("http://h:1", transport=httpx.MockTransport(handler)))
    assert facts.version == "v" * 61 + "..." and facts.owned_by == "o" * 61 + "..."
    assert facts.notes == (
        "the server's /version was 300 characters: kept the first 64",
        "the server's owned_by of /v1/models was 500 characters: kept the first 64",
    )

    def endless(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=endless_models())

    with pytest.raises(EngineError, match="did not answer an OpenAI model list"):
        asyncio.run(server_facts("http://h:1", transport=httpx.MockTransport(endless)))
    assert len(reads) <= ANSWER_BYTES // 65536 + 1


@pytest.mark.hostile
def test_nul_escape_and_bidi_in_what_the_server_says_are_escaped_and_noted() -> None:
    ids = [{"id": "llama"}, *({"id": f"lora-{n}\u202e", "parent": "llama"} for n in range(1500))]

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models":
            return httpx.Response(200, json={"data": ids})
        return httpx.Response(200, json={"version": "0.9\x00\x1b[2J", "profile": "p\u2067"})

    facts = asyncio.run(server_facts("http://h:1", transport=httpx.MockTransport(handler)))
    assert facts.version == "0.9\\x00\\x1b[2J" and facts.profile == "p\\u2067"
    assert len(facts.models) == MODEL_IDS and facts.lora_adapters[0] == "lora-0\\u202e"
    notes = "\n".join(facts.notes)
    assert "the server's /version held control or bidi characters" in notes
    assert "the server listed 1,501 model ids: kept the first 1,000" in notes
    assert f"{MODEL_IDS - 1} change(s) to the server's model ids" in notes
    kept = "".join([facts.version, facts.profile or "", *facts.models, *facts.lora_adapters])
    assert not any(c in kept for c in "\x00\x1b\u202e\u2067")
