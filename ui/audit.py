"""Audit page: every change to the store (who, when, what, before and after), filtered by person,
kind and date; the trash with its undo; a price change's undo; the roles an admin gives. Nothing
here edits the trail: it is appended to by the changes themselves."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import streamlit as st

from team.roles import Action, Actor, Role
from ui import resources as res
from ui import team_actions as ta
from ui.team import refused_line, role_caption
from ui.text import plain
from workflows.team import AuditFilter, AuditRecord, TrashItem

EVERYONE, EVERY_KIND = "everyone", "every kind"
ROLE_CHOICES = ("viewer", "planner", "admin", "none (take the stored role back)")


def _done(message: str) -> None:
    st.session_state["audit_flash"] = message
    st.rerun()


def _trail(url: str, actor: Actor) -> None:
    st.subheader("Changes")
    people, kinds = ta.choices(url)
    who, kind, days = st.columns([2, 1, 2])
    person = who.selectbox("Person", [EVERYONE, *people], key="audit_person")
    picked_kind = kind.selectbox("Kind", [EVERY_KIND, *kinds], key="audit_kind")
    today = datetime.now(UTC).date()
    span = days.date_input("Dates (UTC)", (today - timedelta(days=30), today), key="audit_dates")
    first, last = _span(span, today)
    since, until = ta.day_bounds(_utc(first), _utc(last))
    filters = AuditFilter(
        None if person == EVERYONE else person,
        None if picked_kind == EVERY_KIND else picked_kind,
        since,
        until,
    )
    entries = ta.audit(url, res.store_version(url), filters)
    st.caption(f"{len(entries)} changes, newest first")
    st.dataframe([_row(entry) for entry in entries], hide_index=True)
    if entries:
        _detail(url, entries, actor)


def _span(span: object, today: date) -> tuple[date, date]:
    if isinstance(span, tuple | list) and len(span) == 2:
        return span[0], span[1]
    if isinstance(span, tuple | list) and len(span) == 1:
        return span[0], span[0]
    return (span, span) if isinstance(span, date) else (today, today)


def _utc(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _row(entry: AuditRecord) -> dict[str, object]:
    return {
        "entry": entry.entry_id,
        "when (UTC)": entry.at.strftime("%Y-%m-%d %H:%M:%S"),
        "who": entry.actor,
        "role": entry.role,
        "kind": entry.kind,
        "what": entry.action,
        "target": entry.target,
        "summary": entry.summary,
    }


def _detail(url: str, entries: list[AuditRecord], actor: Actor) -> None:
    by_id = {entry.entry_id: entry for entry in entries}
    picked = st.selectbox("Before and after of entry", list(by_id), key="audit_entry")
    entry = by_id[picked]
    before, after = st.columns(2)
    before.markdown("**Before**")
    before.json(entry.before if entry.before is not None else {}, expanded=False)
    after.markdown("**After**")
    after.json(entry.after if entry.after is not None else {}, expanded=False)
    if entry.kind == "prices" and isinstance(entry.before, list) and entry.before:
        if not actor.may(Action.CHANGE_PRICES):
            refused_line(actor, Action.CHANGE_PRICES)
        elif st.button(
            f"Undo this price change: put back the {len(entry.before)} prices before",
            key="audit_undo_prices",
        ):
            count = res.guarded(lambda: ta.undo_price_change(url, entry.entry_id))
            if count is not None:
                _done(f"price catalog put back as before entry {entry.entry_id}: {count} prices")


def _trash(url: str, actor: Actor) -> None:
    st.subheader("Trash")
    items = ta.trash(url, res.store_version(url))
    if not items:
        st.caption("Nothing deleted is waiting in the trash.")
        return
    st.dataframe([_trash_row(item) for item in items], hide_index=True)
    mine = [item for item in items if _may_undo(actor, item)]
    if not mine:
        st.caption(f"Your role ({actor.role}) cannot bring any of these back.")
        return
    labels = {f"{item.kind} {item.key}": item for item in mine}
    chosen = st.selectbox("Bring back", list(labels), key="trash_pick")
    if st.button("Undo the delete", key="trash_undo"):
        item = labels[chosen]
        if res.guarded(lambda: ta.undo_delete(url, item.kind, item.key)) is not None:
            _done(f"{chosen} is back")


def _may_undo(actor: Actor, item: TrashItem) -> bool:
    if item.kind == "scenario":
        return actor.may_change(item.owner)
    return actor.may(Action.DELETE_RUNS if item.kind == "run" else Action.REMOVE_MODELS)


def _trash_row(item: TrashItem) -> dict[str, object]:
    return {
        "kind": item.kind,
        "which": item.key,
        "what": item.label,
        "deleted by": item.deleted_by,
        "deleted (UTC)": item.deleted_at.strftime("%Y-%m-%d %H:%M"),
        "purged after (UTC)": item.purge_at.strftime("%Y-%m-%d %H:%M"),
    }


def _roles(url: str, actor: Actor) -> None:
    st.subheader("Roles")
    given = ta.roles(url)
    st.caption(
        "Roles given here add to the operator's mapping ([roles] in the app's secrets): a person "
        "has the higher of the two. Without a role a signed-in person has the mapping's default."
    )
    st.dataframe(
        [
            {
                "person": g.person,
                "role": g.role.value,
                "given by": g.given_by,
                "given (UTC)": g.given_at.strftime("%Y-%m-%d %H:%M"),
            }
            for g in given
        ],
        hide_index=True,
    )
    if not actor.may(Action.MANAGE_ROLES):
        refused_line(actor, Action.MANAGE_ROLES)
        return
    person_column, role_column = st.columns(2)
    person = person_column.text_input("Person (e-mail address)", key="role_person")
    choice = role_column.selectbox("Role", ROLE_CHOICES, key="role_choice")
    if st.button("Set the role", key="role_set") and person.strip():
        role = None if choice.startswith("none") else Role(choice)
        if res.guarded(lambda: (ta.set_role(url, person, role), True)[1]):
            _done(f"role of {person.strip().lower()}: {role or 'none stored'}")


url = res.open_store()
actor = res.actor(url)
role_caption(actor)
st.title("Audit")
if flash := st.session_state.pop("audit_flash", None):
    st.success(plain(flash))
st.caption(
    f"You are {plain(actor.name)}, {actor.role} ({plain(actor.via)}). Every change to runs, "
    "prices, scenarios, models, roles and backups is recorded here in the same transaction as "
    "the change."
)
_trail(url, actor)
_trash(url, actor)
_roles(url, actor)
