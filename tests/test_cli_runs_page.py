"""`capplan runs` lists a page at a time with filters and the total, on the backend under test."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli import app
from db.engine import make_engine
from db.repository import save_runs
from team.roles import SYSTEM
from tests.db.conftest import team_run
from tests.stores import Stores

runner = CliRunner()


@pytest.fixture(scope="module")
def db(stores: Stores) -> tuple[str, list[int]]:
    """A store of 24 runs (engines alternate, GPUs cycle, runs 20+ of another model)."""
    url = stores.migrated("runs_page")
    engine = make_engine(url)
    ids = [
        result.run_id
        for result in save_runs(engine, [team_run(i) for i in range(24)], actor=SYSTEM)
    ]
    engine.dispose()
    return url, ids


def _ids(url: str, *args: str) -> list[int]:
    result = runner.invoke(app, ["runs", "--json", "--db", url, *args])
    assert result.exit_code == 0, result.output
    return [run["run_id"] for run in json.loads(result.stdout)]


def test_json_pages_are_the_runs_in_id_order(db: tuple[str, list[int]]) -> None:
    url, ids = db
    assert _ids(url) == ids
    assert _ids(url, "--limit", "10") == ids[:10]
    assert _ids(url, "--limit", "10", "--offset", "20") == ids[20:]
    assert _ids(url, "--offset", "24") == []


def test_filters_keep_the_matching_runs(db: tuple[str, list[int]]) -> None:
    url, ids = db
    assert _ids(url, "--engine", "vllm") == ids[0::2]
    assert _ids(url, "--gpu", "H200-SXM-141GB", "--engine", "tensorrt-llm") == ids[1::6]
    assert _ids(url, "--model", "Qwen/Qwen2.5-72B") == ids[20:]
    assert _ids(url, "--search", "TEAM RUN 07") == [ids[7]]


def test_the_table_says_which_runs_of_how_many(db: tuple[str, list[int]]) -> None:
    url, ids = db
    result = runner.invoke(app, ["runs", "--db", url, "--limit", "5", "--offset", "5"])
    assert result.exit_code == 0, result.output
    assert "runs 6-10 of 24; --offset 10 for the next page" in result.output
    assert str(ids[5]) in result.output
    last = runner.invoke(app, ["runs", "--db", url, "--engine", "vllm", "--offset", "10"])
    assert "runs 11-12 of 12" in last.output and "next page" not in last.output
