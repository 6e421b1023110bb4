"""The roles and how a role is decided (team/): each action's least role, the refusal's words,
owners, the operator's mapping and groups, the command line's login."""

from __future__ import annotations

import pytest

from errors import InputError, PermissionDeniedError
from team.mapping import (
    NO_MAPPING,
    command_line_actor,
    identity,
    role_mapping,
    signed_in_actor,
)
from team.roles import LEAST_ROLE, Action, Actor, Role

VIEWER = Actor("vic@example.com", Role.VIEWER, "test")
PLANNER = Actor("pat@example.com", Role.PLANNER, "test")
ADMIN = Actor("ada@example.com", Role.ADMIN, "test")


@pytest.mark.parametrize("action", list(Action))
def test_a_viewer_may_change_nothing_and_an_admin_everything(action: Action) -> None:
    assert not VIEWER.may(action)
    assert ADMIN.may(action)
    with pytest.raises(PermissionDeniedError, match=f"vic@example.com is a viewer .* may {action}"):
        VIEWER.require(action)


def test_a_planner_imports_saves_records_and_adds_but_deletes_and_prices_nothing() -> None:
    allowed = {a for a in Action if PLANNER.may(a)}
    assert allowed == {
        Action.IMPORT_RUNS,
        Action.SAVE_SCENARIOS,
        Action.RECORD_PLANS,
        Action.ADD_MODELS,
    }
    with pytest.raises(PermissionDeniedError, match="only an admin may delete runs"):
        PLANNER.require(Action.DELETE_RUNS)
    assert LEAST_ROLE[Action.CHANGE_PRICES] is Role.ADMIN


def test_only_its_owner_or_an_admin_may_change_a_scenario() -> None:
    assert PLANNER.may_change("pat@example.com")
    assert not PLANNER.may_change("ada@example.com")
    assert not PLANNER.may_change(None)  # made before owners were kept: an admin's
    assert ADMIN.may_change("pat@example.com") and ADMIN.may_change(None)
    assert not VIEWER.may_change("vic@example.com")  # a viewer owns nothing it could change
    with pytest.raises(PermissionDeniedError, match=r"'q3' is ada@example\.com's; only its owner"):
        PLANNER.require_change("ada@example.com", "'q3'")


def test_the_operators_mapping_names_people_and_groups_and_the_higher_role_wins() -> None:
    mapping = role_mapping(
        {
            "admins": ["Ada@Example.com"],
            "planners": ["pat@example.com", "ada@example.com"],
            "planner_groups": ["capplan-planners"],
            "groups_claim": "roles",
        }
    )
    ada = signed_in_actor({"email": "ADA@example.com"}, mapping, None)
    assert (ada.name, ada.role) == ("ada@example.com", Role.ADMIN)
    assert ada.via == "the operator's mapping"
    grouped = signed_in_actor({"email": "g@x.org", "roles": ["capplan-planners"]}, mapping, None)
    assert (grouped.role, grouped.via) == (Role.PLANNER, "group capplan-planners")
    nobody = signed_in_actor({"email": "n@x.org"}, mapping, None)
    assert nobody.role is Role.VIEWER
    # A role stored by an admin raises a person above the mapping, never below it.
    raised = signed_in_actor({"email": "n@x.org"}, mapping, Role.ADMIN)
    assert raised.role is Role.ADMIN
    floor = signed_in_actor({"email": "ada@example.com"}, mapping, Role.VIEWER)
    assert floor.role is Role.ADMIN


def test_a_subject_without_an_email_is_named_by_its_subject() -> None:
    assert signed_in_actor({"sub": "12345"}, NO_MAPPING, None).name == "12345"
    with pytest.raises(InputError, match="neither an e-mail address nor a subject"):
        signed_in_actor({"name": "no id"}, NO_MAPPING, None)


@pytest.mark.parametrize(
    ("section", "field"),
    [
        ({"admin": ["a@x"]}, "roles.admin"),
        ({"admins": "a@x"}, "roles.admins"),
        ({"default": "owner"}, "roles.default"),
        ({"groups_claim": 3}, "roles.groups_claim"),
    ],
)
def test_a_bad_mapping_is_refused_naming_its_key(section: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as caught:
        role_mapping(section)
    assert caught.value.field == field


def test_the_command_line_is_the_login_with_its_stored_role() -> None:
    alone = command_line_actor("Root", None, roles_set=False)
    assert (alone.name, alone.role) == ("root", Role.ADMIN)
    assert command_line_actor("root", None, roles_set=True).role is Role.VIEWER
    assert command_line_actor("root", Role.PLANNER, roles_set=True).role is Role.PLANNER


def test_an_identity_is_trimmed_lower_case_and_printable() -> None:
    assert identity("  Ada@Example.COM ") == "ada@example.com"
    for bad in ("", "   ", "a\x1bb", "x" * 321):
        with pytest.raises(InputError):
            identity(bad)
