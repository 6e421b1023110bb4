"""A demo-data store built once per session and copied into each test's tmp_path (CAPPLAN_DB)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from db.engine import make_engine, upgrade
from db.seed import load_demo_data

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
FIXTURES = ROOT / "tests" / "fixtures"
# The first run of a page builds curves and fits every stored run: well over AppTest's 3 s default.
RUN_TIMEOUT_S = 60


@pytest.fixture(scope="session")
def demo_store_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file holding the migrated schema and the demo runs and prices."""
    path = tmp_path_factory.mktemp("demo-store") / "capplan.db"
    url = f"sqlite:///{path}"
    upgrade(url)
    engine = make_engine(url)
    load_demo_data(engine)
    engine.dispose()  # closes the WAL so the single file can be copied
    return path


@pytest.fixture
def store_url(demo_store_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A private copy of the demo store for one test, announced through CAPPLAN_DB."""
    path = tmp_path / "capplan.db"
    shutil.copyfile(demo_store_file, path)
    url = f"sqlite:///{path}"
    monkeypatch.setenv("CAPPLAN_DB", url)
    return url
