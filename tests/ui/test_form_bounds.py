"""Every numeric form field of the app states its range: each `number_input` in ui/ has a
max_value (as a keyword or the third argument), so no field takes 1e308."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.hostile

UI = Path(__file__).resolve().parents[2] / "ui"


def _number_inputs() -> list[tuple[str, ast.Call]]:
    found = []
    for path in sorted(UI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            func = node.func if isinstance(node, ast.Call) else None
            if isinstance(func, ast.Attribute) and func.attr == "number_input":
                found.append((f"{path.name}:{node.lineno}", node))  # type: ignore[union-attr]
    return found


def test_every_number_input_has_a_max_value() -> None:
    fields = _number_inputs()
    assert len(fields) >= 15  # the Plan, Probe, Runs and upload forms
    unbounded = [
        where
        for where, call in fields
        if len(call.args) < 3 and "max_value" not in {k.arg for k in call.keywords}
    ]
    assert not unbounded, unbounded
