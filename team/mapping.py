"""How a signed-in person's role is decided: the operator's mapping (a `[roles]` section in the
app's secrets: people and identity-provider groups per role, and the role of everyone else), the
roles an admin stored in the store, whichever is higher; and who a person is on the command line.

The operator's word is a floor: an admin in the app can raise a person above it, never below it
(so the operator can always reach the store). Without sign-in the app has one local admin."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from errors import InputError
from team.roles import Actor, Role

MAX_IDENTITY_CHARS = 320  # an e-mail address at most (RFC 5321)


@dataclass(frozen=True, slots=True)
class RoleMapping:
    """The operator's mapping: people (identities, lower-cased) and groups per role, the claim
    that lists a person's groups, and the role of a person nothing names."""

    people: Mapping[str, Role]
    groups: Mapping[str, Role]
    groups_claim: str = "groups"
    default: Role = Role.VIEWER


NO_MAPPING = RoleMapping({}, {})


def role_mapping(section: Mapping[str, object] | None) -> RoleMapping:
    """The `[roles]` secrets section as a RoleMapping; InputError names a bad key or value."""
    if not section:
        return NO_MAPPING
    known = {"admins", "planners", "viewers", "admin_groups", "planner_groups", "viewer_groups"}
    known |= {"groups_claim", "default"}
    for key in section:
        if key not in known:
            raise InputError(f"unknown key; expected one of {sorted(known)}", field=f"roles.{key}")
    people: dict[str, Role] = {}
    groups: dict[str, Role] = {}
    for role in Role:  # viewer, planner, admin: a name listed twice keeps the higher role
        for name in _names(section, f"{role}s"):
            people[identity(name)] = role
        for name in _names(section, f"{role}_groups"):
            groups[name] = role
    claim = section.get("groups_claim", "groups")
    if not isinstance(claim, str) or not claim:
        raise InputError("must be a claim name", field="roles.groups_claim", value=claim)
    default = section.get("default", Role.VIEWER.value)
    if default not in {r.value for r in Role}:
        raise InputError("must be viewer, planner or admin", field="roles.default", value=default)
    return RoleMapping(people, groups, claim, Role(str(default)))


def _names(section: Mapping[str, object], key: str) -> list[str]:
    value = section.get(key, [])
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise InputError("must be a list of names", field=f"roles.{key}", value=value)
    return [str(v) for v in value]


def identity(name: str) -> str:
    """A person's identity as roles and owners key it: trimmed, lower-cased (e-mail addresses
    compare without case); InputError for an empty or over-long one."""
    clean = name.strip().lower()
    if not clean or len(clean) > MAX_IDENTITY_CHARS or not clean.isprintable():
        raise InputError(
            f"a person is named by 1 to {MAX_IDENTITY_CHARS} printable characters (an e-mail "
            "address or a login name)",
            field="person",
            value=name,
        )
    return clean


def signed_in_identity(claims: Mapping[str, object]) -> str:
    """Who the identity provider says this is: the e-mail address, else the subject."""
    for key in ("email", "sub"):
        value = claims.get(key)
        if isinstance(value, str) and value.strip():
            return identity(value)
    raise InputError("the identity provider gave neither an e-mail address nor a subject")


def signed_in_actor(
    claims: Mapping[str, object], mapping: RoleMapping, stored: Role | None
) -> Actor:
    """The signed-in person with the highest of: the operator's mapping (by name, then by the
    groups in the groups claim), the role stored for them, else the mapping's default."""
    name = signed_in_identity(claims)
    found: list[tuple[Role, str]] = []
    if (role := mapping.people.get(name)) is not None:
        found.append((role, "the operator's mapping"))
    for group in _claimed_groups(claims.get(mapping.groups_claim)):
        if (role := mapping.groups.get(group)) is not None:
            found.append((role, f"group {group}"))
    if stored is not None:
        found.append((stored, "a role an admin gave in capplan"))
    if not found:
        return Actor(name, mapping.default, "the role of everyone the mapping does not name")
    role, via = max(found, key=lambda pair: pair[0].rank)
    return Actor(name, role, via)


def _claimed_groups(value: object) -> Iterable[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)]
    return []


def command_line_actor(login: str, stored: Role | None, roles_set: bool) -> Actor:
    """Who runs the CLI: their login name, with the role stored for it. A store where nobody
    has a role yet is one person's (a laptop): that person is its admin. Once roles are set, a
    login without one is a viewer."""
    name = identity(login)
    if stored is not None:
        return Actor(name, stored, "a role an admin gave in capplan")
    if not roles_set:
        return Actor(name, Role.ADMIN, "no roles are set in this store: its one user is the admin")
    return Actor(name, Role.VIEWER, "no role given to this login in this store")
