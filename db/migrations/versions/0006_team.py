"""A team store: the audit trail (audit_log), roles an admin gave (team_roles), owners of
scenarios, who imported a run or added a model, soft deletes (deleted_at/deleted_by on runs,
scenarios and model configs), and what a recorded plan rested on (run hashes, the prices' hash).
Every new column is nullable: rows stored before it have no owner and are not deleted.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-06 19:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_PERSON = sa.String(320)


def upgrade() -> None:
    """Create the two tables and add the nullable columns."""
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", _PERSON, nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("target", sa.Text(), nullable=False),
        sa.Column("before", sa.JSON(), nullable=True),
        sa.Column("after", sa.JSON(), nullable=True),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
        sqlite_autoincrement=True,
    )
    for column in ("at", "actor", "kind"):
        op.create_index(op.f(f"ix_audit_log_{column}"), "audit_log", [column])
    op.create_table(
        "team_roles",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("person", _PERSON, nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("given_by", _PERSON, nullable=False),
        sa.Column("given_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_team_roles")),
        sa.UniqueConstraint("person", name=op.f("uq_team_roles_person")),
    )
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("deleted_by", _PERSON, nullable=True))
        batch.add_column(sa.Column("imported_by", _PERSON, nullable=True))
    with op.batch_alter_table("scenarios") as batch:
        for name in ("created_by", "updated_by", "deleted_by"):
            batch.add_column(sa.Column(name, _PERSON, nullable=True))
        batch.add_column(sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("model_configs") as batch:
        batch.add_column(sa.Column("added_by", _PERSON, nullable=True))
        batch.add_column(sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("deleted_by", _PERSON, nullable=True))
    with op.batch_alter_table("plan_records") as batch:
        batch.add_column(sa.Column("run_hashes", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("prices_sha256", sa.String(64), nullable=True))
        batch.add_column(sa.Column("created_by", _PERSON, nullable=True))


def downgrade() -> None:
    """Drop them (the trail, roles, owners and the trash's marks are lost; a backup keeps them;
    what was in the trash comes back)."""
    with op.batch_alter_table("plan_records") as batch:
        for name in ("created_by", "prices_sha256", "run_hashes"):
            batch.drop_column(name)
    with op.batch_alter_table("model_configs") as batch:
        for name in ("deleted_by", "deleted_at", "added_by"):
            batch.drop_column(name)
    with op.batch_alter_table("scenarios") as batch:
        for name in ("deleted_at", "deleted_by", "updated_by", "created_by"):
            batch.drop_column(name)
    with op.batch_alter_table("runs") as batch:
        for name in ("imported_by", "deleted_by", "deleted_at"):
            batch.drop_column(name)
    op.drop_table("team_roles")
    op.drop_table("audit_log")
