"""Runs: the engine's start-up KV-cache report (RunFile.startup kv_cache_tokens, max_concurrency,
max_concurrency_at_tokens), all nullable: runs stored before it have none.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-04 18:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the three nullable columns to runs."""
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("kv_cache_tokens", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("max_concurrency", sa.Float(), nullable=True))
        batch.add_column(sa.Column("max_concurrency_at_tokens", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    """Drop them (the reports are lost; a backup keeps them)."""
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("max_concurrency_at_tokens")
        batch.drop_column("max_concurrency")
        batch.drop_column("kv_cache_tokens")
