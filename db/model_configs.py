"""The stored model configs users add (Hugging Face config.json text, by canonical name); what
they mean is the planner's (workflows.models reads them into planner.physics.catalog)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, delete, select
from sqlalchemy.orm import Session

from db import audit
from db.engine import session_scope, write_transaction
from db.limits import check_fits
from db.models import ModelConfig
from errors import InputError
from team.roles import Action, Actor

MAX_CONFIG_BYTES = 8 * 2**20  # the largest shipped config (an NVFP4 ignore list) is 3 MB


@dataclass(frozen=True, slots=True)
class ConfigRow:
    """One stored config: its name, JSON text, the file it came from, when it was added."""

    name: str
    config_json: str
    source: str
    added_at: datetime


def store_model_config(
    engine: Engine, name: str, config_json: str, source: str, *, actor: Actor
) -> ConfigRow:
    """Store a config under `name` (a planner's), replacing an earlier one of that name (in the
    trash or not), in one transaction, recorded."""
    actor.require(Action.ADD_MODELS)
    if len(config_json.encode()) > MAX_CONFIG_BYTES:
        raise InputError(
            f"config.json over {MAX_CONFIG_BYTES // 2**20} MiB",
            file=source,
            value=len(config_json.encode()),
        )
    row = ConfigRow(name, config_json, source, datetime.now(UTC))
    values = {"name": name, "config_json": config_json, "source": source, "added_at": row.added_at}
    check_fits(ModelConfig.__table__, values, field_prefix="model_configs.", file=source)

    def store(session: Session) -> None:
        old = session.scalar(select(ModelConfig).where(ModelConfig.name == name))
        before = None if old is None else {"source": old.source, "config_json": old.config_json}
        session.execute(delete(ModelConfig).where(ModelConfig.name == name))
        session.add(ModelConfig(**values, added_by=actor.name))
        after = {"source": source, "config_json": config_json}
        said = f"model {name} added from {source}"
        audit.record(session, actor, ("model", "added", f"model {name}"), (before, after), said)

    write_transaction(engine, store)
    return row


def delete_model_config(engine: Engine, name: str, *, actor: Actor) -> bool:
    """Move the config stored under `name` to the trash (an admin's); False when there was none."""
    actor.require(Action.REMOVE_MODELS)

    def drop(session: Session) -> bool:
        query = select(ModelConfig).where(
            ModelConfig.name == name, ModelConfig.deleted_at.is_(None)
        )
        row = session.scalar(query.with_for_update())
        if row is None:
            return False
        row.deleted_at, row.deleted_by = datetime.now(UTC), actor.name
        before = {"source": row.source, "config_json": row.config_json}
        said = f"model {name} removed"
        audit.record(session, actor, ("model", "removed", f"model {name}"), (before, None), said)
        return True

    return write_transaction(engine, drop)


def model_config_rows(engine: Engine) -> list[ConfigRow]:
    """Every stored config, by name."""
    with session_scope(engine, write=False) as session:
        query = select(ModelConfig).where(ModelConfig.deleted_at.is_(None))
        rows = session.scalars(query.order_by(ModelConfig.name)).all()
        return [ConfigRow(r.name, r.config_json, r.source, r.added_at) for r in rows]
