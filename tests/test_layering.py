"""The arrows of the layout (docs/architecture.md), enforced on every module's imports."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
import typing
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (
    "hardware",
    "planner",
    "measurements",
    "db",
    "reports",
    "workflows",
    "ui",
    "cli",
    "team",
)
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


# The arrows (docs/architecture.md): errors <- measurements <- planner <- reports <- workflows
# <- cli / ui <- app, with db beside planner (rows <-> RunFiles, scenarios, plan records; it plans
# nothing). Drawing, writing files and serving stay out of the pure planner.
RENDERING = {"plotly", "openpyxl", "weasyprint", "matplotlib", "pandas"}
SHELLS = {"ui", "cli", "app", "streamlit", "typer"}
STORE = {"sqlalchemy", "alembic"}
FORBIDDEN: dict[str, set[str]] = {
    # The GPU and price catalogs sit below planner, measurements and db, so all can read them.
    "hardware": {p for p in PACKAGES if p != "hardware"} | RENDERING | SHELLS | STORE,
    "errors": {*PACKAGES, *RENDERING, *SHELLS, *STORE},
    # Who may change what (roles, actors): pure, below db, workflows and the shells.
    "team": {p for p in PACKAGES if p != "team"} | RENDERING | SHELLS | STORE,
    "measurements": {"planner", "db", "reports", "workflows", *RENDERING, *SHELLS, *STORE},
    "planner": {"db", "reports", "workflows", "httpx", "aiohttp", *RENDERING, *SHELLS, *STORE},
    "db": {"planner", "reports", "workflows", *RENDERING, *SHELLS},
    "reports": {"db", "workflows", *SHELLS, *STORE},
    "workflows": {*SHELLS, *STORE},
    "ui": {"cli", "typer", "db", *STORE},
    "cli": {"ui", "app", "streamlit", "db", *STORE},
    "app": {"db", "planner", "measurements", "reports", "workflows", "cli", *STORE},
}


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_module_imports_follow_the_layering(path: Path) -> None:
    owner = _owner(path)
    bad = _imported_roots(path) & FORBIDDEN.get(owner, set())
    assert not bad, f"{path.relative_to(ROOT)} ({owner}) must not import {sorted(bad)}"


# The shells (cli/, ui/, app.py) call the use cases (workflows/), render with reports/, read the
# catalogs (hardware/) and name errors; of the planner and measurements they name only types and
# constants (a Plan, a Scenario, a probe's defaults), never a function that computes: planning,
# fitting, checking, parsing and storing go through workflows/. db/ they never touch.
CORE = ("planner", "measurements")
SHELL_OWNERS = ("ui", "cli", "app")


def _core_names(path: Path) -> list[tuple[str, str, int]]:
    """(module, name, line) of every name a module imports from the planner or measurements, and
    (module, "", line) for a whole module (`import planner.x`, `from planner.x import module`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[str, str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(
                (alias.name, "", node.lineno)
                for alias in node.names
                if alias.name.split(".")[0] in CORE
            )
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.split(".")[0] in CORE
        ):
            found.extend((node.module, alias.name, node.lineno) for alias in node.names)
    return found


def _is_type_or_constant(module: str, name: str) -> bool:
    owner = importlib.import_module(module)
    if not name or not hasattr(owner, name):
        return False  # a whole module (or a sub-module imported by name) is more than its types
    value = getattr(owner, name)
    if isinstance(value, type) or typing.get_origin(value) is not None:
        return True  # a class (dataclass, enum, pydantic model) or a typing alias (Literal[...])
    return not callable(value) and not inspect.ismodule(value)


SHELL_MODULES = [p for p in _modules() if _owner(p) in SHELL_OWNERS]


@pytest.mark.parametrize("path", SHELL_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_shells_call_use_cases_and_name_only_the_cores_types(path: Path) -> None:
    bad = [
        f"line {line}: {module}{'.' + name if name else ''}"
        for module, name, line in _core_names(path)
        if not _is_type_or_constant(module, name)
    ]
    assert not bad, (
        f"{path.relative_to(ROOT)} calls the core directly (go through workflows/): {bad}"
    )


def test_the_type_rule_tells_a_function_from_a_type() -> None:
    """The rule above, on names it must refuse and names it must let through."""
    assert not _is_type_or_constant("planner.fitting.fit", "fit_curve")
    assert not _is_type_or_constant("planner.curves", "workload_groups")
    assert not _is_type_or_constant("planner.inputs.scenario", "")
    assert _is_type_or_constant("planner.analysis.capacity", "Plan")
    assert _is_type_or_constant("planner.inputs.scenario", "DemandKind")
    assert _is_type_or_constant("planner.inputs.sla_targets", "SLA_TARGETS")


def test_streamlit_is_imported_only_by_app_and_ui() -> None:
    users = {str(p.relative_to(ROOT)) for p in _modules() if "streamlit" in _imported_roots(p)}
    assert users, "the app must use streamlit somewhere"
    assert all(u == "app.py" or u.startswith("ui/") for u in users), sorted(users)


def test_sqlalchemy_is_imported_only_by_db() -> None:
    users = {str(p.relative_to(ROOT)) for p in _modules() if "sqlalchemy" in _imported_roots(p)}
    assert users, "the store must use sqlalchemy"
    assert all(u.startswith("db/") for u in users), sorted(users)


def test_every_package_has_its_arrows() -> None:
    """A new top-level package must say what it may not import."""
    found = {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists() and p.name != "tests"}
    assert found <= set(FORBIDDEN), sorted(found - set(FORBIDDEN))


# A script prelude that makes importing the named libraries fail, as on a machine without them.
BLOCKER = """
import importlib, pkgutil, sys

BLOCKED = set(sys.argv[1].split(","))


class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is not installed (blocked by the layering test)")
        return None


sys.meta_path.insert(0, Blocker())
"""
IMPORT_EVERY_PLANNER_MODULE = """
import planner

for module in pkgutil.walk_packages(planner.__path__, "planner."):
    importlib.import_module(module.name)
print("ok")
"""
DRAWING = "plotly,openpyxl,matplotlib,weasyprint,pandas,streamlit"


def _blocked_run(script: str, blocked: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCKER + script, blocked],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_planner_imports_without_any_rendering_or_store_library() -> None:
    """Every planner module loads on a machine without plotly, openpyxl, matplotlib, weasyprint,
    pandas, streamlit or sqlalchemy (so tests/planner runs there too)."""

    done = _blocked_run(IMPORT_EVERY_PLANNER_MODULE, f"{DRAWING},sqlalchemy")
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


COLLECT_PLANNER_TESTS = """
import pytest

sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "tests/planner"]))
"""


def test_the_planner_tests_collect_without_any_rendering_library() -> None:
    """`pytest tests/planner` needs none of plotly, openpyxl, matplotlib, weasyprint, pandas or
    streamlit: collecting it (every test module imported) with them blocked succeeds."""
    done = _blocked_run(COLLECT_PLANNER_TESTS, DRAWING)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "tests collected" in done.stdout, done.stdout[-2000:]


# The planner's sub-packages, lowest first: a module imports from its own sub-package or a lower
# one, never a higher one (the serving model, engine/, answers curves, sizing and projection).
PLANNER_ORDER = ("curves", "inputs", "physics", "fitting", "engine", "sizing", "analysis")


def _planner_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        found.update(n.split(".")[1] for n in names if n.startswith("planner.") and "." in n)
    return found


def test_every_planner_module_lives_in_an_ordered_sub_package() -> None:
    loose = [p.name for p in (ROOT / "planner").glob("*.py") if p.name != "__init__.py"]
    assert not loose, f"planner/ keeps its modules in sub-packages: {sorted(loose)}"
    found = {p.name for p in (ROOT / "planner").iterdir() if (p / "__init__.py").exists()}
    assert found <= set(PLANNER_ORDER), sorted(found - set(PLANNER_ORDER))


@pytest.mark.parametrize(
    "path",
    sorted((ROOT / "planner").glob("*/**/*.py")),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_planner_sub_packages_import_downwards(path: Path) -> None:
    own = path.relative_to(ROOT / "planner").parts[0]
    level = PLANNER_ORDER.index(own)
    higher = {sub for sub in _planner_imports(path) if PLANNER_ORDER.index(sub) > level}
    assert not higher, f"{path.relative_to(ROOT)} ({own}) must not import planner.{sorted(higher)}"


# A model name becomes its identity once: where a curve key (planner.curves.load) or a scenario
# (planner.inputs.scenario) is built, where a typed or stored name meets them (identity, the
# config catalog, the model-choice and model-config use cases, a family left out of a pool).
# Everything else compares `CurveKey.model_id` and `Scenario.model_id` (issue 32).
CANONICAL_MODEL_CALLERS = {
    "planner/curves/load.py",
    "planner/inputs/scenario.py",
    "planner/physics/identity.py",
    "planner/physics/catalog.py",
    "planner/engine/transfer.py",
    "workflows/model_choices.py",
    "workflows/models.py",
}


def _calls_of(path: Path, name: str) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == name)
            or (isinstance(node.func, ast.Attribute) and node.func.attr == name)
        )
    ]


def test_a_model_name_is_made_canonical_only_where_keys_and_scenarios_are_built() -> None:
    found = {
        str(path.relative_to(ROOT)): lines
        for path in _modules()
        if (lines := _calls_of(path, "canonical_model"))
    }
    strays = {path: lines for path, lines in found.items() if path not in CANONICAL_MODEL_CALLERS}
    assert not strays, f"compare CurveKey.model_id / Scenario.model_id instead: {strays}"
    assert set(found) == CANONICAL_MODEL_CALLERS  # no stale entry: each still needs it
    assert sum(len(lines) for lines in found.values()) <= 20  # 38 in 12 modules before
