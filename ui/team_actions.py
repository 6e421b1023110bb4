"""The team writes and reads the pages make through the store: undo a delete, undo a price
change, give a role, the audit trail and the trash; each as this session's actor (ui/resources)."""

from __future__ import annotations

from datetime import datetime

import streamlit as st

from team.roles import Role
from ui import resources as res
from workflows import history, team
from workflows.store import PlanRecord
from workflows.team import AuditFilter, AuditRecord, BasisNow, GivenRole, TrashItem, TrashKind


def undo_delete(url: str, kind: TrashKind, key: str) -> str:
    """Bring a run, scenario or model back from the trash."""
    said = team.undo_delete(res.store_engine(url), kind, key, actor=res.actor(url))
    res.bump_version(url)
    return said


def undo_price_change(url: str, entry_id: int) -> int:
    """Put back the price catalog a recorded change replaced."""
    count = team.undo_price_change(res.store_engine(url), entry_id, actor=res.actor(url))
    res.bump_version(url)
    return count


def set_role(url: str, person: str, role: Role | None) -> GivenRole | None:
    """Give a person a role (None: take the stored one back)."""
    given = team.set_role(res.store_engine(url), person, role, actor=res.actor(url))
    res.bump_version(url)
    return given


def trash(url: str, version: int) -> list[TrashItem]:
    """What is in the trash now."""
    return _trash(url, version)


@st.cache_data(show_spinner=False, ttl=60)
def _trash(url: str, version: int) -> list[TrashItem]:
    return team.list_trash(res.store_engine(url))


def audit(url: str, version: int, filters: AuditFilter) -> list[AuditRecord]:
    """The trail's entries matching filters, newest first (read fresh: another person's change
    shows on the next rerun)."""
    del version  # not cached: the trail grows from other sessions and the CLI
    return team.audit_entries(res.store_engine(url), filters)


def choices(url: str) -> tuple[list[str], list[str]]:
    """The people and kinds the trail holds (the filters' choices)."""
    return team.audit_people_and_kinds(res.store_engine(url))


def roles(url: str) -> list[GivenRole]:
    """The roles given in capplan."""
    return team.list_roles(res.store_engine(url))


def basis_now(url: str, record: PlanRecord) -> BasisNow:
    """How the runs and prices a recorded plan rested on stand now (read fresh)."""
    return history.basis_now(res.store_engine(url), record)


def day_bounds(first: datetime, last: datetime) -> tuple[datetime, datetime]:
    """A day range as the trail filters it: from the first day's start to the last day's end."""
    return first.replace(hour=0, minute=0, second=0), last.replace(hour=23, minute=59, second=59)
