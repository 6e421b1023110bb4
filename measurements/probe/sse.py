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
# One event's bound: a vLLM or trtllm-serve chunk is well under 1 KB, a long tool-call delta a
# few KB; 4 Mi characters leaves room for any real one and keeps a hostile server's endless
# event from taking the probe's memory (or, decoded in one go, its event loop).
MAX_EVENT_CHARS = 4 * 1024 * 1024
# A server's prompt_tokens above this multiple of the prompt's target length (+1024) is a lie:
# word-count estimates are off by 2x at worst, chat templates add a few hundred tokens.
PROMPT_TOKENS_SLACK = 16


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event: its data lines joined by newlines, and its `event:` name if any."""

    data: str
    event: str | None = None


class SseEventTooLargeError(ValueError):
    """One event (or one line) grew past the decoder's bound: the stream is refused."""


class SseDecoder:
    """Incremental SSE decoder (WHATWG rules: CR, LF or CRLF lines; blank line dispatches).

    Linear in the bytes received: a read is scanned once for line ends, and a line still
    open is kept as pieces, joined once when it ends. One event (its data lines together, or
    one unterminated line) may hold at most `max_event_chars` characters; past that the
    decoder raises SseEventTooLargeError rather than hold an endless event in memory."""

    def __init__(self, max_event_chars: int = MAX_EVENT_CHARS) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._max = max_event_chars
        self._pending: list[str] = []  # pieces of the line still open
        self._pending_chars = 0
        self._skip_lf = False  # a CR ended the last read; a LF starting the next one pairs with it
        self._data: list[str] = []
        self._data_chars = 0
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
        lines = _EOL.split(text)  # this read only: what came before is never scanned again
        tail = lines.pop()  # the line still open after the last line end ("" if none)
        if lines and self._pending:  # the open line ends here: joined once
            lines[0] = "".join([*self._pending, lines[0]])
            self._pending, self._pending_chars = [], 0
        events: list[SseEvent] = []
        for line in lines:
            event = self._line(line)
            if event is not None:
                events.append(event)
        if tail:
            self._hold(tail)
        return events

    def _hold(self, text: str) -> None:
        self._pending.append(text)
        self._pending_chars += len(text)
        if self._pending_chars + self._data_chars > self._max:
            raise self._too_large()

    def _too_large(self) -> SseEventTooLargeError:
        return SseEventTooLargeError(
            f"one event is over {self._max:,} characters (the probe's bound on an event): "
            "refused rather than held in memory"
        )

    def close(self) -> list[SseEvent]:
        """End of stream: dispatch an event the server did not terminate with a blank line."""
        events = self.feed(self._utf8.decode(b"", final=True))
        if self._pending:
            line = "".join(self._pending)
            self._pending, self._pending_chars = [], 0
            self._line(line)
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
            self._data_chars += len(value) + 1
            if self._data_chars > self._max:
                raise self._too_large()
        elif name == "event":
            self._event = value
        return None

    def _dispatch(self) -> SseEvent | None:
        if not self._data:
            self._event = None
            return None
        event = SseEvent("\n".join(self._data), self._event)
        self._data, self._data_chars, self._event = [], 0, None
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
    except (ValueError, RecursionError):  # not JSON, a 5,000-digit number, 10^5 brackets deep
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


def _bounded(number: int) -> str:
    """A number a server sent, for a message: at most 24 digits shown."""
    if abs(number) < 10**24:
        return str(number)
    return f"{'-' if number < 0 else ''}(a {int(number.bit_length() * 0.30103) + 1}-digit number)"


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
    usage_note: str | None = None  # the server's usage disagreed with the stream: how


class StreamTally:
    """Builds one response's timeline by STYLE.md's probe invariants.

    A chunk bears tokens when continuous usage says completion_tokens grew (by that many), or,
    without it, when it carries text (1 token assumed). The first token chunk is TTFT and the
    last one is the end: role-only chunks, empty finish chunks and the trailing usage chunk move
    neither, except that an empty finish chunk counts when the final usage shows it carried the
    last token (vLLM's completions stream does this when the last token decodes to nothing)."""

    def __init__(self, max_tokens: int | None = None, prompt_tokens: int | None = None) -> None:
        self.max_tokens = max_tokens  # asked for: a usage above it is impossible
        self.sent_prompt_tokens = prompt_tokens  # about what the prompt holds (a target)
        self.times_s: list[float] = []
        self.tokens: list[int] = []
        self.prompt_tokens: int | None = None
        self.completion_tokens: int | None = None
        self.error: str | None = None
        self.done = False
        self.finish_reason: str | None = None
        self.usage_mismatch: str | None = None
        self._continuous = False
        self._usage_seen = 0
        self._streamed = 0  # tokens the chunks carried so far
        self._empty_finish_s: float | None = None

    def add(self, chunk: StreamChunk, at_s: float) -> bool:
        """Take one chunk received at `at_s`; True once the stream is over ([DONE] or error)."""
        if chunk.error is not None:
            self.error = f"stream error event: {chunk.error}"
            return True
        if chunk.done:
            self.done = True
            return True
        if chunk.completion_tokens is not None or chunk.prompt_tokens is not None:
            self.error = self._impossible(chunk)
            if self.error is not None:
                return True
        if chunk.has_choices:
            self._choice(chunk, at_s)
            if self.max_tokens is not None and self._streamed > self.max_tokens:
                self.error = (
                    f"impossible stream: more than max_tokens {self.max_tokens} token chunks"
                )
                return True
        if chunk.prompt_tokens is not None:
            self.prompt_tokens = chunk.prompt_tokens
        if chunk.completion_tokens is not None:
            self.completion_tokens = chunk.completion_tokens
        return False

    def _impossible(self, chunk: StreamChunk) -> str | None:
        """Why the usage this chunk states cannot be true (the request's error), or None."""
        done = chunk.completion_tokens
        if done is not None and (
            done < 0 or (self.max_tokens is not None and done > self.max_tokens)
        ):
            return (
                f"impossible server usage: completion_tokens {_bounded(done)} for max_tokens "
                f"{self.max_tokens} ({sum(self.tokens)} streamed)"
            )
        prompt, sent = chunk.prompt_tokens, self.sent_prompt_tokens
        if prompt is not None and (
            prompt < 0 or (sent is not None and prompt > PROMPT_TOKENS_SLACK * sent + 1024)
        ):
            return (
                f"impossible server usage: prompt_tokens {_bounded(prompt)} for a prompt of "
                f"about {sent} tokens"
            )
        return None

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
                self._streamed += new
        elif chunk.text:
            self.times_s.append(at_s)
            self.tokens.append(1)
            self._streamed += 1
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
        if usage is not None and (usage < counted or (self._continuous and usage > counted)):
            # Each token chunk carries at least one token (continuous usage: exactly its growth),
            # so the server's count disagrees with its own stream: flagged, and never below what
            # was streamed.
            self.usage_mismatch = f"server usage says {usage} output tokens, streamed {counted}"
            usage = max(usage, counted)
        return Timeline(
            chunk_times_s=tuple(times),
            chunk_tokens=tuple(tokens),
            input_tokens=self.prompt_tokens,
            output_tokens=usage if usage is not None else counted,
            tokens_exact=usage == counted and self.usage_mismatch is None,
            usage_note=self.usage_mismatch,
        )
