"""`capplan import results/` of the folder `vllm bench serve --save-result --result-dir
results/` leaves after three runs (issue 30 item 1): three runs stored, none left out as a
copy, and the same for its zip."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli import app
from tests.result_dirs import THREE_RUNS, write_three_runs, zip_of
from tests.stores import Stores

FACTS = ["--engine", "vllm", "--gpu", "H100-SXM-80GB", "--tp", "1"]
runner = CliRunner()


def _stored_models(url: str) -> list[str]:
    result = runner.invoke(app, ["runs", "--json", "--db", url])
    assert result.exit_code == 0, result.output
    return sorted(run["deployment"]["model"] for run in json.loads(result.stdout))


def test_importing_a_vllm_result_dir_of_three_runs_stores_three(
    stores: Stores, tmp_path: Path
) -> None:
    url = stores.migrated("cli-result-dir")
    written = write_three_runs(tmp_path / "results")
    result = runner.invoke(app, ["import", str(tmp_path / "results"), *FACTS, "--db", url])
    assert result.exit_code == 0, result.output
    said = " ".join(result.stdout.split())
    assert "left out" not in said
    for path in written:
        assert f"results/{path.name}: vLLM bench serve" in said
    assert _stored_models(url) == sorted(model for model, _, _ in THREE_RUNS)


def test_importing_the_zip_of_the_result_dir_stores_three(stores: Stores, tmp_path: Path) -> None:
    url = stores.migrated("cli-result-dir-zip")
    written = write_three_runs(tmp_path / "results")
    archive = tmp_path / "results.zip"
    archive.write_bytes(zip_of([(f"results/{p.name}", p.read_bytes()) for p in written]))
    result = runner.invoke(app, ["import", str(archive), *FACTS, "--db", url, "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [(row["created"], row["levels"]) for row in rows] == [(True, 1)] * 3
    assert len(_stored_models(url)) == 3
