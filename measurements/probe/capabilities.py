"""Capability checks the seed article weighs: structured output (a JSON schema), tool calling and
LoRA adapters. Each ends supported / unsupported / failed (or not_checked) with the server's
answer quoted briefly: `unsupported` means the server answered and refused or ignored the
feature; `failed` means the check could not tell (network error, 5xx, auth, garbled answer)."""

from __future__ import annotations

import json
from typing import Any

import httpx

from measurements.probe.redaction import redact_text
from measurements.run_file import Capabilities, CapabilityCheck, CapabilityStatus
from measurements.safe_text import escape_hidden

DETAIL_CHARS = 160
MAX_TOKENS = 96
# Two small fields: constrained decoding closes this object in a handful of tokens.
CHECK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "enum": ["Paris", "Rome"]},
        "sunny": {"type": "boolean"},
    },
    "required": ["city", "sunny"],
    "additionalProperties": False,
}
WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
# Status codes that mean "the server understood and said no"; other errors prove nothing.
REFUSALS = frozenset({400, 404, 405, 422, 501})


async def check_capabilities(
    client: httpx.AsyncClient,
    base_url: str,
    model: str,
    *,
    lora_adapter: str | None = None,
) -> Capabilities:
    """Check structured output, tool calling and LoRA against a running server."""
    url = base_url.rstrip("/")
    return Capabilities(
        structured_output=await check_structured_output(client, url, model),
        tool_calling=await check_tool_calling(client, url, model),
        lora=await check_lora(client, url, model, lora_adapter),
    )


async def check_structured_output(
    client: httpx.AsyncClient, base_url: str, model: str
) -> CapabilityCheck:
    """Ask for JSON matching CHECK_SCHEMA via response_format, then vLLM's older guided_json."""
    messages = [{"role": "user", "content": "Is it sunny in Paris? Answer in JSON."}]
    body: dict[str, Any] = {"model": model, "messages": messages, "max_tokens": MAX_TOKENS}
    schema_format = {"name": "capplan_check", "schema": CHECK_SCHEMA}
    first = await _structured_attempt(
        client,
        base_url,
        {**body, "response_format": {"type": "json_schema", "json_schema": schema_format}},
    )
    if first.status != "unsupported":
        return first
    second = await _structured_attempt(client, base_url, {**body, "guided_json": CHECK_SCHEMA})
    if second.status == "supported":
        return _check("supported", f"via guided_json; {second.detail}")
    return first


async def _structured_attempt(
    client: httpx.AsyncClient, base_url: str, body: dict[str, Any]
) -> CapabilityCheck:
    answer = await _post(client, f"{base_url}/v1/chat/completions", body)
    if isinstance(answer, CapabilityCheck):
        return answer
    choice = _first_choice(answer)
    message = choice.get("message") if choice else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        return _check("failed", f"no message content in the answer: {_quote(answer)}")
    try:
        value = json.loads(content)
    except json.JSONDecodeError:
        began_json = content.lstrip().startswith(("{", "["))
        if began_json and choice is not None and choice.get("finish_reason") == "length":
            return _check(
                "failed", f"answer cut at max_tokens before the JSON closed: {_quote(content)}"
            )
        return _check("unsupported", f"answered text that is not JSON: {_quote(content)}")
    if conforms(value, CHECK_SCHEMA):
        return _check("supported", f"answered {_quote(content)}")
    return _check("unsupported", f"answered JSON that ignores the schema: {_quote(content)}")


async def check_tool_calling(
    client: httpx.AsyncClient, base_url: str, model: str
) -> CapabilityCheck:
    """Offer one function with tool_choice "auto" and expect a well-formed call to it."""
    prompt = "What is the weather in Paris? Use the get_weather tool."
    body = {
        "model": model,
        "messages": [{"role": "user", "content": prompt}],
        "tools": [WEATHER_TOOL],
        "tool_choice": "auto",
        "max_tokens": MAX_TOKENS,
    }
    answer = await _post(client, f"{base_url}/v1/chat/completions", body)
    if isinstance(answer, CapabilityCheck):
        return answer
    choice = _first_choice(answer)
    message = choice.get("message") if choice else None
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    if not calls:
        content = message.get("content") if isinstance(message, dict) else answer
        return _check("unsupported", f"answered text instead of a tool call: {_quote(content)}")
    function = calls[0].get("function") if isinstance(calls[0], dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    arguments = function.get("arguments") if isinstance(function, dict) else None
    if name != "get_weather" or not _is_json_object(arguments):
        return _check("failed", f"malformed tool call: {_quote(calls[0])}")
    return _check("supported", f"called get_weather({arguments})")


async def check_lora(
    client: httpx.AsyncClient, base_url: str, model: str, adapter: str | None
) -> CapabilityCheck:
    """List adapters in /v1/models and send one completion to `adapter` (or the first listed)."""
    try:
        listing = await client.get(f"{base_url}/v1/models")
        cards = listing.json().get("data") if listing.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        return _check("failed", redact_text(f"could not list models: {type(exc).__name__}: {exc}"))
    if not isinstance(cards, list):
        return _check(
            "failed", f"/v1/models answered HTTP {listing.status_code}: {_quote(listing.text)}"
        )
    listed = [str(c.get("id")) for c in cards if isinstance(c, dict) and c.get("id") != model]
    target = adapter or (listed[0] if listed else None)
    if target is None:
        return _check("not_checked", "no adapter given and none listed in /v1/models")
    body = {"model": target, "prompt": "Hello", "max_tokens": 4}
    answer = await _post(client, f"{base_url}/v1/completions", body)
    if isinstance(answer, CapabilityCheck):
        return answer
    shown = ", ".join(name[:80] for name in listed[:10]) + (" ..." if len(listed) > 10 else "")
    where = f"listed: {shown}" if listed else "none listed in /v1/models"
    return _check("supported", f"adapter {target!r} answered a completion ({where})")


async def _post(
    client: httpx.AsyncClient, url: str, body: dict[str, Any]
) -> dict[str, Any] | CapabilityCheck:
    """The JSON answer, or the check's verdict when there is no usable answer."""
    try:
        answer = await client.post(url, json=body)
    except httpx.HTTPError as exc:
        return _check("failed", redact_text(f"{type(exc).__name__}: {exc}"))
    if answer.status_code != 200:
        status: CapabilityStatus = "unsupported" if answer.status_code in REFUSALS else "failed"
        return _check(status, f"HTTP {answer.status_code}: {_quote(_error_message(answer))}")
    try:
        decoded = answer.json()
    except ValueError:
        return _check("failed", f"answer is not JSON: {_quote(answer.text)}")
    if not isinstance(decoded, dict):
        return _check("failed", f"answer is not a JSON object: {_quote(answer.text)}")
    return decoded


def _error_message(answer: httpx.Response) -> object:
    try:
        body = answer.json()
    except ValueError:
        return answer.text
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and "message" in error:
            return error["message"]
        for key in ("message", "detail", "error"):
            if key in body:
                return body[key]
    return body


def _first_choice(answer: dict[str, Any]) -> dict[str, Any] | None:
    choices = answer.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    return first if isinstance(first, dict) else None


def _is_json_object(text: object) -> bool:
    try:
        return isinstance(text, str) and isinstance(json.loads(text), dict)
    except json.JSONDecodeError:
        return False


def conforms(value: object, schema: dict[str, Any]) -> bool:
    """Whether a value fits a simple JSON schema (type, enum, properties, required, items)."""
    if "enum" in schema and value not in schema["enum"]:
        return False
    kind = schema.get("type")
    if kind == "object":
        return _object_conforms(value, schema)
    if kind == "array":
        items = schema.get("items", {})
        return isinstance(value, list) and all(conforms(v, items) for v in value)
    checks = {
        "string": lambda v: isinstance(v, str),
        "boolean": lambda v: isinstance(v, bool),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "null": lambda v: v is None,
    }
    check = checks.get(str(kind))
    return check(value) if check else True


def _object_conforms(value: object, schema: dict[str, Any]) -> bool:
    if not isinstance(value, dict):
        return False
    props: dict[str, Any] = schema.get("properties", {})
    if any(name not in value for name in schema.get("required", [])):
        return False
    if schema.get("additionalProperties") is False and any(k not in props for k in value):
        return False
    return all(conforms(v, props[k]) for k, v in value.items() if k in props)


def _check(status: CapabilityStatus, detail: str) -> CapabilityCheck:
    # The detail quotes what the server said, which may echo the key back (masked here) or
    # hold NUL, ESC or bidi controls (kept as escapes, so the run always stores).
    return CapabilityCheck(status=status, detail=escape_hidden(redact_text(detail)))


def _quote(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = " ".join(text.split())
    return repr(text if len(text) <= DETAIL_CHARS else text[: DETAIL_CHARS - 3] + "...")
