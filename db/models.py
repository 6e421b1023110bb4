"""SQLAlchemy 2.0 typed models of the capplan store: runs, their levels, metrics and samples,
the price catalog and saved scenarios. Only db/ imports this module.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    false,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# Named constraints so Alembic batch migrations on SQLite can find and alter them later.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

JsonDict = dict[str, Any]


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on every dialect (SQLite drops the offset, so store UTC)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Convert to UTC; a naive value is taken as UTC already (RunFile times are UTC)."""
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Attach UTC to what SQLite returns naive; normalise what Postgres returns aware."""
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    """Declarative base carrying the shared metadata and naming convention."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Deployment(Base):
    """What was served on what hardware; runs with identical deployments share one row."""

    __tablename__ = "deployments"
    __table_args__ = (Index("ix_deployments_model_gpu_engine", "model", "gpu", "engine"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # sha256 of every deployment field: a unique index over nullable columns would let
    # duplicates through (NULL never equals NULL), so the key is computed in Python instead.
    identity_key: Mapped[str] = mapped_column(String(64), unique=True)
    engine: Mapped[str] = mapped_column(String(64))
    engine_version: Mapped[str | None] = mapped_column(String(128))
    model: Mapped[str] = mapped_column(String(512))
    precision: Mapped[str | None] = mapped_column(String(32))
    gpu: Mapped[str | None] = mapped_column(String(128))
    gpu_count: Mapped[int | None] = mapped_column(Integer)
    tp: Mapped[int | None] = mapped_column(Integer)
    pp: Mapped[int | None] = mapped_column(Integer)
    launch_command: Mapped[str | None] = mapped_column(Text)
    engine_args: Mapped[JsonDict] = mapped_column(JSON)


class Run(Base):
    """One RunFile: a deployment under one workload, measured at one or more load levels."""

    __tablename__ = "runs"
    # AUTOINCREMENT: SQLite would otherwise hand a deleted run's id to the next run, and reports
    # cite runs by id. Other dialects ignore the option (their sequences never reuse ids).
    __table_args__ = (Index("ix_runs_isl_osl", "isl", "osl"), {"sqlite_autoincrement": True})

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    deployment_id: Mapped[int] = mapped_column(
        ForeignKey("deployments.id", ondelete="RESTRICT"), index=True
    )
    schema_version: Mapped[int] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(String(32))
    provenance: Mapped[str] = mapped_column(String(32))
    label: Mapped[str | None] = mapped_column(Text)
    # Dedupe key: the RunFile's source_sha256, or the sha256 of the run's JSON when it has none.
    content_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    source_sha256: Mapped[str | None] = mapped_column(String(64))
    origin_file: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    imported_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    complete: Mapped[bool]
    notes: Mapped[str | None] = mapped_column(Text)
    isl: Mapped[int | None] = mapped_column(Integer)
    osl: Mapped[int | None] = mapped_column(Integer)
    workload_extra: Mapped[JsonDict] = mapped_column(JSON)
    environment: Mapped[JsonDict] = mapped_column(JSON)
    cold_start_s: Mapped[float | None] = mapped_column(Float)
    engine_build_s: Mapped[float | None] = mapped_column(Float)
    vram_idle_gb: Mapped[float | None] = mapped_column(Float)
    # The engine's start-up KV-cache report (RunFile.startup; migration 0005).
    kv_cache_tokens: Mapped[int | None] = mapped_column(BigInteger)
    max_concurrency: Mapped[float | None] = mapped_column(Float)
    max_concurrency_at_tokens: Mapped[int | None] = mapped_column(BigInteger)
    capabilities: Mapped[JsonDict] = mapped_column(JSON)
    # In the trash (migration 0006): hidden from every read until undone or purged.
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    deleted_by: Mapped[str | None] = mapped_column(String(320))
    imported_by: Mapped[str | None] = mapped_column(String(320))


class LoadLevel(Base):
    """One concurrency or rate level of a run, with its counts (64-bit: a 32-bit INTEGER on
    Postgres would refuse a long run's token totals that SQLite takes)."""

    __tablename__ = "load_levels"
    # (run_id, position) serves "levels of these runs, in order" for many runs at once.
    __table_args__ = (UniqueConstraint("run_id", "position"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    load_kind: Mapped[str] = mapped_column(String(16))
    load_value: Mapped[float] = mapped_column(Float)
    duration_s: Mapped[float | None] = mapped_column(Float)
    window_start_s: Mapped[float | None] = mapped_column(Float)
    window_end_s: Mapped[float | None] = mapped_column(Float)
    burst: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    load_stated: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    requests_sent: Mapped[int | None] = mapped_column(BigInteger)
    completed: Mapped[int | None] = mapped_column(BigInteger)
    failed: Mapped[int | None] = mapped_column(BigInteger)
    incomplete: Mapped[int | None] = mapped_column(BigInteger)
    input_tokens_total: Mapped[int | None] = mapped_column(BigInteger)
    output_tokens_total: Mapped[int | None] = mapped_column(BigInteger)
    notes: Mapped[str | None] = mapped_column(Text)


class LevelMetric(Base):
    """One canonical metric of a level, with its origin and the source's own key and value."""

    __tablename__ = "level_metrics"
    # The unique index leads with level_id, so it also serves loading the metrics of many levels.
    __table_args__ = (UniqueConstraint("level_id", "name", "origin"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    level_id: Mapped[int] = mapped_column(ForeignKey("load_levels.id", ondelete="CASCADE"))
    # Keeps the RunFile's metric order, so a stored run reads back equal to what was saved.
    position: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(64))
    value: Mapped[float] = mapped_column(Float)
    origin: Mapped[str] = mapped_column(String(16))
    source_key: Mapped[str | None] = mapped_column(Text)
    source_value: Mapped[float | None] = mapped_column(Float)


class RequestSample(Base):
    """One request of a level as the client saw it."""

    __tablename__ = "request_samples"
    __table_args__ = (UniqueConstraint("level_id", "position"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    level_id: Mapped[int] = mapped_column(ForeignKey("load_levels.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    send_s: Mapped[float | None] = mapped_column(Float)
    ttft_ms: Mapped[float | None] = mapped_column(Float)
    e2e_ms: Mapped[float | None] = mapped_column(Float)
    input_tokens: Mapped[int | None] = mapped_column(BigInteger)
    output_tokens: Mapped[int | None] = mapped_column(BigInteger)
    chunk_gaps_ms: Mapped[list[float]] = mapped_column(JSON)
    http_status: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)


class Price(Base):
    """One price quote of the editable catalog (hardware.prices.PriceEntry plus bookkeeping)."""

    __tablename__ = "prices"
    __table_args__ = (Index("ix_prices_gpu_provider", "gpu", "provider"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    provider: Mapped[str] = mapped_column(String(128))
    sku: Mapped[str] = mapped_column(String(128))
    gpu: Mapped[str] = mapped_column(String(128))
    gpus_per_instance: Mapped[int] = mapped_column(Integer)
    pricing_type: Mapped[str] = mapped_column(String(64))
    usd_per_gpu_hour: Mapped[float] = mapped_column(Float)
    usd_per_instance_hour: Mapped[float | None] = mapped_column(Float)
    region: Mapped[str] = mapped_column(Text)
    as_of: Mapped[str] = mapped_column(Text)
    source: Mapped[str] = mapped_column(Text)
    confidence: Mapped[str] = mapped_column(String(32))
    notes: Mapped[str] = mapped_column(Text)
    is_default: Mapped[bool]
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Scenario(Base):
    """A saved scenario YAML, by unique name."""

    __tablename__ = "scenarios"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    yaml_text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # Owner and last editor (migration 0006; None for scenarios saved before owners were kept).
    created_by: Mapped[str | None] = mapped_column(String(320))
    updated_by: Mapped[str | None] = mapped_column(String(320))
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    deleted_by: Mapped[str | None] = mapped_column(String(320))


class PlanRecord(Base):
    """One recorded plan of a scenario: what it was made from (scenario YAML, run ids, prices)
    and what it answered, so it can be regenerated and audited later."""

    __tablename__ = "plan_records"
    # AUTOINCREMENT for the same reason as runs: reports cite plan records by id.
    __table_args__ = ({"sqlite_autoincrement": True},)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # SET NULL: deleting a scenario keeps its audit trail (the name and YAML are copied here).
    scenario_id: Mapped[int | None] = mapped_column(
        ForeignKey("scenarios.id", ondelete="SET NULL"), index=True
    )
    scenario_name: Mapped[str] = mapped_column(String(200))
    scenario_yaml: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # Runs behind the options, and every run whose curve shaped their fits (planner.fitting.shapes).
    run_ids: Mapped[list[int]] = mapped_column(JSON)
    basis_run_ids: Mapped[list[int]] = mapped_column(JSON)
    catalog_version: Mapped[str] = mapped_column(String(64))
    prices_used: Mapped[list[JsonDict]] = mapped_column(JSON)
    choice_title: Mapped[str | None] = mapped_column(Text)
    total_monthly_cost_usd: Mapped[float | None] = mapped_column(Float)
    nodes: Mapped[int | None] = mapped_column(Integer)
    recommendation: Mapped[str] = mapped_column(Text)
    # What it rested on (migration 0006): each run's content sha256 by id, the prices' sha256.
    run_hashes: Mapped[JsonDict | None] = mapped_column(JSON)
    prices_sha256: Mapped[str | None] = mapped_column(String(64))
    created_by: Mapped[str | None] = mapped_column(String(320))


class ModelConfig(Base):
    """A Hugging Face config.json a user added (planner.physics.catalog), by canonical name."""

    __tablename__ = "model_configs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    config_json: Mapped[str] = mapped_column(Text)
    source: Mapped[str] = mapped_column(Text)  # the file it came from, as the user named it
    added_at: Mapped[datetime] = mapped_column(UTCDateTime)
    added_by: Mapped[str | None] = mapped_column(String(320))
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    deleted_by: Mapped[str | None] = mapped_column(String(320))


class AuditEntry(Base):
    """One change to the store: who (and in which role), when, what, the value before and after.
    Written in the same transaction as the change; nothing in capplan updates or deletes a row
    (a restore keeps the trail: db/restore.py)."""

    __tablename__ = "audit_log"
    __table_args__ = ({"sqlite_autoincrement": True},)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    actor: Mapped[str] = mapped_column(String(320), index=True)
    role: Mapped[str] = mapped_column(String(16))
    kind: Mapped[str] = mapped_column(String(32), index=True)  # run, prices, scenario, ...
    action: Mapped[str] = mapped_column(String(32))  # imported, deleted, restored, ...
    target: Mapped[str] = mapped_column(Text)  # "run 12", "scenario 'q3'", "price catalog"
    before: Mapped[Any] = mapped_column(JSON, nullable=True)
    after: Mapped[Any] = mapped_column(JSON, nullable=True)
    summary: Mapped[str] = mapped_column(Text)


class TeamRole(Base):
    """A role an admin gave a person in capplan (team.mapping: the higher of this and the
    operator's mapping decides)."""

    __tablename__ = "team_roles"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    person: Mapped[str] = mapped_column(String(320), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    given_by: Mapped[str] = mapped_column(String(320))
    given_at: Mapped[datetime] = mapped_column(UTCDateTime)
