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
from errors import InputError
from team.mapping import identity
from team.roles import SYSTEM, Action, Actor, Role


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
        _keep_an_admin(session, actor, name, role)
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


def _keep_an_admin(session: Session, actor: Actor, person: str, role: Role | None) -> None:
    """The first role given in a store also makes the admin giving it a stored admin (else the
    command line's one user would turn viewer at once); a change that would leave the stored
    roles without an admin is refused."""
    rows = session.execute(select(TeamRole.person, TeamRole.role)).all()
    stored = {str(person): str(role) for person, role in rows}
    if not stored and actor.name not in {person, SYSTEM.name}:
        now = datetime.now(UTC)
        session.add(TeamRole(person=actor.name, role="admin", given_by=actor.name, given_at=now))
        said = f"{actor.name}: admin, as the first role given in this store"
        change = ("role", "changed", f"role of {actor.name}")
        audit.record(session, actor, change, (None, "admin"), said)
        return
    admins = {p for p, r in stored.items() if r == Role.ADMIN.value}
    if admins and admins <= {person} and role is not Role.ADMIN:
        raise InputError(
            f"{person} is the store's last admin: give another person admin first (an operator "
            "in CAPPLAN_OPERATORS or the app's [roles] mapping is one too)",
            field="role",
            value=role.value if role else "none",
        )
