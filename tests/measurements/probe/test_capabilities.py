"""Capability checks against the simulated engine's profiles and against scripted failure shapes
(MockTransport): each result is supported / unsupported / failed with the answer quoted."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from measurements.probe.capabilities import (
    CHECK_SCHEMA,
    check_capabilities,
    check_lora,
    check_structured_output,
    check_tool_calling,
    conforms,
)
from measurements.run_file import Capabilities
from measurements.sim.profiles import TINY_FAST, TRTLLM_H100_LLAMA70B_FP8
from measurements.sim.server import start_in_thread

Handler = Callable[[httpx.Request], httpx.Response]


def _run_checks(base_url: str, model: str, adapter: str | None = None) -> Capabilities:
    async def go() -> Capabilities:
        async with httpx.AsyncClient(timeout=30) as client:
            return await check_capabilities(client, base_url, model, lora_adapter=adapter)

    return asyncio.run(go())


@pytest.fixture(scope="module")
def tiny() -> Iterator[str]:
    base_url, stop = start_in_thread(TINY_FAST)
    yield base_url
    stop()


def test_everything_supported_on_the_vllm_like_simulator(tiny: str) -> None:
    caps = _run_checks(tiny, "sim-tiny")
    assert caps.structured_output.status == "supported"
    assert caps.structured_output.detail == 'answered \'{"city": "Paris", "sunny": true}\''
    assert caps.tool_calling.status == "supported"
    assert caps.tool_calling.detail == 'called get_weather({"city": "sim"})'
    assert caps.lora.status == "supported"
    assert (
        caps.lora.detail == "adapter 'sim-tiny-lora' answered a completion (listed: sim-tiny-lora)"
    )


def test_named_adapter_that_is_not_loaded_is_unsupported(tiny: str) -> None:
    caps = _run_checks(tiny, "sim-tiny", adapter="sql-lora")
    assert caps.lora.status == "unsupported"
    assert caps.lora.detail == "HTTP 404: 'The model `sql-lora` does not exist.'"


def test_trtllm_like_simulator_ignores_schema_and_refuses_tools() -> None:
    base_url, stop = start_in_thread(TRTLLM_H100_LLAMA70B_FP8, time_scale=0.01)
    try:
        caps = _run_checks(base_url, "sim-llama-3.1-70b-fp8")
    finally:
        stop()
    assert caps.structured_output.status == "unsupported"
    assert caps.structured_output.detail is not None
    assert caps.structured_output.detail.startswith("answered text that is not JSON: '")
    assert caps.tool_calling.status == "unsupported"
    assert caps.tool_calling.detail == (
        'HTTP 400: \'"auto" tool choice requires --enable-auto-tool-choice and '
        "--tool-call-parser to be set'"
    )
    assert caps.lora.status == "not_checked"


# --- failure shapes (scripted server answers) -------------------------------------------------


def _check_with(handler: Handler, check: str) -> tuple[str, str | None]:
    async def go() -> tuple[str, str | None]:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            if check == "structured":
                result = await check_structured_output(client, "http://box:8000", "m")
            elif check == "tools":
                result = await check_tool_calling(client, "http://box:8000", "m")
            else:
                result = await check_lora(client, "http://box:8000", "m", "my-adapter")
        return result.status, result.detail

    return asyncio.run(go())


def _chat(message: dict[str, Any], finish: str = "stop") -> httpx.Response:
    choice = {"index": 0, "message": message, "finish_reason": finish}
    return httpx.Response(200, json={"choices": [choice]})


def test_connection_refused_is_failed_not_unsupported() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    for check in ("structured", "tools", "lora"):
        status, detail = _check_with(handler, check)
        assert status == "failed"
        assert detail is not None and "ConnectError" in detail


def test_server_error_is_failed_with_the_message_quoted() -> None:
    body = {"error": {"message": "CUDA error: an illegal memory access", "code": 500}}
    status, detail = _check_with(lambda _r: httpx.Response(500, json=body), "tools")
    assert (status, detail) == ("failed", "HTTP 500: 'CUDA error: an illegal memory access'")


def test_auth_failure_proves_nothing() -> None:
    body = {"error": "Unauthorized"}
    status, detail = _check_with(lambda _r: httpx.Response(401, json=body), "structured")
    assert (status, detail) == ("failed", "HTTP 401: 'Unauthorized'")


def test_old_style_vllm_error_body_is_quoted() -> None:
    body = {"object": "error", "message": "guided decoding is disabled", "code": 400}
    status, detail = _check_with(lambda _r: httpx.Response(400, json=body), "structured")
    assert (status, detail) == ("unsupported", "HTTP 400: 'guided decoding is disabled'")


def test_guided_json_fallback_counts_as_supported() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        sent = json.loads(request.content)
        if "response_format" in sent:
            return httpx.Response(400, json={"detail": "response_format is not supported"})
        assert sent["guided_json"] == CHECK_SCHEMA
        return _chat({"role": "assistant", "content": '{"city": "Rome", "sunny": false}'})

    status, detail = _check_with(handler, "structured")
    assert status == "supported"
    assert detail == 'via guided_json; answered \'{"city": "Rome", "sunny": false}\''


def test_json_that_ignores_the_schema_is_unsupported() -> None:
    answer = _chat({"role": "assistant", "content": '{"weather": "sunny"}'})
    status, detail = _check_with(lambda _r: answer, "structured")
    assert (status, detail) == (
        "unsupported",
        'answered JSON that ignores the schema: \'{"weather": "sunny"}\'',
    )


def test_truncated_json_is_failed_not_unsupported() -> None:
    answer = _chat({"role": "assistant", "content": '{"city": "Par'}, finish="length")
    status, detail = _check_with(lambda _r: answer, "structured")
    assert status == "failed"
    assert detail == 'answer cut at max_tokens before the JSON closed: \'{"city": "Par\''


def test_prose_cut_at_max_tokens_is_still_unsupported() -> None:
    answer = _chat({"role": "assistant", "content": "Sure! The weather in Paris is"}, "length")
    status, _detail = _check_with(lambda _r: answer, "structured")
    assert status == "unsupported"


def test_non_json_body_is_failed() -> None:
    status, detail = _check_with(lambda _r: httpx.Response(200, text="<html>proxy</html>"), "tools")
    assert (status, detail) == ("failed", "answer is not JSON: '<html>proxy</html>'")


def test_text_instead_of_a_tool_call_is_unsupported() -> None:
    answer = _chat({"role": "assistant", "content": "It is sunny in Paris.", "tool_calls": []})
    status, detail = _check_with(lambda _r: answer, "tools")
    assert (status, detail) == (
        "unsupported",
        "answered text instead of a tool call: 'It is sunny in Paris.'",
    )


def test_malformed_tool_arguments_are_failed() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{"}}
    answer = _chat({"role": "assistant", "content": None, "tool_calls": [call]})
    status, detail = _check_with(lambda _r: answer, "tools")
    assert status == "failed"
    assert detail is not None and detail.startswith("malformed tool call:")


def test_long_answers_are_quoted_briefly() -> None:
    answer = _chat({"role": "assistant", "content": "word " * 400})
    _status, detail = _check_with(lambda _r: answer, "tools")
    assert detail is not None and len(detail) < 220 and detail.endswith("...'")


def test_lora_listing_failure_is_failed() -> None:
    status, detail = _check_with(lambda _r: httpx.Response(503, text="loading"), "lora")
    assert (status, detail) == ("failed", "/v1/models answered HTTP 503: 'loading'")


def test_adapter_not_listed_but_served_is_supported() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json={"data": [{"id": "m"}]})
        assert json.loads(request.content)["model"] == "my-adapter"
        return httpx.Response(200, json={"choices": [{"index": 0, "text": " ok"}]})

    status, detail = _check_with(handler, "lora")
    assert status == "supported"
    assert detail == "adapter 'my-adapter' answered a completion (none listed in /v1/models)"


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ({"city": "Paris", "sunny": True}, True),
        ({"city": "Lyon", "sunny": True}, False),
        ({"city": "Paris"}, False),
        ({"city": "Paris", "sunny": 1}, False),
        ({"city": "Paris", "sunny": True, "extra": 1}, False),
        (["Paris"], False),
    ],
)
def test_conforms_to_the_check_schema(value: object, ok: bool) -> None:
    assert conforms(value, CHECK_SCHEMA) is ok


def test_conforms_arrays_and_numbers() -> None:
    schema = {"type": "array", "items": {"type": "number"}}
    assert conforms([1, 2.5], schema)
    assert not conforms([1, True], schema)
    assert conforms(3, {"type": "integer"}) and not conforms(3.5, {"type": "integer"})
