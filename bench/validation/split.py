"""The dev / held-out split, fixed by hash before any tuning and never changed afterwards.

Key: the model's architecture family (FAMILY; twins and re-releases share one, so they fall
together), `int(sha256(family).hexdigest(), 16) % 3 == 0` -> held-out. With the six families of
the shared data this holds out llama-3-70b and gpt-oss-120b. For the GPU reaches, a model measured
on three or more GPUs also holds out one whole GPU: the one at index
`int(sha256(family + "/gpu").hexdigest(), 16) % n` of its GPUs sorted by name; a case touching that
GPU (as source or target) is held-out. The rule was written and its groups counted before any
error was computed; no modulus or salt was changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from planner.curves.names import canonical_model

DEV = "dev"
HELD_OUT = "held-out"
MODULUS = 3
# canonical model (planner.curves.load.canonical_model) -> architecture family.
FAMILY: dict[str, str] = {
    "deepseek-v3": "deepseek-v3",
    "deepseek-r1": "deepseek-v3",
    "deepseek-v3.1": "deepseek-v3",
    "llama-3.1-70b": "llama-3-70b",
    "llama-3.3-70b": "llama-3-70b",
    "llama-3.1-8b": "llama-3.1-8b",
    "qwen3-32b": "qwen3-32b",
    "qwen3-235b-a22b": "qwen3-235b-a22b",
    "gpt-oss-120b": "gpt-oss-120b",
}


def family(model: str) -> str:
    """The architecture family of a model name (its canonical name when FAMILY has none)."""
    name = canonical_model(model)
    return FAMILY.get(name, name)


def _hash(text: str) -> int:
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest(), 16)


def split_of(model: str) -> str:
    """DEV or HELD_OUT for every case of this model's family."""
    return HELD_OUT if _hash(family(model)) % MODULUS == 0 else DEV


def held_out_gpu(model: str, gpus: Iterable[str]) -> str | None:
    """The GPU held out for this model's family among the GPUs it was measured on (3 or more);
    None with fewer."""
    names = sorted(set(gpus))
    if len(names) < MODULUS:
        return None
    return names[_hash(family(model) + "/gpu") % len(names)]


def gpu_split_of(model: str, gpus: tuple[str, str], held_gpu: str | None) -> str:
    """The split of a GPU-reach case: its family's, or HELD_OUT when it touches the held GPU."""
    if held_gpu is not None and held_gpu in gpus:
        return HELD_OUT
    return split_of(model)
