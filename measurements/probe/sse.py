"""Server-sent events from OpenAI-compatible streaming endpoints (vLLM, trtllm-serve): an
incremental decoder, one parsed chunk per event, and the token timeline of one response.

Pure and clock-free: the caller stamps each network read with its own clock."""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass

_EOL = re.compile(r"\r\n|\r|\n")
_ERROR_TEXT_LIMIT = 300


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event: its data lines joined by newlines, and its `event:` name if any."""

    data: str
    event: str | None = None


class SseDecoder:
    """Incremental SSE decoder (WHATWG rules: CR, LF or CRLF lines; blank line dispatches)."""

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._skip_lf = False  # a CR ended the last read; a LF starting the next one pairs with it
        self._data: list[str] = []
        self._event: str | None = None

    def feed_bytes(self, piece: bytes) -> list[SseEvent]:
        """Decode one network read (UTF-8, split characters held back) and feed it."""
        return self.feed(self._utf8.decode(piece))

    def feed(self, text: str) -> list[SseEvent]:
        """Feed decoded text; return the events completed by it."""
        if not text:
            return []
        if self._skip_lf and text.startswith("\n"):
            text = text[1:]
        self._skip_lf = text.endswith("\r")
        lines = _EOL.split(self._buffer + text)
        self._buffer = lines.pop()
        events: list[SseEvent] = []
        for line in lines:
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def close(self) -> list[SseEvent]:
        """End of stream: dispatch an event the server did not terminate with a blank line."""
        events = self.feed(self._utf8.decode(b"", final=True))
        if self._buffer:
            self._line(self._buffer)
            self._buffer = ""
        last = self._dispatch()
        return [*events, last] if last is not None else events

    def _line(self, line: str) -> SseEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None  # comment / keep-alive
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        return None

    def _dispatch(self) -> SseEvent | None:
        if not self._data:
            self._event = None
            return None
        event = SseEvent("\n".join(self._data), self._event)
        self._data, self._event = [], None
        return event


@dataclass(frozen=True, slots=True)
class StreamChunk:
    """What one event says, reduced to what timing needs (first choice only; n is always 1)."""

    done: bool = False
    error: str | None = None
    has_choices: bool = False
    text: str = ""  # text, content, reasoning or tool-call arguments carried by the chunk
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


def parse_event(event: SseEvent) -> StreamChunk:
    """Parse one event of a /v1/completions or /v1/chat/completions stream."""
    data = event.data.strip()
    if data == "[DONE]":
        return StreamChunk(done=True)
    if event.event == "error":
        return StreamChunk(error=_clip(data))
    obj = _json_object(data)
    if isinstance(obj, str):
        return StreamChunk(error=obj)
    error = _error_text(obj)
    if error is not None:
        return StreamChunk(error=error)
    prompt_tokens, completion_tokens = _usage(obj.get("usage"))
    choices = obj.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    if not isinstance(first, dict):
        return StreamChunk(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    finish = first.get("finish_reason")
    return StreamChunk(
        has_choices=True,
        text=_choice_text(first),
        finish_reason=finish if isinstance(finish, str) else None,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
    )


def _json_object(data: str) -> dict[str, object] | str:
    """The decoded object, or the complaint about it."""
    try:
        obj = json.loads(data)
    except json.JSONDecodeError:
        return f"chunk is not JSON: {_clip(data)}"
    return obj if isinstance(obj, dict) else f"chunk is not a JSON object: {_clip(data)}"


def _error_text(obj: dict[str, object]) -> str | None:
    # vLLM >= 0.9 sends {"error": {...}}; older vLLM and trtllm-serve {"object": "error", ...}.
    inner = obj.get("error")
    if inner is None and obj.get("object") != "error":
        return None
    body = inner if isinstance(inner, dict) else obj
    message = body.get("message") if isinstance(body, dict) else None
    return _clip(str(message if message is not None else inner))


def _usage(usage: object) -> tuple[int | None, int | None]:
    if not isinstance(usage, dict):
        return None, None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return (
        prompt if isinstance(prompt, int) else None,
        completion if isinstance(completion, int) else None,
    )


def _choice_text(choice: dict[str, object]) -> str:
    text = choice.get("text")
    if isinstance(text, str):
        return text
    delta = choice.get("delta")
    if not isinstance(delta, dict):
        return ""
    parts = [delta.get(key) for key in ("content", "reasoning_content", "reasoning")]
    calls = delta.get("tool_calls")
    if isinstance(calls, list):
        parts += [json.dumps(call) for call in calls]
    return "".join(part for part in parts if isinstance(part, str))


def _clip(text: str) -> str:
    return text if len(text) <= _ERROR_TEXT_LIMIT else text[: _ERROR_TEXT_LIMIT - 3] + "..."


@dataclass(frozen=True, slots=True)
class Timeline:
    """Token-bearing chunks of one response and the server's token counts."""

    chunk_times_s: tuple[float, ...]
    chunk_tokens: tuple[int, ...]
    input_tokens: int | None
    output_tokens: int | None  # server usage when given, else the tokens counted in chunks
    tokens_exact: bool  # chunk_tokens agree with the server's count (else 1 per chunk, assumed)


class StreamTally:
    """Builds one response's timeline by STYLE.md's probe invariants.

    A chunk bears tokens when continuous usage says completion_tokens grew (by that many), or,
    without it, when it carries text (1 token assumed). The first token chunk is TTFT and the
    last one is the end: role-only chunks, empty finish chunks and the trailing usage chunk move
    neither, except that an empty finish chunk counts when the final usage shows it carried the
    last token (vLLM's completions stream does this when the last token decodes to nothing)."""

    def __init__(self) -> None:
        self.times_s: list[float] = []
        self.tokens: list[int] = []
        self.prompt_tokens: int | None = None
        self.completion_tokens: int | None = None
        self.error: str | None = None
        self.done = False
        self.finish_reason: str | None = None
        self._continuous = False
        self._usage_seen = 0
        self._empty_finish_s: float | None = None

    def add(self, chunk: StreamChunk, at_s: float) -> bool:
        """Take one chunk received at `at_s`; True once the stream is over ([DONE] or error)."""
        if chunk.error is not None:
            self.error = f"stream error event: {chunk.error}"
            return True
        if chunk.done:
            self.done = True
            return True
        if chunk.has_choices:
            self._choice(chunk, at_s)
        if chunk.prompt_tokens is not None:
            self.prompt_tokens = chunk.prompt_tokens
        if chunk.completion_tokens is not None:
            self.completion_tokens = chunk.completion_tokens
        return False

    def _choice(self, chunk: StreamChunk, at_s: float) -> None:
        if chunk.finish_reason is not None:
            self.finish_reason = chunk.finish_reason
        if chunk.completion_tokens is not None:  # continuous usage: exact tokens per chunk
            self._continuous = True
            new = chunk.completion_tokens - self._usage_seen
            self._usage_seen = chunk.completion_tokens
            if new > 0:
                self.times_s.append(at_s)
                self.tokens.append(new)
        elif chunk.text:
            self.times_s.append(at_s)
            self.tokens.append(1)
        elif chunk.finish_reason is not None:
            self._empty_finish_s = at_s

    def timeline(self) -> Timeline:
        """The token timeline, reconciled with the server's final usage."""
        times, tokens = list(self.times_s), list(self.tokens)
        usage = self.completion_tokens
        finish_s = self._empty_finish_s
        if not self._continuous and finish_s is not None and usage == sum(tokens) + 1:
            times.append(finish_s)
            tokens.append(1)
        counted = sum(tokens)
        return Timeline(
            chunk_times_s=tuple(times),
            chunk_tokens=tuple(tokens),
            input_tokens=self.prompt_tokens,
            output_tokens=usage if usage is not None else counted,
            tokens_exact=usage is not None and usage == counted,
        )
