"""Adding model configs (a Hugging Face config.json file, or a folder of them; never a
download) to a store, and making every plan and physics check of that store know them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from db import model_configs
from db.engine import Engine
from errors import InputError
from measurements.entry_names import clean_name
from planner.curves.names import canonical_model
from planner.physics import catalog
from planner.physics.config import facts_from_config, read_config
from planner.physics.config_layers import ConfigError
from planner.physics.models import ModelFacts
from team.roles import Actor


@dataclass(frozen=True, slots=True)
class AddedModel:
    """A config that was added (facts) or refused (why), with the file it came from."""

    source: str
    name: str
    facts: ModelFacts | None
    problem: str | None = None
    added_at: datetime | None = None


def add_models(
    engine: Engine, path: Path, name: str | None = None, *, actor: Actor
) -> list[AddedModel]:
    """Add the config.json at `path`, or every one under a folder (`name` only for one file):
    each is checked, stored and known to the catalog, or refused with the field it lacks;
    InputError when the path holds no config.json at all."""
    files = catalog.config_files(path)
    if not files:
        raise InputError(
            "no config.json here (a model folder's config.json, or files named "
            "<org>--<model>_config.json)",
            file=str(path),
        )
    if name is not None and len(files) > 1:
        raise InputError(
            f"--name names one model, but {len(files)} configs were found", file=str(path)
        )
    out: list[AddedModel] = []
    named: dict[str, str] = {}
    for file in files:
        try:
            config = read_config(file)
            model = canonical_model(name or catalog.model_name_of(config, str(file)))
            if model in named:
                raise ConfigError(
                    f"names the model {model!r} as {named[model]} does: add one of them with "
                    "--name to tell them apart",
                    file=str(file),
                    field="_name_or_path",
                    value=model,
                )
            named[model] = str(file)
            out.append(add_config(engine, config, str(file), name, actor=actor))
        except ConfigError as error:
            out.append(AddedModel(str(file), "", None, str(error)))
    return out


def add_config(
    engine: Engine, config: dict[str, Any], source: str, name: str | None = None, *, actor: Actor
) -> AddedModel:
    """Check one config (ConfigError naming what it lacks), store it and make it known."""
    model = canonical_model(clean_name(name or catalog.model_name_of(config, source)))
    if not model:
        raise ConfigError("no model name: name it", file=source, field="name")
    facts = facts_from_config(config, model, source)
    row = model_configs.store_model_config(engine, model, json.dumps(config), source, actor=actor)
    catalog.add_config(config, source, name=model)
    return AddedModel(source, model, facts, None, row.added_at)


def remove_model(engine: Engine, name: str, *, actor: Actor) -> bool:
    """Forget an added config by any spelling of its name (to the trash); False when none was
    stored."""
    removed = model_configs.delete_model_config(engine, canonical_model(name), actor=actor)
    sync_catalog(engine)
    return removed


def added_models(engine: Engine) -> list[AddedModel]:
    """Every config this store added, with its facts (or why it no longer reads)."""
    out = []
    for row in model_configs.model_config_rows(engine):
        try:
            facts = facts_from_config(json.loads(row.config_json), row.name, row.source)
            out.append(AddedModel(row.source, row.name, facts, None, row.added_at))
        except (ConfigError, ValueError) as error:
            out.append(AddedModel(row.source, row.name, None, str(error), row.added_at))
    return out


def sync_catalog(engine: Engine) -> int:
    """Make the catalog know exactly this store's added configs; how many it knows."""
    catalog.forget_added()
    count = 0
    for row in model_configs.model_config_rows(engine):
        try:
            catalog.add_config(json.loads(row.config_json), row.source, name=row.name)
            count += 1
        except (ConfigError, ValueError):
            continue  # listed with its problem by added_models
    return count


def catalog_entries() -> list[catalog.CatalogEntry]:
    """Every model the physics knows: shipped configs and those added to this store."""
    return catalog.entries()


def resolve_model(name: str) -> ModelFacts | str:
    """The facts of a model by any of its names, or a line saying why none were found."""
    return catalog.resolve(name)


def is_model_config_name(name: str) -> bool:
    """Whether a file name reads as a model config (config.json or NAME_config.json)."""
    return catalog.is_model_config_name(name)
