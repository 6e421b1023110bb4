"""GPU, model and engine names as they enter (a run file, a probe config, a scenario, a restored
row): NFKC-normalised (a full-width 'Ｈ' is an 'H') with zero-width and control characters
removed, so a name that prints like another is stored as that one. A name that still only looks
like a GPU of the catalog or a known engine (a Cyrillic 'Н' for an 'H') is refused naming both.
A model served from a path is named by its repo id (a Hugging Face cache folder) or last folder."""

from __future__ import annotations

import re
import unicodedata

from hardware.gpus import gpu_catalog

__all__ = [
    "KNOWN_ENGINES",
    "clean_name",
    "engine_name",
    "gpu_name",
    "lookalike_problem",
    "model_name",
]

# The engines capplan knows by name (planner.curves.spelling), with trtllm, TensorRT-LLM's alias.
KNOWN_ENGINES = ("vllm", "tensorrt-llm", "trtllm", "sglang", "tgi", "llama.cpp", "other")
# A Hugging Face hub cache folder: models--ORG--NAME (ORG and NAME never hold "--" themselves).
_HF_CACHE = re.compile(r"(?:^|[\\/])models--(?P<repo>[^\\/]+?)(?:[\\/]|$)")
# Hangul fillers print as nothing but are letters (Lo), so NFKC and the categories keep them.
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")
# Cyrillic and Greek letters, and dashes, that print like a Latin letter or a hyphen (NFKC keeps
# them apart): each maps to the ASCII it looks like.
_LOOKS_LIKE = str.maketrans(
    "АВЕКМНОРСТУХЅІЈӀԚԜҮаеорсухѕіјһԁԛԝӏкмтвн"
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαβεικνορτυχ"
    "\u2010\u2011\u2012\u2013\u2014\u2212",
    "ABEKMHOPCTYXSIJIQWYaeopcyxsijhdqwlkmtbhABEZHIKMNOPTYXabeiknoptux------",
)


def clean_name(text: str) -> str:
    """`text` NFKC-normalised, without zero-width, format or control characters, stripped."""
    normal = unicodedata.normalize("NFKC", text)
    kept = (c for c in normal if unicodedata.category(c) not in ("Cc", "Cf") and c not in _FILLERS)
    return "".join(kept).strip()


def model_name(text: str) -> str:
    """A model name cleaned (clean_name), a path made its model id: a Hugging Face cache folder
    (`.../models--ORG--NAME/snapshots/<hash>`) is `ORG/NAME`, any other path its last folder
    (`/models/Qwen3-32B` is `Qwen3-32B`); a repo id (`ORG/NAME`) stays as it is."""
    name = clean_name(text)
    if cached := _HF_CACHE.search(name):
        return cached["repo"].replace("--", "/", 1)
    if _is_path(name):
        folders = [part for part in re.split(r"[\\/]+", name) if part not in ("", ".", "..", "~")]
        return folders[-1] if folders else name
    return name


def _is_path(name: str) -> bool:
    """Whether a served model name is a filesystem path rather than an `ORG/NAME` repo id."""
    return name.startswith(("/", "./", "../", "~", "\\")) or "\\" in name or name.count("/") > 1


def lookalike_problem(name: str, entry: str, what: str) -> str:
    """Why `name` is refused: it looks like `entry` (the catalog's or engine's) but is not."""
    odd = [(i, c) for i, c in enumerate(name) if not c.isascii()]
    index, char = next(((i, c) for i, c in odd if c.translate(_LOOKS_LIKE) != c), odd[0])
    described = f"U+{ord(char):04X} {unicodedata.name(char, 'UNNAMED CHARACTER')}"
    return (
        f"{name!r} looks like the {what} {entry!r} but is not: its {_ordinal(index + 1)} "
        f"character is {described}"
    )


def gpu_name(text: str) -> str:
    """A GPU name cleaned (clean_name); ValueError when it only looks like a catalog GPU."""
    name = clean_name(text)
    if name.isascii():
        return name
    looks_like = name.translate(_LOOKS_LIKE)
    meant = gpu_catalog().find(looks_like) if looks_like != name else None
    if meant is not None:  # even where the chip token still matches (H100-ЅXM: a Cyrillic DZE)
        raise ValueError(lookalike_problem(name, meant.gpu, "catalog's"))
    return name


def engine_name(text: str) -> str:
    """An engine name cleaned and lower-cased; ValueError when it only looks like a known one."""
    name = clean_name(text).lower()
    meant = name.translate(_LOOKS_LIKE)
    if not name.isascii() and meant in KNOWN_ENGINES:
        raise ValueError(lookalike_problem(name, meant, "engine"))
    return name


def _ordinal(number: int) -> str:
    if 10 <= number % 100 <= 20:
        return f"{number}th"
    return f"{number}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(number % 10, 'th') }"
