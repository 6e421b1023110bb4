"""Counts as 64-bit integers: request and token counts of levels and samples.

SQLite's INTEGER is already 64-bit; Postgres's is 32-bit, so a run with more than 2^31 tokens
would be refused there. Values are unchanged.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 00:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COUNTS = {
    "load_levels": (
        "requests_sent",
        "completed",
        "failed",
        "incomplete",
        "input_tokens_total",
        "output_tokens_total",
    ),
    "request_samples": ("input_tokens", "output_tokens"),
}


def _retype(old: sa.types.TypeEngine[int], new: sa.types.TypeEngine[int]) -> None:
    for table, columns in COUNTS.items():
        with op.batch_alter_table(table) as batch:
            for column in columns:
                batch.alter_column(column, existing_type=old, type_=new, existing_nullable=True)


def upgrade() -> None:
    """Widen the count columns to BIGINT."""
    _retype(sa.Integer(), sa.BigInteger())


def downgrade() -> None:
    """Narrow them back to INTEGER (Postgres refuses if a stored count no longer fits)."""
    _retype(sa.BigInteger(), sa.Integer())
