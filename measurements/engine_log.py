"""An engine's own KV-cache report, read from its start-up log: vLLM's "GPU KV cache size: N tokens"
and "Maximum concurrency for M tokens per request: X.XXx" (older: "# GPU blocks: N"), TensorRT-LLM's
"Allocated G GiB for max tokens in paged KV cache (N)" (older: "Using N tokens in paged KV cache",
"primary blocks=N" with "tokens per block=B"). A log is untrusted text: it is read up to a bound
and every number is range-checked; lines that do not match are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from measurements.run_file import RunFile, Startup

LOG_BYTES = 16 * 1024 * 1024  # of a log, read at most this much (the KV lines come at start-up)
MOST_TOKENS = 2**40  # a KV cache of more tokens is not a real report
# vLLM's block size on CUDA unless --block-size says otherwise (V0 logged blocks, not tokens).
VLLM_DEFAULT_BLOCK_TOKENS = 16

_NUMBER = r"(\d[\d,]*)"
_VLLM_TOKENS = re.compile(rf"KV cache size:\s*{_NUMBER}\s*tokens", re.IGNORECASE)
_VLLM_CONCURRENCY = re.compile(
    rf"Maximum concurrency for {_NUMBER} tokens per request:\s*(\d+(?:\.\d+)?)x", re.IGNORECASE
)
_VLLM_BLOCKS = re.compile(rf"# GPU blocks:\s*{_NUMBER}")
_TRT_ALLOCATED = re.compile(rf"for max tokens in paged KV cache \({_NUMBER}\)", re.IGNORECASE)
_TRT_USING = re.compile(rf"Using {_NUMBER} tokens in paged KV cache", re.IGNORECASE)
_TRT_PRIMARY = re.compile(
    rf"tokens per block\s*=\s*{_NUMBER}.*?primary blocks\s*=\s*{_NUMBER}", re.IGNORECASE
)
_BLOCK_SIZE_ARG = re.compile(r"--block[-_]size[= ](\d+)")
# Files of a result folder read as engine logs (results end .json, .jsonl, .yaml or .csv).
LOG_SUFFIXES = (".log", ".txt", ".out", ".err")


@dataclass(frozen=True, slots=True)
class KvLogFacts:
    """The KV-cache figures an engine logged at start-up; None where it said nothing."""

    kv_cache_tokens: int | None
    max_concurrency: float | None
    max_concurrency_at_tokens: int | None
    lines: tuple[str, ...]  # the log lines they were read from, as logged

    @property
    def found(self) -> bool:
        """Whether the log stated any KV-cache figure."""
        return self.kv_cache_tokens is not None or self.max_concurrency is not None


NO_KV_FACTS = KvLogFacts(None, None, None, ())


def kv_facts_from_log(text: str) -> KvLogFacts:
    """The KV-cache figures a start-up log states (the last of each: a restarted engine's)."""
    tokens: tuple[int, str] | None = None
    concurrency: tuple[int, float, str] | None = None
    block_tokens = VLLM_DEFAULT_BLOCK_TOKENS
    for line in text.splitlines():
        block_tokens = _block_size(line, block_tokens)
        found = _tokens_in(line, block_tokens)
        if found is not None:
            tokens = (found, line.strip())
        stated = _concurrency_in(line)
        if stated is not None:
            concurrency = (*stated, line.strip())
    lines = tuple(dict.fromkeys(x[-1] for x in (tokens, concurrency) if x is not None))
    return KvLogFacts(
        kv_cache_tokens=tokens[0] if tokens else None,
        max_concurrency=concurrency[1] if concurrency else None,
        max_concurrency_at_tokens=concurrency[0] if concurrency else None,
        lines=lines,
    )


def kv_facts_from_file(path: Path | None) -> KvLogFacts:
    """The KV-cache figures of a log file (its first LOG_BYTES); none when it is absent."""
    if path is None or not path.is_file():
        return NO_KV_FACTS
    with path.open("rb") as log:
        text = log.read(LOG_BYTES).decode("utf-8", errors="replace")
    return kv_facts_from_log(text)


def _count(text: str) -> int | None:
    """A logged count ('1,234,567'), None when it is not a plausible one."""
    value = int(text.replace(",", ""))
    return value if 0 < value < MOST_TOKENS else None


def _tokens_in(line: str, block_tokens: int) -> int | None:
    """Tokens the cache holds, as one line states them (blocks x their size for block counts)."""
    for pattern in (_VLLM_TOKENS, _TRT_ALLOCATED, _TRT_USING):
        match = pattern.search(line)
        if match:
            return _count(match.group(1))
    primary = _TRT_PRIMARY.search(line)
    if primary:
        per_block, blocks = _count(primary.group(1)), _count(primary.group(2))
        return _count(str(per_block * blocks)) if per_block and blocks else None
    match = _VLLM_BLOCKS.search(line)
    blocks = _count(match.group(1)) if match else None
    return _count(str(blocks * block_tokens)) if blocks else None


def _concurrency_in(line: str) -> tuple[int, float] | None:
    """(tokens per request, requests of that size that fit) from vLLM's concurrency line."""
    match = _VLLM_CONCURRENCY.search(line)
    if not match:
        return None
    at_tokens, times = _count(match.group(1)), float(match.group(2))
    return (at_tokens, times) if at_tokens and 0 < times < MOST_TOKENS else None


def _block_size(line: str, current: int) -> int:
    """The block size a logged launch command sets (vLLM --block-size), else the current one."""
    match = _BLOCK_SIZE_ARG.search(line)
    size = int(match.group(1)) if match else 0
    return size if 0 < size <= 4096 else current


def with_kv_facts(startup: Startup, facts: KvLogFacts) -> Startup:
    """The start-up facts with the engine's KV-cache report added where the log stated one."""
    if not facts.found:
        return startup
    return Startup.model_validate(
        {
            **startup.model_dump(),
            "kv_cache_tokens": facts.kv_cache_tokens,
            "max_concurrency": facts.max_concurrency,
            "max_concurrency_at_tokens": facts.max_concurrency_at_tokens,
        }
    )


def kv_facts_beside(files: Sequence[tuple[str, bytes]]) -> KvLogFacts:
    """The report of the engine log among a result folder's files (named *.log, *.txt, *.out,
    *.err); none when no log states one, or when two state different figures (two servers:
    which run is whose cannot be told)."""
    found = {
        (f.kv_cache_tokens, f.max_concurrency, f.max_concurrency_at_tokens): f
        for name, data in files
        if name.lower().endswith(LOG_SUFFIXES)
        for f in (kv_facts_from_log(data[:LOG_BYTES].decode("utf-8", errors="replace")),)
        if f.found
    }
    return next(iter(found.values())) if len(found) == 1 else NO_KV_FACTS


def with_kv_report(run: RunFile, facts: KvLogFacts) -> RunFile:
    """The run with a log's KV-cache report in its start-up facts, unless it states its own."""
    own = run.startup.kv_cache_tokens is not None or run.startup.max_concurrency is not None
    if own or not facts.found:
        return run
    return run.model_copy(update={"startup": with_kv_facts(run.startup, facts)})
