"""The team store from the command line, on the backend under test: who you are is your login,
your role the one the store gives it (the first role given makes its giver the admin); a viewer
changes nothing, a planner imports but deletes no run and touches no price, an admin does both
and undoes a delete; every change is in `capplan audit` with its before and after."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from tests.stores import Stores

ROOT = Path(__file__).resolve().parents[2]
C8 = ROOT / "tests" / "fixtures" / "vllm-cpu-real" / "c8.json"
runner = CliRunner()


@pytest.fixture
def db(stores: Stores) -> str:
    return stores.demo("cli_team")


def _as(login: str, args: list[str], db: str) -> tuple[int, str]:
    result = runner.invoke(app, [*args, "--db", db], env={"LOGNAME": login, "USER": login})
    return result.exit_code, result.stdout + result.stderr


def _audit(db: str, *extra: str) -> list[dict[str, object]]:
    code, text = _as("anyone", ["audit", "--json", *extra], db)
    assert code == 0, text
    entries = json.loads(text)
    assert isinstance(entries, list)
    return entries


def test_each_role_on_the_command_line(db: str) -> None:
    # A store nobody has a role in is its one user's: ops gives the first roles and so is admin.
    assert _as("ops", ["roles", "set", "vic", "viewer"], db)[0] == 0
    assert _as("ops", ["roles", "set", "pat", "planner"], db)[0] == 0
    code, text = _as("ops", ["roles", "list"], db)
    assert code == 0 and "you: ops, admin" in text and "pat: planner" in text
    trail = len(_audit(db))

    for args in (
        ["import", str(C8)],
        ["delete", "run", "1"],
        ["demo-data", "--reset-prices"],
        ["roles", "set", "vic", "admin"],
        ["trash", "purge"],
    ):
        code, text = _as("vic", args, db)
        assert code == 2 and "vic is a viewer" in text, (args, text)
    assert len(_audit(db)) == trail  # nothing changed, nothing recorded

    code, text = _as("pat", ["import", str(C8), "--json"], db)
    assert code == 0, text
    run_id = json.loads(text)[0]["run_id"]
    for args, words in (
        (["delete", "run", str(run_id)], "only an admin may delete runs"),
        (["demo-data", "--reset-prices"], "only an admin may change or restore the price"),
        (["roles", "set", "pat", "admin"], "only an admin may manage roles"),
    ):
        code, text = _as("pat", args, db)
        assert code == 2 and words in text, (args, text)

    code, text = _as("ops", ["delete", "run", str(run_id)], db)
    assert code == 0 and "in the trash" in text, text
    code, text = _as("ops", ["trash", "list", "--json"], db)
    assert [(i["kind"], i["key"], i["deleted_by"]) for i in json.loads(text)] == [
        ("run", str(run_id), "ops")
    ]
    code, text = _as("ops", ["runs", "--json", "--limit", "1000"], db)
    assert run_id not in [r["run_id"] for r in json.loads(text)]
    code, text = _as("ops", ["undo", "run", str(run_id)], db)
    assert code == 0 and "brought back" in text, text
    code, text = _as("ops", ["runs", "--json", "--limit", "1000"], db)
    assert run_id in [r["run_id"] for r in json.loads(text)]

    mine = _audit(db, "--kind", "run", "--person", "pat")
    assert [(e["actor"], e["role"], e["action"]) for e in mine] == [("pat", "planner", "imported")]
    assert mine[0]["before"] is None and mine[0]["after"]["origin_file"].endswith("c8.json")
    ops = [(e["action"], e["target"]) for e in _audit(db, "--person", "ops")]
    assert ops[:2] == [("undeleted", f"run {run_id}"), ("deleted", f"run {run_id}")]
    deleted = next(e for e in _audit(db, "--kind", "run") if e["action"] == "deleted")
    assert deleted["before"]["content_sha256"] and deleted["after"] is None
    roles = _audit(db, "--kind", "role")
    assert [(e["target"], e["after"]) for e in roles][::-1] == [
        ("role of ops", "admin"),
        ("role of vic", "viewer"),
        ("role of pat", "planner"),
    ]


def test_an_operator_is_an_admin_whatever_the_store_says(db: str) -> None:
    assert _as("ops", ["roles", "set", "vic", "viewer"], db)[0] == 0
    _, text = _as("vic", ["roles", "list"], db)
    assert "you: vic, viewer" in text
    result = runner.invoke(
        app,
        ["roles", "list", "--db", db],
        env={"LOGNAME": "vic", "USER": "vic", "CAPPLAN_OPERATORS": "vic"},
    )
    assert "you: vic, admin (an operator (CAPPLAN_OPERATORS))" in result.stdout


def test_the_last_admin_cannot_be_taken_away(db: str) -> None:
    assert _as("ops", ["roles", "set", "vic", "viewer"], db)[0] == 0
    code, text = _as("ops", ["roles", "set", "ops", "planner"], db)
    assert code == 2 and "ops is the store's last admin" in text
    assert _as("ops", ["roles", "set", "ann", "admin"], db)[0] == 0
    assert _as("ops", ["roles", "set", "ops", "none"], db)[0] == 0
