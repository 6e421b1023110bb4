"""The model catalog: every config.json capplan ships (planner/physics/data/model-configs, named
`<org>--<model>_config.json`) and every one a user adds (from a local file or folder, kept in the
store), looked up by any spelling of the model's name.

A name resolves through canonical_model() (a basename, lower case, without "-Instruct", "-FP8",
" (nvidia FP8 ckpt)" style suffixes) and then the aliases below. An unknown name gets a message
that says so and how to add the config; capplan never downloads one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from planner.curves.load import canonical_model
from planner.physics.config import facts_from_config, read_config
from planner.physics.config_layers import ConfigError
from planner.physics.models import ModelFacts

CONFIG_DIR = Path(__file__).with_name("data") / "model-configs"
_SUFFIX = "_config.json"
# Same architecture under another name (the config that describes it).
ALIASES = {
    "llama-3.3-70b": "llama-3.1-70b",
    "llama-3.1-405b": "llama-3.1-405b",
    "deepseek-r1-0528": "deepseek-r1",
    "deepseek-v3-0324": "deepseek-v3",
    "deepseek-v3.1": "deepseek-v3",
    "kimi-k2": "kimi-k2",
}
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


def model_facts(name: str) -> ModelFacts | None:
    """Facts for a model by any spelling; None when no config describes it (or it cannot be
    read: resolve() says why)."""
    found = resolve(name)
    return found if isinstance(found, ModelFacts) else None


def resolve(name: str) -> ModelFacts | str:
    """Facts for a model, or a sentence saying why there are none (names the model and what to
    do)."""
    key = lookup_key(name)
    if key in _added:
        return _added[key]
    path = _shipped().get(key)
    if path is None:
        return (
            f"model facts unknown for {name!r}: no config.json for it among the "
            f"{len(_shipped())} shipped models or the ones added (add its config.json on the "
            "Models page or with `capplan models add FILE`)"
        )
    return _shipped_facts(path, key)


def lookup_key(name: str) -> str:
    """The catalog key a model name resolves to (canonical name, then alias)."""
    key = canonical_model(name)
    return ALIASES.get(key, key)


def add_config(config: dict[str, Any], source: str, name: str | None = None) -> ModelFacts:
    """Parse a user's config.json and make it known under `name` (default: its _name_or_path,
    else the file name); ConfigError when it cannot be read. Replaces an earlier one."""
    model = canonical_model(name or model_name_of(config, source))
    facts = facts_from_config(config, model, source)
    _added[model] = facts
    return facts


def forget_added() -> None:
    """Drop every added config (a store switch, tests)."""
    _added.clear()


def model_name_of(config: dict[str, Any], source: str) -> str:
    """The model a config.json describes: its _name_or_path, else its file name."""
    stated = config.get("_name_or_path")
    if isinstance(stated, str) and stated.strip():
        return stated.strip()
    base = Path(source).name
    if base.endswith(_SUFFIX):
        return base.removesuffix(_SUFFIX).split("--")[-1]
    if base == "config.json":
        return Path(source).parent.name
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
    """The config.json files under a folder (a model folder, or one of many), in name order."""
    if folder.is_file():
        return [folder]
    return sorted(
        p for p in folder.rglob("*.json") if p.name == "config.json" or p.name.endswith(_SUFFIX)
    )


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
    return facts_from_config(read_config(path), key, f"shipped config {path.name}")


def known_names(extra: Iterable[str] = ()) -> list[str]:
    """Every model name the catalog resolves, for pickers."""
    return sorted({*_shipped(), *_added, *extra})
