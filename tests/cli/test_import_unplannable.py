"""`capplan import` of a file the planner cannot use: stored (the CLI's contract) with one
warning per missing fact on stderr naming the file and the flag, and the list in --json."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli import app
from tests.stores import Stores

C8 = Path(__file__).resolve().parents[1] / "fixtures" / "vllm-cpu-real" / "c8.json"
runner = CliRunner()


def test_a_file_without_gpu_or_tp_is_stored_with_a_warning_naming_the_flags(
    stores: Stores,
) -> None:
    url = stores.migrated("unplannable")
    result = runner.invoke(app, ["import", str(C8), "--db", url])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 2
    assert all("c8.json: stored, but the planner cannot use it" in w for w in warnings)
    assert "--gpu" in warnings[0] and "--tp / --gpu-count" in result.stderr


def test_json_lists_what_each_run_lacks_and_nothing_once_the_flags_say_it(stores: Stores) -> None:
    url = stores.migrated("unplannable-json")
    bare = runner.invoke(app, ["import", str(C8), "--db", url, "--json"])
    (row,) = json.loads(bare.stdout)
    assert [m.split(":")[0] for m in row["unplannable"]] == ["no GPU", "no TP or GPU count"]
    other = stores.migrated("plannable-json")
    args = ["import", str(C8), "--db", other, "--json", "--gpu", "H100-SXM-80GB", "--tp", "1"]
    (row,) = json.loads(runner.invoke(app, args).stdout)
    assert row["unplannable"] == [] and row["created"] is True
