"""SSE decoding and token timelines, on bodies recorded from vLLM and written from trtllm-serve's
serializer; every expected count is the server's own usage line in the body."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from measurements.probe.sse import SseDecoder, SseEvent, StreamTally, parse_event

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
