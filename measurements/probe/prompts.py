"""What the probe sends: prompts of exact (or calibrated) token lengths drawn from the workload's
length distributions (or a lengths file), agent-loop sessions, a shared prefix, and the local
tokenizer that makes the lengths exact."""

from __future__ import annotations

import csv
import importlib
import importlib.util
import json
import math
import os
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from errors import InputError
from measurements.probe.workloads import Distribution, WorkloadConfig

# Common English words that are one token (with their leading space) in the Llama 3, Qwen and
# GPT-4 vocabularies; a tokenizer that splits some of them is measured, not assumed.
_WORD_TEXT = """
    the of and to in is was for on as with by at from that this which are be have not but all
    can one will more about their there time would so up out if some when what them other
    than into its only new also like two any may use first way these many then people she made
    over did very after most where well our just how her been much see make could good long
    world year day back work life man part place case group number fact hand high point small
    large water state city home house road light music power money story game book food field
    market river table paper stone green blue red black white open close start end early late
    north south east west cold warm fast slow deep left right model data plan test line rate
    cost price team plant chain train metal glass cloth wood sound voice smile dream heart"""
WORDS = tuple(_WORD_TEXT.split())
CALIBRATION_SAMPLES = 4
_MAX_FIXES = 24


@dataclass(frozen=True, slots=True)
class PromptSpec:
    """One request to send: the prompt text, its expected input tokens and max_tokens."""

    prompt: str
    input_tokens: int
    max_tokens: int
    conversation: int | None = None
    turn: int | None = None


class Tokenizer(Protocol):
    """The two calls the probe needs from a tokenizer (special tokens included on encode)."""

    def encode(self, text: str) -> list[int]:
        """Token ids of `text` as the server would count them."""
        ...

    def decode(self, ids: list[int]) -> str:
        """Text of token ids."""
        ...


class HfTokenizer:
    """A `tokenizers` tokenizer.json behind the Tokenizer protocol."""

    def __init__(self, path: Path) -> None:
        text = path.read_text(encoding="utf-8")
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"not a tokenizer.json: {exc}", file=str(path)) from exc
        self.path = path
        # `tokenizers` is optional: imported by name so capplan runs without it.
        self._tokenizer = importlib.import_module("tokenizers").Tokenizer.from_str(text)

    def encode(self, text: str) -> list[int]:
        """Token ids with the tokenizer's special tokens (BOS), as vLLM counts a prompt."""
        return list(self._tokenizer.encode(text, add_special_tokens=True).ids)

    def decode(self, ids: list[int]) -> str:
        """Text of token ids, special tokens skipped."""
        return str(self._tokenizer.decode(ids, skip_special_tokens=True))


def load_tokenizer(model_dir_or_name: str) -> Tokenizer | None:
    """The tokenizer.json of a model directory or of the local Hugging Face cache; never
    downloads. None when there is none or the `tokenizers` package is not installed."""
    if importlib.util.find_spec("tokenizers") is None:
        return None
    for path in _tokenizer_candidates(model_dir_or_name):
        if path.is_file():
            return HfTokenizer(path)
    return None


def _tokenizer_candidates(name: str) -> list[Path]:
    given = Path(name).expanduser()
    if given.name == "tokenizer.json":
        return [given]
    if given.is_dir():
        return [given / "tokenizer.json"]
    if name.count("/") != 1:
        return []
    hub = os.environ.get("HF_HUB_CACHE")
    root = Path(hub) if hub else Path(os.environ.get("HF_HOME", "~/.cache/huggingface")) / "hub"
    snapshots = root.expanduser() / f"models--{name.replace('/', '--')}" / "snapshots"
    return sorted(snapshots.glob("*/tokenizer.json"), key=lambda p: p.stat().st_mtime)[::-1]


def read_lengths_file(path: Path) -> tuple[tuple[int, int], ...]:
    """Rows of (input_tokens, output_tokens) from a CSV; a header row is allowed."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
    except OSError as exc:
        raise InputError(f"cannot read lengths file: {exc}", file=str(path)) from exc
    if rows and rows[0] and not rows[0][0].strip().isdigit():
        rows = rows[1:]
    pairs = tuple(_length_row(path, number, row) for number, row in enumerate(rows, 2))
    if not pairs:
        raise InputError("no input_tokens,output_tokens rows", file=str(path))
    return pairs


def _length_row(path: Path, number: int, row: list[str]) -> tuple[int, int]:
    try:
        isl, osl = (int(cell) for cell in row)
    except ValueError as exc:
        raise InputError(
            "expected two whole numbers: input_tokens,output_tokens",
            file=str(path),
            field=f"line {number}",
            value=",".join(row),
        ) from exc
    if isl < 1 or osl < 1:
        raise InputError("lengths must be at least 1", file=str(path), field=f"line {number}")
    return isl, osl


class PromptFactory:
    """Makes prompts of the configured lengths: exact for a tokenizer when one is given, else
    calibrated from the server's usage.prompt_tokens (see `calibrate`)."""

    def __init__(self, config: WorkloadConfig, tokenizer: Tokenizer | None) -> None:
        self.config = config
        self.tokenizer = tokenizer
        self._table = read_lengths_file(config.lengths_file) if config.lengths_file else None
        self._overhead_tokens = 0  # tokenizer: tokens the server adds (chat template, ...)
        self._tokens_per_word = 1.0  # no tokenizer: estimated from the server's counts
        self._observations: list[float] = []
        self.misses = 0  # prompts a tokenizer could not make exactly the target length
        self._pending: list[PromptSpec] = []
        self._sessions = 0
        self._unit_words, self._start_words = self._words_of_one_token()
        self._prefix = self._shared_prefix()

    @property
    def calibrated(self) -> bool:
        """True once the server's prompt_tokens have adjusted the lengths."""
        return bool(self._observations)

    def next_prompt(self, rng: np.random.Generator) -> PromptSpec:
        """The next request: a new prompt, or the next turn of the current agent session."""
        if not self._pending:
            self._pending = list(self.conversation(rng))
        return self._pending.pop(0)

    def conversation(self, rng: np.random.Generator) -> tuple[PromptSpec, ...]:
        """One independent prompt, or every turn of one agent session (each extends the last)."""
        isl, osl = self._lengths(rng)
        if self.config.shape == "independent":
            return (PromptSpec(self._text(self._prefix, isl, rng), isl, osl),)
        session, self._sessions = self._sessions, self._sessions + 1
        turns: list[PromptSpec] = []
        text = self._prefix
        for turn in range(self.config.agent_turns):
            target = self.config.turn_input_tokens(turn, osl)
            text = self._text(text, target, rng)
            turns.append(PromptSpec(text, target, osl, session, turn))
        return tuple(turns)

    def calibrate(self, observed_prompt_tokens: int, sent: PromptSpec) -> None:
        """Learn from the server's count of one sent prompt (the first few calls count)."""
        if len(self._observations) >= CALIBRATION_SAMPLES or observed_prompt_tokens < 1:
            return
        if self.tokenizer is not None:
            counted = len(self.tokenizer.encode(sent.prompt))
            self._observations.append(observed_prompt_tokens - counted)
            self._overhead_tokens = round(statistics.median(self._observations))
        else:
            words = max(1, len(sent.prompt.split()))
            self._observations.append(observed_prompt_tokens / words)
            self._tokens_per_word = statistics.median(self._observations)

    def describe(self) -> str:
        """How exact the prompt lengths are, for the run notes."""
        if self.tokenizer is not None:
            text = "prompt lengths exact for the tokenizer"
            if self._overhead_tokens:
                text += f" (server adds {self._overhead_tokens} tokens: corrected)"
            if self.misses:
                text += f"; {self.misses} prompt(s) could not be made exactly the target length"
            return text
        if not self.calibrated:
            return "no tokenizer and no prompt_tokens from the server: prompt lengths estimated"
        return (
            f"no tokenizer: prompt lengths calibrated from the server's prompt_tokens "
            f"({self._tokens_per_word:.3f} tokens per word over {len(self._observations)} requests)"
        )

    def _lengths(self, rng: np.random.Generator) -> tuple[int, int]:
        c = self.config
        row = self._table[int(rng.integers(len(self._table)))] if self._table else None
        isl = _draw(rng, c.isl_distribution, c.isl, c.isl_stddev, row[0] if row else None)
        osl = _draw(rng, c.osl_distribution, c.osl, c.osl_stddev, row[1] if row else None)
        if c.prefix_sharing:
            isl = max(isl, c.shared_prefix_tokens + 1)
        return isl, osl

    def _text(self, head: str, target: int, rng: np.random.Generator) -> str:
        if self.tokenizer is None:
            words = max(1, round(target / self._tokens_per_word) - len(head.split()))
            return _join(head, self._draw_words(rng, words))
        return self._exact_text(self.tokenizer, head, target - self._overhead_tokens, rng)

    def _exact_text(
        self, tokenizer: Tokenizer, head: str, goal: int, rng: np.random.Generator
    ) -> str:
        # Words cost one token each for this tokenizer, so one encode usually confirms the
        # length; the loop fixes the rare merge across words (and tiny vocabularies).
        encode = tokenizer.encode
        words: list[str] = []
        count = len(encode(head))
        for _ in range(_MAX_FIXES):
            if count == goal:
                return _join(head, words)
            if count < goal:
                fresh = not head and not words
                words += self._draw_words(rng, goal - count)
                if fresh:  # the first word has no space before it: it may tokenize differently
                    words[0] = self._start_words[int(rng.integers(len(self._start_words)))]
            elif words:
                del words[-max(1, (count - goal) // 2) :]
            else:
                break
            count = len(encode(_join(head, words)))
        self.misses += 1
        return _join(head, words)

    def _draw_words(self, rng: np.random.Generator, count: int) -> list[str]:
        pool = self._unit_words
        return [pool[i] for i in rng.integers(len(pool), size=max(0, count))]

    def _words_of_one_token(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Words costing one token after a space, and those costing one at the very start."""
        if self.tokenizer is None:
            return WORDS, WORDS
        encode = self.tokenizer.encode
        after, alone = len(encode("x")) + 1, len(encode("")) + 1
        inside = tuple(w for w in WORDS if len(encode("x " + w)) == after)
        first = tuple(w for w in inside if len(encode(w)) == alone)
        # A tiny vocabulary may have none: the fix-up loop then gets as close as it can.
        return inside or WORDS, first or inside or WORDS

    def _shared_prefix(self) -> str:
        if not self.config.prefix_sharing:
            return ""
        own_rng = np.random.default_rng(self.config.seed)  # same prefix for every level
        return self._text("", self.config.shared_prefix_tokens, own_rng)


def _draw(
    rng: np.random.Generator, kind: Distribution, mean: int, stddev: float, from_file: int | None
) -> int:
    if kind == "file" and from_file is not None:
        return from_file
    if kind == "normal" and stddev > 0:
        return max(1, round(rng.normal(mean, stddev)))
    if kind == "lognormal" and stddev > 0:
        sigma2 = math.log1p((stddev / mean) ** 2)  # so that the draws have this mean and stddev
        return max(1, round(rng.lognormal(math.log(mean) - sigma2 / 2, math.sqrt(sigma2))))
    return mean


def _join(head: str, words: list[str]) -> str:
    tail = " ".join(words)
    return f"{head} {tail}" if head and tail else head or tail
