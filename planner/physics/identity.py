"""One model identity everywhere: two names are the same model for planning when they are the
same canonical model, or when their config.json files describe the same performance-relevant
architecture (layers, widths, heads and KV heads, experts and top-k, attention kind): a
re-release (Llama-3.3-70B of Llama-3.1-70B), a reasoning variant (DeepSeek-R1 of DeepSeek-V3)
or a fine-tune is a twin and shares the other's measurements, labelled so.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from planner.curves.names import canonical_model
from planner.physics import catalog
from planner.physics.models import ModelFacts, bytes_per_weight

Signature = tuple[object, ...]


def signature(facts: ModelFacts) -> Signature:
    """The architecture numbers that decide a model's speed (never its name or its source).

    The checkpoint's precision is left out: every curve keeps the precision it ran at, and the
    planner matches precisions on its own."""
    return (
        facts.layers,
        facts.hidden_size,
        facts.vocab_size,
        facts.tied_embeddings,
        facts.attention,
        facts.embedding_params,
        facts.attention_params,
        facts.dense_params,
        facts.expert_params,
        facts.moe_layers,
        facts.experts,
        facts.top_k,
        facts.kv_elements_per_token,
        facts.window_kv_elements_per_token,
        facts.window_tokens,
        facts.state_elements_per_seq,
        facts.attention_score_width,
    )


def architecture_of(name: str) -> Signature | None:
    """The architecture signature of a model by any spelling; None when no config knows it."""
    return _architecture(canonical_model(name), catalog.generation())


@lru_cache(maxsize=4096)
def _architecture(key: str, generation: int) -> Signature | None:
    del generation  # part of the cache key only: added configs change what a name resolves to
    facts = catalog.model_facts(key)
    return None if facts is None else signature(facts)


def relation(name: str, wanted: str) -> str | None:
    """How a stored model name relates to the wanted model: "same" (the same canonical model),
    "twin" (another name with the same architecture) or None (another model)."""
    mine, theirs = canonical_model(name), canonical_model(wanted)
    if mine == theirs:
        return "same"
    ours = architecture_of(mine)
    return "twin" if ours is not None and ours == architecture_of(theirs) else None


def same_or_twin(name: str, wanted: str) -> bool:
    """Whether measurements of `name` may back a plan for `wanted`."""
    return relation(name, wanted) is not None


def matching_names(names: Iterable[str], wanted: str) -> list[str]:
    """The names that are the wanted model or a twin of it, in their order."""
    return [name for name in names if same_or_twin(name, wanted)]


def twin_label(measured_model: str) -> str:
    """How an answer names its twin's data: 'measured on Llama-3.1-70B-Instruct (same
    architecture)'."""
    short = measured_model.strip().rstrip("/").rsplit("/", 1)[-1]
    return f"measured on {short} (same architecture)"


def checkpoint_precision(model: str, measured: Iterable[str]) -> str | None:
    """The measured precision a model's own checkpoint runs at (an MXFP4 checkpoint's 'fp4'
    curves, a BF16 checkpoint's 'bf16'), or None when its config is unknown or none matches."""
    facts = catalog.model_facts(model)
    if facts is None:
        return None
    own = bytes_per_weight(facts.checkpoint.split(" ", maxsplit=1)[0])
    if own is None:
        return None
    matches = [p for p in measured if (b := bytes_per_weight(p)) is not None and abs(b - own) < 0.1]
    return sorted(matches)[0] if matches else None
