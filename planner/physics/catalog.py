"""The model catalog: every config.json capplan ships (planner/physics/data/model-configs, named
`<org>--<model>_config.json`) and every one a user adds (from a local file or folder, kept in the
store), looked up by any spelling of the model's name.

A name resolves through canonical_model() (a basename, lower case, without "-Instruct", "-FP8",
" (nvidia FP8 ckpt)" style suffixes) and then the aliases below. An unknown name gets a message
that says so and how to add the config; capplan never downloads one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from planner.curves.names import canonical_model
from planner.physics.config import facts_from_config, read_config
from planner.physics.config_layers import ConfigError
from planner.physics.models import ModelFacts

CONFIG_DIR = Path(__file__).with_name("data") / "model-configs"
_SUFFIX = "_config.json"
# Same architecture under another name (the config that describes it).
ALIASES = {
    "llama-3.3-70b": "llama-3.1-70b",
    "deepseek-v3.1-terminus": "deepseek-v3.1",
}
# A release tag after the model's name: a date (-0528, -2507), a variant of the same weights.
_RELEASE_SUFFIX = re.compile(r"-(\d{4}|thinking|terminus|instruct|base|chat|preview)$")
_NAMED_PRECISION = re.compile(r"-(NVFP4|MXFP4|FP8)\b", re.IGNORECASE)
# Organisations whose files re-publish another's model (quantised copies): the original wins.
_REPUBLISHERS = ("nvidia", "sgl-project", "redhatai", "neuralmagic")


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One model the catalog knows: its canonical name, where its config comes from, and the
    facts (or the reason the config could not be read)."""

    model: str
    source: str
    origin: str  # "shipped" or "added"
    facts: ModelFacts | None
    problem: str | None


_added: dict[str, ModelFacts] = {}
# Bumped whenever the added configs change, so caches keyed on it (identity) stay true.
_generation = [0]


def generation() -> int:
    """How many times the added configs have changed (a cache key for derived facts)."""
    return _generation[0]


def model_facts(name: str) -> ModelFacts | None:
    """Facts for a model by any spelling; None when no config describes it (or it cannot be
    read: resolve() says why)."""
    found = resolve(name)
    return found if isinstance(found, ModelFacts) else None


def resolve(name: str) -> ModelFacts | str:
    """Facts for a model, or a sentence saying why there are none (names the model and what to
    do). An added config wins over a shipped one of the same name; aliases and release suffixes
    ("-2507", "-Thinking", "-Terminus") are tried after the exact name."""
    for key in _candidates(name):
        if key in _added:
            return _added[key]
        path = _shipped().get(key)
        if path is not None:
            return _shipped_facts(path, key)
    return (
        f"model facts unknown for {name!r}: no config.json for it among the "
        f"{len(_shipped())} shipped models or the ones added (add its config.json on the "
        "Models page or with `capplan models add FILE`)"
    )


def _candidates(name: str) -> list[str]:
    """The keys to try for a name: canonical, its alias, then without release suffixes."""
    key = canonical_model(name)
    out = [key, ALIASES.get(key, key)]
    trimmed = key
    while (shorter := _RELEASE_SUFFIX.sub("", trimmed)) != trimmed:
        trimmed = canonical_model(shorter)
        out.extend((trimmed, ALIASES.get(trimmed, trimmed)))
    return list(dict.fromkeys(out))


def add_config(config: dict[str, Any], source: str, name: str | None = None) -> ModelFacts:
    """Parse a user's config.json and make it known under `name` (default: its _name_or_path,
    else the file name); ConfigError when it cannot be read. Replaces an earlier one."""
    model = canonical_model(name or model_name_of(config, source))
    facts = facts_from_config(config, model, source)
    _added[model] = facts
    _generation[0] += 1
    return facts


def forget_added() -> None:
    """Drop every added config (a store switch, tests)."""
    if _added:
        _generation[0] += 1
    _added.clear()


def model_name_of(config: dict[str, Any], source: str) -> str:
    """The model a config.json describes: its _name_or_path, else its file name."""
    stated = config.get("_name_or_path")
    if isinstance(stated, str) and stated.strip().strip("./"):
        return stated.strip().rstrip("/")
    base = Path(source).name
    if base.endswith(_SUFFIX):
        return base.removesuffix(_SUFFIX).split("--")[-1]
    if base == "config.json":
        return Path(source).parent.name or base
    return base.removesuffix(".json")


def entries() -> list[CatalogEntry]:
    """Every model the catalog knows, shipped then added, sorted by name."""
    out = [CatalogEntry(key, facts.source, "added", facts, None) for key, facts in _added.items()]
    for key, path in _shipped().items():
        if key in _added:
            continue
        try:
            out.append(CatalogEntry(key, path.name, "shipped", _shipped_facts(path, key), None))
        except ConfigError as error:
            out.append(CatalogEntry(key, path.name, "shipped", None, str(error)))
    return sorted(out, key=lambda e: e.model)


def config_files(folder: Path) -> list[Path]:
    """The model config.json files at a path: the file itself, or under a folder each
    config.json and <org>--<model>_config.json (never tokenizer_config.json and the like)."""
    if folder.is_file():
        return [folder]
    return sorted(p for p in folder.rglob("*.json") if is_model_config_name(p.name))


def is_model_config_name(name: str) -> bool:
    """Whether a file name is a model's config: config.json, or <org>--<model>_config.json."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return base == "config.json" or (base.endswith(_SUFFIX) and "--" in base)


@cache
def _shipped() -> dict[str, Path]:
    ranked: dict[str, tuple[int, Path]] = {}
    for path in sorted(CONFIG_DIR.glob(f"*{_SUFFIX}")):
        org, _, model = path.name.removesuffix(_SUFFIX).partition("--")
        key = canonical_model(model)
        rank = (org.lower() in _REPUBLISHERS) * 2 + (key != model.lower())
        if key not in ranked or rank < ranked[key][0]:
            ranked[key] = (rank, path)
    return {key: path for key, (_, path) in ranked.items()}


@cache
def _shipped_facts(path: Path, key: str) -> ModelFacts:
    facts = facts_from_config(read_config(path), key, f"shipped config {path.name}")
    named = _NAMED_PRECISION.search(path.name.removesuffix(_SUFFIX))
    if facts.checkpoint == "bf16" and named:  # a quantised copy whose config omits its recipe
        return replace(facts, checkpoint=f"{named.group(1).lower()} (from the file name)")
    return facts
