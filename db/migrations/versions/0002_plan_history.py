"""Plan history: one row per recorded plan of a scenario (inputs, run ids, prices, summary).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 22:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the plan_records table (existing tables and rows are untouched)."""
    op.create_table(
        "plan_records",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("scenario_id", sa.Integer(), nullable=True),
        sa.Column("scenario_name", sa.String(length=200), nullable=False),
        sa.Column("scenario_yaml", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("run_ids", sa.JSON(), nullable=False),
        sa.Column("basis_run_ids", sa.JSON(), nullable=False),
        sa.Column("catalog_version", sa.String(length=64), nullable=False),
        sa.Column("prices_used", sa.JSON(), nullable=False),
        sa.Column("choice_title", sa.Text(), nullable=True),
        sa.Column("total_monthly_cost_usd", sa.Float(), nullable=True),
        sa.Column("nodes", sa.Integer(), nullable=True),
        sa.Column("recommendation", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["scenario_id"],
            ["scenarios.id"],
            name=op.f("fk_plan_records_scenario_id_scenarios"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_plan_records")),
        sqlite_autoincrement=True,
    )
    op.create_index(
        op.f("ix_plan_records_scenario_id"), "plan_records", ["scenario_id"], unique=False
    )


def downgrade() -> None:
    """Drop the plan_records table (its index goes with it)."""
    op.drop_table("plan_records")
