"""What the simulated engine answers: request checks with vLLM's error messages, output lengths
(ignore_eos or a natural stop), structured-output and tool-call replies, non-streamed bodies.

Prompt tokens are approximated, not tokenized: ceil(characters / 4) (the usual rule of thumb
for English BPE), at least one; chat adds three tokens per message for the template. Every
generated token is four characters, so the reply re-counts to its own token count.
"""

from __future__ import annotations

import json
import math
import random
import time
from dataclasses import dataclass, replace

from measurements.sim.profiles import SimProfile

CHARS_PER_TOKEN = 4
CHAT_TOKENS_PER_MESSAGE = 3
DEFAULT_COMPLETION_MAX_TOKENS = 16  # vLLM's default for /v1/completions
VOCAB = tuple(f" {a}{b}{c}" for a in "bdgkmprst" for b in "aeiou" for c in "lnrsx")


class ReplyError(Exception):
    """A request the engine refuses; the app turns it into an HTTP error body."""

    def __init__(
        self, status: int, message: str, kind: str = "BadRequestError", param: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind
        self.param = param


@dataclass(frozen=True, slots=True)
class ToolCall:
    """The one function call a tool-calling reply makes."""

    call_id: str
    name: str
    arguments: str  # JSON text, as OpenAI sends it


@dataclass(frozen=True, slots=True)
class SimReply:
    """Everything the engine decided about one request before it is scheduled."""

    model: str
    prompt_tokens: int
    pieces: tuple[str, ...]  # the text of each output token, in order
    finish_reason: str
    stream: bool
    include_usage: bool
    continuous_usage: bool
    tool_call: ToolCall | None = None


def approx_prompt_tokens(text: str) -> int:
    """The simulator's token count for a text: ceil(characters / 4), at least one."""
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


def prompt_tokens(body: dict[str, object], *, chat: bool) -> int:
    """Approximate prompt tokens of a completions or chat body (see the module docstring)."""
    if not chat:
        prompt = body.get("prompt")
        if isinstance(prompt, list):
            if prompt and all(isinstance(t, int) for t in prompt):
                return len(prompt)
            prompt = prompt[0] if prompt else ""
        return approx_prompt_tokens(str(prompt or ""))
    messages = body.get("messages")
    total = 0
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        total += CHAT_TOKENS_PER_MESSAGE + approx_prompt_tokens(str(content or ""))
    return max(1, total)


def parse_reply(
    body: dict[str, object],
    profile: SimProfile,
    rng: random.Random,
    *,
    chat: bool,
) -> SimReply:
    """Check a request and decide the reply; raises ReplyError for what vLLM would refuse."""
    model = _served_model(body, profile)
    _check_prompt(body, chat)
    if body.get("n", 1) != 1:
        raise ReplyError(400, "the simulator answers n=1 only", param="n")
    n_prompt = prompt_tokens(body, chat=chat)
    max_tokens = _max_tokens(body, profile, n_prompt, chat=chat)
    stream, include_usage, continuous_usage = _stream_flags(body)
    base = SimReply(
        model=model,
        prompt_tokens=n_prompt,
        pieces=(),
        finish_reason="length",
        stream=stream,
        include_usage=include_usage,
        continuous_usage=continuous_usage,
    )
    tool = _tool_reply(body, profile, rng, stream=stream) if chat else None
    if tool is not None:
        pieces, reason = _split(tool.arguments, max_tokens)
        named = isinstance(body.get("tool_choice"), dict)
        finish = reason if reason == "length" or named else "tool_calls"
        return replace(base, pieces=pieces, finish_reason=finish, tool_call=tool)
    schema = _structured_schema(body)
    if schema is not None and profile.structured_output == "rejected":
        raise ReplyError(
            400, "structured output is not supported by this engine", param="response_format"
        )
    if schema is not None and profile.structured_output == "supported":
        pieces, reason = _split(json.dumps(example_for_schema(schema)), max_tokens)
        return replace(base, pieces=pieces, finish_reason=reason)
    count, reason = _output_length(body, profile, rng, max_tokens)
    return replace(base, pieces=tuple(rng.choices(VOCAB, k=count)), finish_reason=reason)


def _stream_flags(body: dict[str, object]) -> tuple[bool, bool, bool]:
    """(stream, include_usage, continuous usage) with vLLM's rules."""
    stream = body.get("stream") is True
    options = body.get("stream_options")
    if options and not stream:
        raise ReplyError(
            400, "Stream options can only be defined when `stream=True`.", param="stream_options"
        )
    options = options if isinstance(options, dict) else {}
    include_usage = stream and options.get("include_usage") is True
    # As vLLM: continuous usage only takes effect together with include_usage.
    return stream, include_usage, include_usage and options.get("continuous_usage_stats") is True


def _served_model(body: dict[str, object], profile: SimProfile) -> str:
    model = body.get("model")
    if model is None:
        return profile.model
    if model not in (profile.model, *profile.lora_adapters):
        raise ReplyError(404, f"The model `{model}` does not exist.", "NotFoundError", "model")
    return str(model)


def _check_prompt(body: dict[str, object], chat: bool) -> None:
    if chat and not (isinstance(body.get("messages"), list) and body["messages"]):
        raise ReplyError(400, "messages must be a non-empty list", param="messages")
    if not chat and body.get("prompt") in (None, "", []):
        raise ReplyError(
            400, "Either prompt or prompt_embeds must be provided and non-empty.", param="prompt"
        )


def _max_tokens(body: dict[str, object], profile: SimProfile, n_prompt: int, *, chat: bool) -> int:
    raw = body.get("max_completion_tokens") if chat else None
    raw = body.get("max_tokens") if raw is None else raw
    if raw is None:
        room = profile.max_model_len - n_prompt
        raw = room if chat else min(DEFAULT_COMPLETION_MAX_TOKENS, room)
    if not isinstance(raw, int) or isinstance(raw, bool) or raw < 1:
        raise ReplyError(400, f"max_tokens must be at least 1, got {raw!r}", param="max_tokens")
    if n_prompt + raw > profile.max_model_len:
        raise ReplyError(
            400,
            f"This model's maximum context length is {profile.max_model_len} tokens. However, "
            f"you requested {n_prompt + raw} tokens ({n_prompt} in the messages, {raw} in the "
            "completion). Please reduce the length of the messages or completion.",
            param="max_tokens",
        )
    return raw


def _output_length(
    body: dict[str, object], profile: SimProfile, rng: random.Random, max_tokens: int
) -> tuple[int, str]:
    if body.get("ignore_eos") is True:
        return max_tokens, "length"
    # EOS honoured: a natural length, exponential around the profile's mean.
    natural = 1 + int(rng.expovariate(1.0 / profile.mean_natural_output_tokens))
    return (max_tokens, "length") if natural >= max_tokens else (natural, "stop")


def _split(text: str, max_tokens: int) -> tuple[tuple[str, ...], str]:
    pieces = tuple(text[i : i + CHARS_PER_TOKEN] for i in range(0, len(text), CHARS_PER_TOKEN))
    if len(pieces) > max_tokens:
        return pieces[:max_tokens], "length"
    return pieces or ("",), "stop"


def _structured_schema(body: dict[str, object]) -> dict[str, object] | None:
    fmt = body.get("response_format")
    if isinstance(fmt, dict):
        if fmt.get("type") == "json_schema":
            spec = fmt.get("json_schema")
            schema = spec.get("schema") if isinstance(spec, dict) else None
            return schema if isinstance(schema, dict) else {}
        if fmt.get("type") == "json_object":
            return {"type": "object", "properties": {"result": {"type": "string"}}}
    guided = body.get("guided_json")  # vLLM's older extra parameter
    structured = body.get("structured_outputs")  # and its newer one
    if isinstance(structured, dict) and isinstance(structured.get("json"), dict):
        guided = structured["json"]
    return guided if isinstance(guided, dict) else None


def _tool_reply(
    body: dict[str, object], profile: SimProfile, rng: random.Random, *, stream: bool
) -> ToolCall | None:
    tools = body.get("tools")
    choice = body.get("tool_choice", "auto")
    if not isinstance(tools, list) or not tools or choice == "none":
        return None
    if profile.tool_calling == "rejected":
        message = (
            '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
            if choice == "auto"
            else "tool calling is not supported by this engine"
        )
        raise ReplyError(400, message, param="tool_choice")
    if stream:
        raise ReplyError(
            400, "the simulator does not stream tool calls; send stream=false", param="stream"
        )
    functions: list[dict[str, object]] = [
        t["function"] for t in tools if isinstance(t, dict) and isinstance(t.get("function"), dict)
    ]
    wanted = choice.get("function", {}).get("name") if isinstance(choice, dict) else None
    chosen = [f for f in functions if wanted is None or f.get("name") == wanted]
    if not chosen:
        raise ReplyError(
            400, f"tool_choice names no tool that was given: {wanted!r}", param="tool_choice"
        )
    params = chosen[0].get("parameters")
    arguments = json.dumps(example_for_schema(params if isinstance(params, dict) else {}))
    call_id = f"chatcmpl-tool-{rng.getrandbits(128):032x}"
    return ToolCall(call_id=call_id, name=str(chosen[0].get("name")), arguments=arguments)


def example_for_schema(schema: object, depth: int = 0) -> object:
    """A small value that conforms to a simple JSON schema (types, enum, const, properties)."""
    if not isinstance(schema, dict) or depth > 8:
        return "sim"
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return example_for_schema(options[0], depth + 1)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    return _example_of_type(str(kind), schema, depth)


def _example_of_type(kind: str, schema: dict[str, object], depth: int) -> object:
    if kind == "object":
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        return {name: example_for_schema(sub, depth + 1) for name, sub in props.items()}
    if kind == "array":
        count = schema.get("minItems")
        count = count if isinstance(count, int) and count > 0 else 1
        return [example_for_schema(schema.get("items"), depth + 1)] * count
    if kind in ("integer", "number"):
        low = schema.get("minimum", 1)
        return low if isinstance(low, int | float) else 1
    scalars: dict[str, object] = {"boolean": True, "null": None}
    return scalars.get(kind, "sim")


def completion_response(reply: SimReply, request_id: str, fingerprint: str) -> dict[str, object]:
    """The non-streamed /v1/completions body, vLLM 0.32's fields in its order."""
    choice = {
        "index": 0,
        "text": "".join(reply.pieces),
        "logprobs": None,
        "finish_reason": reply.finish_reason,
        "stop_reason": None,
        "token_ids": None,
        "prompt_logprobs": None,
        "prompt_token_ids": None,
        "routed_experts": None,
    }
    body = _envelope(reply, request_id, "text_completion", choice, fingerprint)
    return {**body, "kv_transfer_params": None, "ec_transfer_params": None, "metrics": None}


def chat_response(reply: SimReply, request_id: str, fingerprint: str) -> dict[str, object]:
    """The non-streamed /v1/chat/completions body; a tool call replaces the content."""
    message: dict[str, object] = {
        "role": "assistant",
        "content": "".join(reply.pieces),
        "refusal": None,
        "annotations": None,
        "audio": None,
        "function_call": None,
    }
    if reply.tool_call is not None:  # vLLM drops an empty tool_calls list from the message
        call = reply.tool_call
        function = {"name": call.name, "arguments": call.arguments}
        message["content"] = None
        message["tool_calls"] = [{"id": call.call_id, "type": "function", "function": function}]
    message["reasoning"] = None
    choice = {
        "index": 0,
        "message": message,
        "logprobs": None,
        "finish_reason": reply.finish_reason,
        "stop_reason": None,
        "token_ids": None,
        "routed_experts": None,
    }
    body = _envelope(reply, request_id, "chat.completion", choice, fingerprint)
    tail = ("prompt_logprobs", "prompt_token_ids", "prompt_text", "kv_transfer_params")
    return {**body, **dict.fromkeys((*tail, "ec_transfer_params", "metrics"))}


def _envelope(
    reply: SimReply, request_id: str, kind: str, choice: dict[str, object], fingerprint: str
) -> dict[str, object]:
    completion = len(reply.pieces)
    usage = {
        "prompt_tokens": reply.prompt_tokens,
        "total_tokens": reply.prompt_tokens + completion,
        "completion_tokens": completion,
        "prompt_tokens_details": None,
        "completion_tokens_details": None,
    }
    return {
        "id": request_id,
        "object": kind,
        "created": int(time.time()),
        "model": reply.model,
        "choices": [choice],
        "service_tier": None,
        "system_fingerprint": fingerprint,
        "usage": usage,
    }
