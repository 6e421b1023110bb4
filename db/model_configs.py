"""The stored model configs users add (Hugging Face config.json text, by canonical name); what
they mean is the planner's (workflows.models reads them into planner.physics.catalog)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, delete, select
from sqlalchemy.orm import Session

from db.engine import session_scope, write_transaction
from db.limits import check_fits
from db.models import ModelConfig
from errors import InputError

MAX_CONFIG_BYTES = 8 * 2**20  # the largest shipped config (an NVFP4 ignore list) is 3 MB


@dataclass(frozen=True, slots=True)
class ConfigRow:
    """One stored config: its name, JSON text, the file it came from, when it was added."""

    name: str
    config_json: str
    source: str
    added_at: datetime


def store_model_config(engine: Engine, name: str, config_json: str, source: str) -> ConfigRow:
    """Store a config under `name`, replacing an earlier one of that name, in one transaction."""
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
        session.execute(delete(ModelConfig).where(ModelConfig.name == name))
        session.add(ModelConfig(**values))

    write_transaction(engine, store)
    return row


def delete_model_config(engine: Engine, name: str) -> bool:
    """Delete the config stored under `name`; False when there was none."""

    def drop(session: Session) -> bool:
        gone = session.execute(delete(ModelConfig).where(ModelConfig.name == name))
        return bool(getattr(gone, "rowcount", 0))

    return write_transaction(engine, drop)


def model_config_rows(engine: Engine) -> list[ConfigRow]:
    """Every stored config, by name."""
    with session_scope(engine, write=False) as session:
        rows = session.scalars(select(ModelConfig).order_by(ModelConfig.name)).all()
        return [ConfigRow(r.name, r.config_json, r.source, r.added_at) for r in rows]
