"""`capplan import --concurrency / --request-rate`: the user's load fills in only where a file
states none (AIPerf's CSV and per-request records); a file that states its load keeps it, and
its notes say the user's was not used."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli import app
from db import run_reads
from db.engine import make_engine
from tests.stores import Stores

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "aiperf" / "real-0.13.0" / "c4"
FACTS = ["--engine", "vllm", "--model", "tiny-random-llama", "--gpu", "H100-SXM-80GB", "--tp", "1"]
runner = CliRunner()


def _import(url: str, path: Path, *load: str) -> tuple[str, float, bool, str]:
    args = ["import", str(path), "--db", url, "--json", *FACTS, *load]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)
    engine = make_engine(url)
    try:
        (level,) = run_reads.get_run(engine, row["run_id"]).run.levels
    finally:
        engine.dispose()
    return level.load_kind.value, level.load_value, level.load_stated, level.notes or ""


def test_the_users_concurrency_fills_in_the_load_an_aiperf_csv_lacks(stores: Stores) -> None:
    url = stores.migrated("load-fallback-csv")
    kind, value, stated, notes = _import(
        url, REAL / "profile_export_aiperf.csv", "--concurrency", "4"
    )
    assert (kind, value, stated) == ("concurrency", 4, True)
    assert "load stated by the user: concurrency 4" in notes


def test_without_the_users_load_an_aiperf_csv_is_kept_out_of_fits(stores: Stores) -> None:
    url = stores.migrated("load-fallback-none")
    kind, _, stated, notes = _import(url, REAL / "profile_export_aiperf.csv")
    assert (kind, stated) == ("rate", False)
    assert "--concurrency" in notes


def test_the_files_own_load_wins_over_the_users_and_a_note_says_so(stores: Stores) -> None:
    url = stores.migrated("load-fallback-json")
    kind, value, stated, notes = _import(
        url, REAL / "profile_export_aiperf.json", "--concurrency", "16"
    )
    assert (kind, value, stated) == ("concurrency", 4, True)
    assert "concurrency 16 was not used: the file states 4 in flight, which wins" in notes


def test_the_users_rate_fills_in_per_request_records(stores: Stores) -> None:
    url = stores.migrated("load-fallback-rate")
    kind, value, stated, _ = _import(url, REAL / "profile_export.jsonl", "--request-rate", "2.5")
    assert (kind, value, stated) == ("rate", 2.5, True)
