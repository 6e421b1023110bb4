"""The team use cases the shells call: who is acting (on the command line, in the app), the audit
trail, the trash and its undo, and the roles an admin gives. Every change itself checks the
actor's role in its own transaction (db/); these only decide who the actor is and read back."""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping
from datetime import UTC, datetime

from db.audit import AuditFilter, AuditRecord, audit_entries, audit_people_and_kinds
from db.engine import Engine, current_revision
from db.plan_basis import BasisNow
from db.team_roles import GivenRole, list_roles, set_role, stored_role
from db.trash import (
    TRASH_KINDS,
    TrashItem,
    TrashKind,
    list_trash,
    purge_trash,
    trash_days,
    undo_delete,
    undo_price_change,
)
from errors import InputError
from team.mapping import RoleMapping, command_line_actor, identity, signed_in_actor
from team.roles import SYSTEM, Actor, Role

__all__ = [
    "TRASH_KINDS",
    "AuditFilter",
    "AuditRecord",
    "BasisNow",
    "GivenRole",
    "TrashItem",
    "TrashKind",
    "app_actor",
    "audit_entries",
    "audit_people_and_kinds",
    "cli_actor",
    "list_roles",
    "list_trash",
    "purge_due",
    "purge_trash",
    "restore_actor",
    "role_named",
    "set_role",
    "trash_days",
    "undo_delete",
    "undo_price_change",
]

OPERATORS_ENV = "CAPPLAN_OPERATORS"


def cli_actor(engine: Engine) -> Actor:
    """Who runs this command: the login name, with the role stored for it in this store (all of
    a store without roles is its one user's); a login listed in $CAPPLAN_OPERATORS (the
    operator's, who holds the database credentials) is an admin."""
    login = identity(getpass.getuser())
    operators = {identity(n) for n in os.environ.get(OPERATORS_ENV, "").split(",") if n.strip()}
    if login in operators:
        return Actor(login, Role.ADMIN, f"an operator ({OPERATORS_ENV})")
    stored, any_set = stored_role(engine, login)
    return command_line_actor(login, stored, any_set)


def restore_actor(url: str) -> Actor:
    """Who restores a backup into the store at url: in a database without capplan's schema yet
    (a new store) its one user, the admin, without touching it; else as cli_actor."""
    if current_revision(url) is None:
        login = identity(getpass.getuser())
        return Actor(login, Role.ADMIN, "a new store: its one user is the admin")
    from workflows.store import open_store  # noqa: PLC0415 - workflows.store imports this module

    return cli_actor(open_store(url))


def app_actor(engine: Engine, claims: Mapping[str, object], mapping: RoleMapping) -> Actor:
    """The signed-in person and their role (team.mapping.signed_in_actor)."""
    name = claims.get("email") or claims.get("sub")
    stored = stored_role(engine, str(name))[0] if isinstance(name, str) and name else None
    return signed_in_actor(claims, mapping, stored)


def role_named(text: str | None) -> Role | None:
    """'viewer', 'planner', 'admin' as a Role; 'none' (or None) takes a stored role back."""
    if text is None or text.strip().lower() in ("", "none"):
        return None
    try:
        return Role(text.strip().lower())
    except ValueError as exc:
        raise InputError(
            "must be viewer, planner, admin or none", field="role", value=text
        ) from exc


def purge_due(engine: Engine) -> list[str]:
    """Purge what has been in the trash past its time, as capplan itself (recorded); nothing is
    written when nothing is due."""
    now = datetime.now(UTC)
    if not any(item.purge_at <= now for item in list_trash(engine)):
        return []
    return purge_trash(engine, actor=SYSTEM, now=now)
