"""`capplan --help`, `capplan runs` and `capplan import` answer at once: they load no report,
plotting, fitting or probe library (the speed itself is measured in bench/bench_cli_startup.py).

Each command runs in a fresh interpreter, as the console script does, and the modules it loaded
are read back when it exits.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
C8 = ROOT / "tests" / "fixtures" / "vllm-cpu-real" / "c8.json"
# Libraries that draw, write reports, fit, serve the app or drive a live endpoint.
HEAVY_LIBRARIES = (
    "scipy",
    "plotly",
    "openpyxl",
    "matplotlib",
    "weasyprint",
    "pandas",
    "streamlit",
    "aiohttp",
    "httpx",
)
# capplan's own modules of the same kinds.
HEAVY_MODULES = (
    "planner.fitting.fit",
    "planner.analysis.capacity",
    "measurements.probe",
    "measurements.sim",
    "reports.",
)
# Light modules inside those packages: the report formats' names, the wording modules (names,
# JSON shapes) and the probe's defaults.
ALLOWED = frozenset(
    {
        "reports",
        "reports.formats",
        "reports.names",
        "reports.present",
        "measurements.probe",
        "measurements.probe.defaults",
    }
)
# --help loads neither the store nor the run-file models. (pydantic is not in this list: typer
# itself imports it to parse a subcommand's parameters.)
HELP_ALSO_FORBIDS = (
    "sqlalchemy",
    "alembic",
    "numpy",
    "db",
    "measurements.run_file",
    "measurements.importers",
)

LOADED_MODULES = """
import json, sys
from cli import main
code = 0
try:
    main(sys.argv[2:])
except SystemExit as exit:
    code = exit.code or 0
with open(sys.argv[1], "w", encoding="utf-8") as handle:
    json.dump({"code": code, "modules": sorted(sys.modules)}, handle)
"""


def loaded_by(tmp_path: Path, *args: str) -> set[str]:
    """The modules a fresh `capplan ARGS` had loaded when it finished (it must succeed)."""
    listing = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", LOADED_MODULES, str(listing), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(listing.read_text(encoding="utf-8"))
    assert result["code"] == 0, (args, done.stdout[-2000:], done.stderr[-2000:])
    return set(result["modules"])


def heavy(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """The modules that are one of `names` (a top-level library, or a capplan module or package
    prefix ending in '.')."""
    found = []
    for module in modules - ALLOWED:
        for name in names:
            if module == name.rstrip(".") or module.startswith(
                name if name.endswith(".") else f"{name}."
            ):
                found.append(module)
    return sorted(found)


def test_help_loads_no_store_planner_report_or_probe_code(tmp_path: Path) -> None:
    modules = loaded_by(tmp_path, "--help")
    assert "cli" in modules and "typer" in modules
    assert heavy(modules, HEAVY_LIBRARIES + HEAVY_MODULES + HELP_ALSO_FORBIDS) == []


@pytest.mark.parametrize("command", ["plan", "report", "probe", "import", "db"])
def test_a_commands_help_loads_none_of_its_work(tmp_path: Path, command: str) -> None:
    modules = loaded_by(tmp_path, command, "--help")
    assert heavy(modules, HEAVY_LIBRARIES + HEAVY_MODULES + HELP_ALSO_FORBIDS) == []


def test_runs_and_import_load_no_fitting_report_or_probe_code(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    imported = loaded_by(tmp_path, "import", str(C8), "--gpu", "H100-SXM-80GB", "--db", store)
    assert "measurements.importers" in imported  # it did import the file
    listed = loaded_by(tmp_path, "runs", "--db", store, "--json")
    assert "db.run_lists" in listed
    assert heavy(imported, HEAVY_LIBRARIES + HEAVY_MODULES) == []
    assert heavy(listed, HEAVY_LIBRARIES + HEAVY_MODULES) == []
