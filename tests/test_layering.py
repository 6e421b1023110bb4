"""The arrows of DESIGN.md's layout, enforced on every module's imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("planner", "measurements", "db", "ui", "cli", "workflows")
TOP_MODULES = ("app.py", "errors.py")


def _modules() -> list[Path]:
    files = [ROOT / name for name in TOP_MODULES]
    for package in PACKAGES:
        files.extend(p for p in (ROOT / package).rglob("*.py") if "versions" not in p.parts)
    return files


def _imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def _owner(path: Path) -> str:
    rel = path.relative_to(ROOT)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


FORBIDDEN: dict[str, set[str]] = {
    "planner": {"db", "ui", "cli", "app", "streamlit", "sqlalchemy", "alembic", "httpx"},
    "measurements": {"planner", "db", "ui", "cli", "app", "streamlit", "sqlalchemy", "alembic"},
    "db": {"ui", "cli", "app", "streamlit"},
    "ui": {"cli", "sqlalchemy", "alembic"},
    "errors": {"planner", "measurements", "db", "ui", "cli", "streamlit", "sqlalchemy"},
    "cli": {"streamlit", "sqlalchemy", "alembic", "ui"},
    "workflows": {"ui", "cli", "app", "streamlit", "typer"},
    "app": {"sqlalchemy", "alembic", "db", "planner", "measurements"},
}


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_module_imports_follow_the_layering(path: Path) -> None:
    owner = _owner(path)
    bad = _imported_roots(path) & FORBIDDEN.get(owner, set())
    assert not bad, f"{path.relative_to(ROOT)} ({owner}) must not import {sorted(bad)}"


def test_streamlit_is_imported_only_by_app_and_ui() -> None:
    users = {str(p.relative_to(ROOT)) for p in _modules() if "streamlit" in _imported_roots(p)}
    assert users, "the app must use streamlit somewhere"
    assert all(u == "app.py" or u.startswith("ui/") for u in users), sorted(users)


def test_sqlalchemy_is_imported_only_by_db() -> None:
    users = {str(p.relative_to(ROOT)) for p in _modules() if "sqlalchemy" in _imported_roots(p)}
    assert users, "the store must use sqlalchemy"
    assert all(u.startswith("db/") for u in users), sorted(users)
