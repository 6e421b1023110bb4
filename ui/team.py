"""Who is using the app and what their role lets them do: the actor every write of the pages is
made as (ui/resources.py asks here, never the page), the role shown in the sidebar, and the line
a page shows in place of a control the role cannot use (docs/THREAT_MODEL.md)."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from errors import CapplanError
from team.mapping import role_mapping
from team.roles import LEAST_ROLE, LOCAL_ADMIN, Action, Actor
from ui.app_secrets import sign_in_configured
from ui.text import plain
from workflows.store import Engine
from workflows.team import app_actor


def current_actor(engine: Engine) -> Actor:
    """The person using this session: the local admin without sign-in, else the signed-in
    person with their role (the operator's [roles] mapping, their groups, a stored role)."""
    if not sign_in_configured():
        return LOCAL_ADMIN
    if not st.user.get("is_logged_in", False):
        raise CapplanError("sign in first: nobody is signed in")
    section = st.secrets.get("roles")
    mapping = role_mapping(section if isinstance(section, Mapping) else None)
    return app_actor(engine, dict(st.user.to_dict()), mapping)


def role_caption(actor: Actor) -> None:
    """'Role: planner (group capplan-planners)' in the sidebar, as plain text."""
    st.sidebar.caption(f"Role: {actor.role} ({plain(actor.via)})")


def refused_line(actor: Actor, action: Action) -> None:
    """Say in place of a control why it is not offered to this role."""
    least = LEAST_ROLE[action]
    st.caption(
        f"Your role ({actor.role}) cannot {action}: that needs {least}. Ask an admin of this "
        "capplan (Audit page: roles)."
    )
