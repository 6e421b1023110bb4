"""Roles an admin gave in capplan (the app's Audit page, `capplan roles`): read one, list them,
give or take one back, each change in the audit trail."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, delete, exists, select
from sqlalchemy.orm import Session

from db import audit
from db.engine import session_scope, write_transaction
from db.models import TeamRole
from team.mapping import identity
from team.roles import Action, Actor, Role


@dataclass(frozen=True, slots=True)
class GivenRole:
    """A person's stored role, who gave it and when (UTC)."""

    person: str
    role: Role
    given_by: str
    given_at: datetime


def stored_role(engine: Engine, person: str) -> tuple[Role | None, bool]:
    """The role stored for person (None when none), and whether any role is stored at all."""
    with session_scope(engine, write=False) as session:
        found = session.scalar(select(TeamRole.role).where(TeamRole.person == identity(person)))
        any_set = bool(session.scalar(select(exists().where(TeamRole.id.isnot(None)))))
    return (Role(found) if found else None), any_set


def list_roles(engine: Engine) -> list[GivenRole]:
    """Every stored role, by person."""
    with session_scope(engine, write=False) as session:
        rows = session.scalars(select(TeamRole).order_by(TeamRole.person)).all()
        return [GivenRole(r.person, Role(r.role), r.given_by, r.given_at) for r in rows]


def set_role(engine: Engine, person: str, role: Role | None, *, actor: Actor) -> GivenRole | None:
    """Give person a role (None: take their stored role back), as an admin; recorded."""
    actor.require(Action.MANAGE_ROLES)
    name = identity(person)

    def change(session: Session) -> GivenRole | None:
        row = session.scalar(select(TeamRole).where(TeamRole.person == name).with_for_update())
        before = row.role if row is not None else None
        now = datetime.now(UTC)
        given: GivenRole | None = None
        if role is None:
            session.execute(delete(TeamRole).where(TeamRole.person == name))
        elif row is None:
            session.add(TeamRole(person=name, role=role.value, given_by=actor.name, given_at=now))
            given = GivenRole(name, role, actor.name, now)
        else:
            row.role, row.given_by, row.given_at = role.value, actor.name, now
            given = GivenRole(name, role, actor.name, now)
        after = role.value if role is not None else None
        said = f"{name}: {before or 'no stored role'} -> {after or 'no stored role'}"
        audit.record(session, actor, ("role", "changed", f"role of {name}"), (before, after), said)
        return given

    return write_transaction(engine, change)
