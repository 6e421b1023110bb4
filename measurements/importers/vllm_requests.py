"""Per-request lists of a vLLM --save-result file (seconds, index-aligned) -> RequestSamples.

Failed requests stay as samples with `error` set; their 0-second placeholder times are dropped."""

from __future__ import annotations

from collections.abc import Mapping

from measurements.importers.common import Reader, checked_number
from measurements.importers.limits import MAX_SAMPLES, over
from measurements.run_file import RequestSample

# "e2els" is TensorRT-LLM's name (its fork of benchmark_serving.py) for vLLM's "latencies".
_LISTS = (
    "ttfts",
    "latencies",
    "e2els",
    "itls",
    "input_lens",
    "output_lens",
    "errors",
    "start_times",
)


def request_samples(
    reader: Reader, sent: int | None, completed: int | None
) -> tuple[RequestSample, ...]:
    """One RequestSample per entry of the per-request lists (none when the file has no lists)."""
    lists = _lists(reader)
    if not lists:
        return ()
    size = len(next(iter(lists.values())))
    key = next(iter(lists))
    over(size, MAX_SAMPLES, "per-request entries", file=reader.file, field=reader.field(key))
    if sent is not None and size > sent:
        raise reader.fail(key, f"has {size} entries but num_prompts is {sent}")
    starts = [
        checked_number(reader, f"start_times[{i}]", value, signed=True)
        for i, value in enumerate(lists.get("start_times", ()))
    ]
    first = min(starts, default=0.0)
    samples = tuple(
        _sample(reader, lists, i, starts[i] - first if starts else None) for i in range(size)
    )
    ok = sum(sample.ok for sample in samples)
    if "errors" in lists and completed is not None and ok != completed:
        message = f"is {completed} but the errors list has {ok} successful requests"
        raise reader.fail("completed", message, completed)
    return samples


def _lists(reader: Reader) -> dict[str, list[object]]:
    lists: dict[str, list[object]] = {}
    for key in _LISTS:
        value = reader.obj.get(key)
        if value is None:
            continue
        if not isinstance(value, list):
            raise reader.fail(key, "expected a list with one entry per request", value)
        lists[key] = value
    if len({len(value) for value in lists.values()}) > 1:
        sizes = ", ".join(f"{key} {len(value)}" for key, value in lists.items())
        raise reader.fail(next(iter(lists)), f"per-request lists differ in length: {sizes}")
    return lists


def _sample(
    reader: Reader, lists: Mapping[str, list[object]], i: int, send_s: float | None
) -> RequestSample:
    error = _error(reader, lists, i)
    ttft_ms = _ms(reader, lists, "ttfts", i)
    e2e_key = "latencies" if "latencies" in lists else "e2els"
    e2e_ms = _ms(reader, lists, e2e_key, i)
    if error is None and ttft_ms is not None and e2e_ms is not None and e2e_ms < ttft_ms:
        message = f"is shorter than ttfts[{i}] ({ttft_ms / 1000:g} s)"
        raise reader.fail(f"{e2e_key}[{i}]", message, e2e_ms / 1000)
    gaps = _gaps(reader, lists, i)
    return RequestSample(
        send_s=send_s,
        # vLLM writes 0 for a failed request's times: placeholders, not measurements.
        ttft_ms=ttft_ms if error is None else None,
        e2e_ms=e2e_ms if error is None else None,
        input_tokens=_tokens(reader, lists, "input_lens", i),
        output_tokens=_tokens(reader, lists, "output_lens", i),
        chunk_gaps_ms=gaps if error is None else (),
        error=error,
    )


def _error(reader: Reader, lists: Mapping[str, list[object]], i: int) -> str | None:
    if "errors" not in lists:
        return None
    value = lists["errors"][i]
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise reader.fail(f"errors[{i}]", "expected a string", value)
    return value


def _ms(reader: Reader, lists: Mapping[str, list[object]], key: str, i: int) -> float | None:
    if key not in lists:
        return None
    return checked_number(reader, f"{key}[{i}]", lists[key][i]) * 1000


def _tokens(reader: Reader, lists: Mapping[str, list[object]], key: str, i: int) -> int | None:
    if key not in lists:
        return None
    value = checked_number(reader, f"{key}[{i}]", lists[key][i])
    if not value.is_integer():
        raise reader.fail(f"{key}[{i}]", "expected a whole number", lists[key][i])
    return int(value)


def _gaps(reader: Reader, lists: Mapping[str, list[object]], i: int) -> tuple[float, ...]:
    if "itls" not in lists:
        return ()
    gaps = lists["itls"][i]
    if not isinstance(gaps, list):
        raise reader.fail(f"itls[{i}]", "expected a list of chunk gaps in seconds", gaps)
    return tuple(checked_number(reader, f"itls[{i}][{j}]", g) * 1000 for j, g in enumerate(gaps))
