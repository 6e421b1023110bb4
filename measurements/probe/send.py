"""One streamed request: the JSON body, the send, and its timing record (RequestRecord), by
STYLE.md's probe invariants. A request-level failure is returned as data, never raised."""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from measurements.probe.config import ProbeConfig
from measurements.probe.prompts import PromptSpec
from measurements.probe.redaction import redact_text
from measurements.probe.sse import (
    SseDecoder,
    SseEvent,
    SseEventTooLargeError,
    StreamTally,
    parse_event,
)
from measurements.safe_text import escape_hidden, has_hidden

Clock = Callable[[], float]
DRAIN_AFTER_DONE_S = 0.5  # read past [DONE] this long at most, so the connection is reused
ERROR_BODY_BYTES = 64 * 1024  # of an error answer, read at most this much (a body may be endless)
ERROR_TEXT_CHARS = 300  # of which this much is kept in the record
REARM_SHARE = 0.1  # a stage's deadline moves once this share of its limit has passed


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request as the probe saw it, in clock seconds.

    end_s is the last token chunk on success (the trailing usage chunk and [DONE] never move
    it), the moment the failure was seen on failure; incomplete requests were cut by the probe
    at the end of a timed level and are neither completed nor failed."""

    send_s: float
    first_token_s: float | None
    end_s: float | None
    chunk_times_s: tuple[float, ...]
    chunk_tokens: tuple[int, ...]
    input_tokens: int | None
    output_tokens: int | None
    http_status: int | None
    error: str | None
    scheduled_s: float | None = None
    conversation: int | None = None
    turn: int | None = None
    tokens_exact: bool = False  # chunk_tokens agree with the server's usage
    incomplete: bool = False
    requested_input_tokens: int | None = None
    requested_output_tokens: int | None = None
    usage_note: str | None = None  # the server's usage disagreed with its stream: how
    error_escaped: bool = False  # the error text held control or bidi characters, now escaped

    @property
    def ok(self) -> bool:
        """True when the request completed without error."""
        return self.error is None and not self.incomplete


def request_body(config: ProbeConfig, prompt: PromptSpec) -> dict[str, object]:
    """The JSON body: streaming with usage, fixed max_tokens, ignore_eos (only keys that vLLM
    and trtllm-serve both accept: trtllm-serve rejects unknown keys)."""
    options: dict[str, bool] = {"include_usage": True}
    if config.continuous_usage:
        options["continuous_usage_stats"] = True
    body: dict[str, object] = {
        "model": config.model,
        "max_tokens": prompt.max_tokens,
        "stream": True,
        "stream_options": options,
    }
    if config.ignore_eos:
        body["ignore_eos"] = True
    if config.endpoint == "chat":
        body["messages"] = [{"role": "user", "content": prompt.prompt}]
    else:
        body["prompt"] = prompt.prompt
    return body


class Attempt:
    """The mutable state of one request while it runs; `record()` freezes it."""

    __slots__ = ("failed_s", "message", "prompt", "scheduled_s", "send_s", "status", "tally")

    def __init__(self, prompt: PromptSpec, scheduled_s: float | None = None) -> None:
        self.prompt = prompt
        self.scheduled_s = scheduled_s
        self.send_s = 0.0
        self.status: int | None = None
        self.message: str | None = None
        self.failed_s: float | None = None
        self.tally = StreamTally(prompt.max_tokens, prompt.input_tokens)

    def fail(self, at_s: float, message: str) -> None:
        """Record the first failure (a later one, e.g. while closing, is a consequence)."""
        if self.message is None and not self.tally.done:
            self.message, self.failed_s = message, at_s

    def record(self, *, incomplete: bool = False) -> RequestRecord:
        """The frozen record; a stream without tokens or without its end is a failure."""
        line = self.tally.timeline()
        error = self.message or self.tally.error
        escaped = error is not None and has_hidden(error)
        if error is not None:  # a server may echo the key back, or send NUL, ESC or U+202E
            error = escape_hidden(redact_text(error))
        if error is None and not incomplete:
            if not line.chunk_times_s:
                error = "no token chunk in the stream"
            elif not (self.tally.done or self.tally.finish_reason):
                error = "stream ended before [DONE]"
        last = line.chunk_times_s[-1] if line.chunk_times_s else None
        return RequestRecord(
            send_s=self.send_s,
            first_token_s=line.chunk_times_s[0] if line.chunk_times_s else None,
            end_s=self.failed_s if self.failed_s is not None else last,
            chunk_times_s=line.chunk_times_s,
            chunk_tokens=line.chunk_tokens,
            input_tokens=line.input_tokens,
            output_tokens=line.output_tokens,
            http_status=self.status,
            error=error,
            scheduled_s=self.scheduled_s,
            conversation=self.prompt.conversation,
            turn=self.prompt.turn,
            tokens_exact=line.tokens_exact,
            incomplete=incomplete and error is None,
            requested_input_tokens=self.prompt.input_tokens,
            requested_output_tokens=self.prompt.max_tokens,
            usage_note=line.usage_note,
            error_escaped=escaped,
        )


async def send_request(
    client: httpx.AsyncClient, config: ProbeConfig, prompt: PromptSpec, clock: Clock
) -> RequestRecord:
    """Send one streaming request and time it; request-level failures come back as data."""
    attempt = Attempt(prompt)
    await send_into(client, config, attempt, clock)
    return attempt.record()


async def send_into(
    client: httpx.AsyncClient, config: ProbeConfig, attempt: Attempt, clock: Clock
) -> None:
    """Send `attempt` and fill it in; the caller keeps it, so a cut request keeps its chunks."""
    body, headers = request_body(config, attempt.prompt), _auth_headers(config)
    attempt.send_s = clock()
    timer = _Timer(config)
    try:
        async with asyncio.timeout(None) as deadline:
            timer.start(deadline, "first_byte")
            async with client.stream("POST", config.url, json=body, headers=headers) as response:
                attempt.status = response.status_code
                timer.stage("chunk")
                if response.status_code != 200:
                    text = await _error_body(response) if config.error_bodies else ""
                    attempt.fail(clock(), f"HTTP {response.status_code}: {text}".rstrip(": "))
                    return
                await _read_stream(response, attempt, clock, timer)
    except TimeoutError:
        attempt.fail(clock(), timer.message(len(attempt.tally.times_s)))
    except SseEventTooLargeError as exc:
        attempt.fail(clock(), f"SseEventTooLargeError: {exc}")
    except Exception as exc:  # noqa: BLE001  (the per-request boundary: a failure is data)
        # httpx errors may quote the URL (and a key in it): stored samples keep the masked text.
        attempt.fail(clock(), redact_text(f"{type(exc).__name__}: {exc}").rstrip(": "))


class _Timer:
    """One request's timer: the earlier of its whole-request limit and the limit of the stage
    it waits in (status line and headers; the next read), so the message names what stalled.

    Only a token chunk restarts the between-chunks wait: a server that streams events without
    tokens (`data: {"choices":[]}` forever) stalls its request as a silent one does.
    Re-armed lazily: within a stage, a read moves the deadline only once a tenth of the stage's
    limit has passed since it was last set, so a stall fires after 90-100% of the limit of
    silence and a busy stream pays a clock read per chunk, not a timer reschedule."""

    def __init__(self, config: ProbeConfig) -> None:
        self.config = config
        self.limits_s = {
            "first_byte": config.first_byte_timeout_s,
            "chunk": config.chunk_timeout_s,
            "drain": DRAIN_AFTER_DONE_S,
        }
        self.binding = "total"
        self._deadline: asyncio.Timeout | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._total_end = 0.0
        self._stage = ""
        self._armed_at = -math.inf
        self.tokenless_events = 0  # events since the last token (or the headers) with none

    def start(self, deadline: asyncio.Timeout, stage: str) -> None:
        """Arm the timer at the send: the whole-request limit runs from now."""
        self._deadline, self._loop = deadline, asyncio.get_running_loop()
        self._total_end = self._loop.time() + self.config.request_timeout_s
        self.stage(stage)

    def stage(self, stage: str) -> None:
        """Wait in `stage` from now: its own limit, or what is left of the whole request's."""
        if self._deadline is None or self._loop is None:
            raise RuntimeError("start() arms the timer before any stage")
        now, limit_s = self._loop.time(), self.limits_s[stage]
        if stage == self._stage and now - self._armed_at < REARM_SHARE * limit_s:
            return
        self._stage, self._armed_at = stage, now
        self.binding = stage if now + limit_s < self._total_end else "total"
        self._deadline.reschedule(min(now + limit_s, self._total_end))

    def token(self) -> None:
        """A token chunk arrived: the between-chunks wait starts again."""
        self.tokenless_events = 0
        self.stage("chunk")

    def message(self, chunks: int) -> str:
        """What timed out, with the limit that did it (and the flag that sets it)."""
        cfg = self.config
        if self.binding == "first_byte":
            return (
                f"Timeout: no response within {cfg.first_byte_timeout_s:g} s of sending "
                "(first-byte timeout)"
            )
        if self.binding == "chunk" and self.tokenless_events:
            return (
                f"Timeout: no token for {cfg.chunk_timeout_s:g} s after {chunks} token chunk(s), "
                f"only {self.tokenless_events} event(s) without one (between-chunks timeout)"
            )
        if self.binding == "chunk":
            return (
                f"Timeout: the stream went silent for {cfg.chunk_timeout_s:g} s after {chunks} "
                "token chunk(s) (between-chunks timeout)"
            )
        return f"Timeout: no full answer within {cfg.request_timeout_s:g} s"


async def _error_body(response: httpx.Response) -> str:
    """The start of an error answer (at most ERROR_BODY_BYTES read), secrets masked, clipped."""
    pieces: list[bytes] = []
    size = 0
    async for piece in response.aiter_bytes():
        pieces.append(piece)
        size += len(piece)
        if size >= ERROR_BODY_BYTES:
            break
    text = b"".join(pieces)[:ERROR_BODY_BYTES].decode("utf-8", "replace")
    text = redact_text(" ".join(text.split()))  # masked whole, before clipping cuts a key
    return text if len(text) <= ERROR_TEXT_CHARS else text[: ERROR_TEXT_CHARS - 3] + "..."


async def _read_stream(
    response: httpx.Response, attempt: Attempt, clock: Clock, timer: _Timer
) -> None:
    # A drain after [DONE] that takes too long times out like any stage: the send's handler
    # then records nothing, since the answer itself was complete (Attempt.fail).
    decoder, tally = SseDecoder(), attempt.tally
    async for piece in response.aiter_bytes():
        if tally.done:
            continue  # draining what follows [DONE]: never parsed, never timed
        events, chunks_before = decoder.feed_bytes(piece), len(tally.times_s)
        _tally(tally, events, clock())  # one read's events arrived together
        if tally.error is not None:
            return
        if tally.done:
            timer.stage("drain")
        elif len(tally.times_s) > chunks_before:
            timer.token()
        else:  # keep-alive comments and events without a token are silence: no restart
            timer.tokenless_events += len(events)
    if not tally.done:  # the body ended without a blank line after its last event
        _tally(tally, decoder.close(), clock())


def _tally(tally: StreamTally, events: list[SseEvent], at_s: float) -> None:
    for event in events:
        if tally.add(parse_event(event), at_s):
            return


def _auth_headers(config: ProbeConfig) -> dict[str, str]:
    key = os.environ.get(config.api_key_env) if config.api_key_env else None
    return {"Authorization": f"Bearer {key}"} if key else {}
