"""Initial schema: deployments, runs, levels, level metrics, request samples, prices, scenarios.

Revision ID: 0001
Revises:
Create Date: 2026-11-29 19:01:55.939555
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "deployments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("identity_key", sa.String(length=64), nullable=False),
        sa.Column("engine", sa.String(length=64), nullable=False),
        sa.Column("engine_version", sa.String(length=128), nullable=True),
        sa.Column("model", sa.String(length=512), nullable=False),
        sa.Column("precision", sa.String(length=32), nullable=True),
        sa.Column("gpu", sa.String(length=128), nullable=True),
        sa.Column("gpu_count", sa.Integer(), nullable=True),
        sa.Column("tp", sa.Integer(), nullable=True),
        sa.Column("pp", sa.Integer(), nullable=True),
        sa.Column("launch_command", sa.Text(), nullable=True),
        sa.Column("engine_args", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_deployments")),
        sa.UniqueConstraint("identity_key", name=op.f("uq_deployments_identity_key")),
    )
    op.create_index(
        "ix_deployments_model_gpu_engine", "deployments", ["model", "gpu", "engine"], unique=False
    )

    op.create_table(
        "prices",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("provider", sa.String(length=128), nullable=False),
        sa.Column("sku", sa.String(length=128), nullable=False),
        sa.Column("gpu", sa.String(length=128), nullable=False),
        sa.Column("gpus_per_instance", sa.Integer(), nullable=False),
        sa.Column("pricing_type", sa.String(length=64), nullable=False),
        sa.Column("usd_per_gpu_hour", sa.Float(), nullable=False),
        sa.Column("usd_per_instance_hour", sa.Float(), nullable=True),
        sa.Column("region", sa.Text(), nullable=False),
        sa.Column("as_of", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("confidence", sa.String(length=32), nullable=False),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.Column("is_default", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_prices")),
    )
    op.create_index("ix_prices_gpu_provider", "prices", ["gpu", "provider"], unique=False)

    op.create_table(
        "scenarios",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("yaml_text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_scenarios")),
        sa.UniqueConstraint("name", name=op.f("uq_scenarios_name")),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("deployment_id", sa.Integer(), nullable=False),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("provenance", sa.String(length=32), nullable=False),
        sa.Column("label", sa.Text(), nullable=True),
        sa.Column("content_sha256", sa.String(length=64), nullable=False),
        sa.Column("source_sha256", sa.String(length=64), nullable=True),
        sa.Column("origin_file", sa.Text(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("imported_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("complete", sa.Boolean(), nullable=False),
        sa.Column("notes", sa.Text(), nullable=True),
        sa.Column("isl", sa.Integer(), nullable=True),
        sa.Column("osl", sa.Integer(), nullable=True),
        sa.Column("workload_extra", sa.JSON(), nullable=False),
        sa.Column("environment", sa.JSON(), nullable=False),
        sa.Column("cold_start_s", sa.Float(), nullable=True),
        sa.Column("engine_build_s", sa.Float(), nullable=True),
        sa.Column("vram_idle_gb", sa.Float(), nullable=True),
        sa.Column("capabilities", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["deployment_id"],
            ["deployments.id"],
            name=op.f("fk_runs_deployment_id_deployments"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
        sa.UniqueConstraint("content_sha256", name=op.f("uq_runs_content_sha256")),
        sqlite_autoincrement=True,
    )
    op.create_index(op.f("ix_runs_deployment_id"), "runs", ["deployment_id"], unique=False)
    op.create_index(op.f("ix_runs_imported_at"), "runs", ["imported_at"], unique=False)
    op.create_index("ix_runs_isl_osl", "runs", ["isl", "osl"], unique=False)

    op.create_table(
        "load_levels",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("load_kind", sa.String(length=16), nullable=False),
        sa.Column("load_value", sa.Float(), nullable=False),
        sa.Column("duration_s", sa.Float(), nullable=True),
        sa.Column("window_start_s", sa.Float(), nullable=True),
        sa.Column("window_end_s", sa.Float(), nullable=True),
        sa.Column("burst", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("load_stated", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.Column("requests_sent", sa.Integer(), nullable=True),
        sa.Column("completed", sa.Integer(), nullable=True),
        sa.Column("failed", sa.Integer(), nullable=True),
        sa.Column("incomplete", sa.Integer(), nullable=True),
        sa.Column("input_tokens_total", sa.Integer(), nullable=True),
        sa.Column("output_tokens_total", sa.Integer(), nullable=True),
        sa.Column("notes", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_load_levels_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_load_levels")),
        sa.UniqueConstraint("run_id", "position", name=op.f("uq_load_levels_run_id_position")),
    )
    op.create_table(
        "level_metrics",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("level_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("origin", sa.String(length=16), nullable=False),
        sa.Column("source_key", sa.Text(), nullable=True),
        sa.Column("source_value", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["level_id"],
            ["load_levels.id"],
            name=op.f("fk_level_metrics_level_id_load_levels"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_level_metrics")),
        sa.UniqueConstraint(
            "level_id", "name", "origin", name=op.f("uq_level_metrics_level_id_name_origin")
        ),
    )
    op.create_table(
        "request_samples",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("level_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("send_s", sa.Float(), nullable=True),
        sa.Column("ttft_ms", sa.Float(), nullable=True),
        sa.Column("e2e_ms", sa.Float(), nullable=True),
        sa.Column("input_tokens", sa.Integer(), nullable=True),
        sa.Column("output_tokens", sa.Integer(), nullable=True),
        sa.Column("chunk_gaps_ms", sa.JSON(), nullable=False),
        sa.Column("http_status", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["level_id"],
            ["load_levels.id"],
            name=op.f("fk_request_samples_level_id_load_levels"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_request_samples")),
        sa.UniqueConstraint(
            "level_id", "position", name=op.f("uq_request_samples_level_id_position")
        ),
    )


def downgrade() -> None:
    """Downgrade schema: drop every table (their indexes go with them)."""
    op.drop_table("request_samples")
    op.drop_table("level_metrics")
    op.drop_table("load_levels")
    op.drop_table("runs")
    op.drop_table("scenarios")
    op.drop_table("prices")
    op.drop_table("deployments")
