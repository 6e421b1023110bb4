"""The three roles and what each may do. Every write of the store (db/) takes the Actor doing it
and calls `require` inside its transaction, so the CLI and every page obey the same table; the
pages also ask `may` to leave out a control the role cannot use."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from errors import PermissionDeniedError


class Role(StrEnum):
    """viewer < planner < admin: each may do all a lower role may."""

    VIEWER = "viewer"
    PLANNER = "planner"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        """0 viewer, 1 planner, 2 admin."""
        return _RANKS[self]


_RANKS = {Role.VIEWER: 0, Role.PLANNER: 1, Role.ADMIN: 2}


class Action(StrEnum):
    """A change to the store, worded as what is refused ("may not <action>")."""

    IMPORT_RUNS = "import or probe runs"
    DELETE_RUNS = "delete runs"
    CHANGE_PRICES = "change or restore the price catalog"
    SAVE_SCENARIOS = "save scenarios"
    CHANGE_OTHERS_SCENARIOS = "replace or delete another person's scenario"
    RECORD_PLANS = "record plans"
    ADD_MODELS = "add models"
    REMOVE_MODELS = "remove models"
    RESTORE_BACKUPS = "restore backups"
    MANAGE_ROLES = "manage roles"
    PURGE_TRASH = "purge the trash"


# The least role that may do each action (viewer: reads, plans and exports only).
LEAST_ROLE: dict[Action, Role] = {
    Action.IMPORT_RUNS: Role.PLANNER,
    Action.SAVE_SCENARIOS: Role.PLANNER,
    Action.RECORD_PLANS: Role.PLANNER,
    Action.ADD_MODELS: Role.PLANNER,
    Action.DELETE_RUNS: Role.ADMIN,
    Action.CHANGE_PRICES: Role.ADMIN,
    Action.CHANGE_OTHERS_SCENARIOS: Role.ADMIN,
    Action.REMOVE_MODELS: Role.ADMIN,
    Action.RESTORE_BACKUPS: Role.ADMIN,
    Action.MANAGE_ROLES: Role.ADMIN,
    Action.PURGE_TRASH: Role.ADMIN,
}


@dataclass(frozen=True, slots=True)
class Actor:
    """The person doing something: their identity (the e-mail address the identity provider
    gave, or a login name on the command line), their role and how it was decided."""

    name: str
    role: Role
    via: str

    def may(self, action: Action) -> bool:
        """Whether this role allows the action."""
        return self.role.rank >= LEAST_ROLE[action].rank

    def require(self, action: Action) -> None:
        """PermissionDeniedError unless this role allows the action."""
        if not self.may(action):
            least = LEAST_ROLE[action]
            raise PermissionDeniedError(
                f"{self.name} is a {self.role} ({self.via}): only {_article(least)} {least} may "
                f"{action}"
            )

    def may_change(self, owner: str | None) -> bool:
        """Whether this person may replace or delete something `owner` made: its owner (a
        planner or above) or an admin. Something nobody owns (made before owners were kept)
        is an admin's."""
        if self.may(Action.CHANGE_OTHERS_SCENARIOS):
            return True
        return owner is not None and owner == self.name and self.may(Action.SAVE_SCENARIOS)

    def require_change(self, owner: str | None, what: str) -> None:
        """PermissionDeniedError unless `may_change(owner)`, naming the thing and its owner."""
        if not self.may_change(owner):
            whose = f"{owner}'s" if owner else "nobody's (made before owners were kept)"
            raise PermissionDeniedError(
                f"{self.name} is a {self.role} ({self.via}): {what} is {whose}; only its owner "
                "or an admin may replace or delete it"
            )


def _article(role: Role) -> str:
    return "an" if role is Role.ADMIN else "a"


# The app without sign-in (a laptop): one person, who is the admin.
LOCAL_ADMIN = Actor("local user", Role.ADMIN, "no sign-in: the one local user is the admin")
# capplan itself: demo data in an empty store, the purge of what has been in the trash too long.
SYSTEM = Actor("capplan", Role.ADMIN, "capplan itself")
