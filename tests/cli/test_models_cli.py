"""`capplan models`: list the catalog, show a model by any spelling, add a local config.json
(file or folder) to a real store, refuse a bad one naming the field, remove it; and a plan of a
MoE model on the demo data compares Hopper and Blackwell options with the basis of each."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from planner.physics import catalog
from planner.physics.catalog import CONFIG_DIR
from tests.stores import Stores

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def db(stores: Stores) -> str:
    return stores.empty()


@pytest.fixture(autouse=True)
def _no_added_models() -> Iterator[None]:
    catalog.forget_added()
    yield
    catalog.forget_added()  # the catalog is per process: later tests must not see these


def _ok(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_show_resolves_any_spelling_and_lists_moe_facts(db: str) -> None:
    shown = json.loads(_ok(["models", "show", "deepseek-ai/DeepSeek-R1", "--db", db, "--json"]))
    assert shown["experts"] == 256 and shown["experts_per_token"] == 8
    assert shown["attention"].startswith("61 MLA")
    text = _ok(["models", "show", "Llama-3.1-70B (nvidia FP8 ckpt)", "--db", db])
    assert text.startswith("llama-3.1-70b: 70.6B parameters")
    unknown = runner.invoke(app, ["models", "show", "acme/Nothing-1B", "--db", db])
    assert unknown.exit_code == 2 and "capplan models add" in unknown.stderr


def test_add_a_local_config_then_list_and_remove_it(db: str, tmp_path: Path) -> None:
    folder = tmp_path / "Support-30B-A3B"
    folder.mkdir()
    config = json.loads((CONFIG_DIR / "Qwen--Qwen3-30B-A3B_config.json").read_text())
    config.pop("_name_or_path", None)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    added = _ok(["models", "add", str(folder), "--db", db])
    assert added.startswith("added support-30b-a3b: 30.5B parameters, 3.4B active")
    catalog.forget_added()  # a fresh process: the store, not memory, keeps it
    listed = json.loads(_ok(["models", "list", "--db", db, "--json"]))
    mine = [m for m in listed if m["model"] == "support-30b-a3b"]
    assert mine and mine[0]["origin"] == "added" and mine[0]["experts"] == 128
    assert len(listed) > 55
    _ok(["models", "remove", "Support-30B-A3B", "--db", db])
    listed = json.loads(_ok(["models", "list", "--db", db, "--json"]))
    assert not [m for m in listed if m["model"] == "support-30b-a3b"]


def test_a_config_missing_a_field_is_refused_naming_file_and_field(db: str, tmp_path: Path) -> None:
    bad = tmp_path / "config.json"
    bad.write_text(json.dumps({"hidden_size": 4096, "num_attention_heads": 32}), "utf-8")
    result = runner.invoke(app, ["models", "add", str(bad), "--db", db])
    assert result.exit_code == 2
    said = result.stdout.replace("\n", "")  # the console wraps long lines
    assert str(bad) in said and "num_hidden_layers" in said
    empty = tmp_path / "nothing"
    empty.mkdir()
    none = runner.invoke(app, ["models", "add", str(empty), "--db", db])
    assert none.exit_code == 2 and "no config.json here" in none.stderr


def test_a_deepseek_r1_plan_compares_h200_b200_and_gb200_with_each_basis(stores: Stores) -> None:
    url = stores.empty("demo-moe")
    _ok(["demo-data", "--db", url])
    scenario = ROOT / "docs" / "scenarios" / "deepseek-r1-blackwell.yaml"
    plan = json.loads(_ok(["plan", str(scenario), "--db", url, "--json", "--samples", "40"]))
    gpus = {o["gpu"] for o in plan["options"]}
    assert {"H200-SXM-141GB", "B200-SXM-180GB", "GB200-NVL72-186GB", "H100-SXM-80GB"} <= gpus
    bases = {(o["gpu"], o["provenance"]) for o in plan["options"]}
    assert ("B200-SXM-180GB", "published") in bases
    assert ("H100-SXM-80GB", "projected") in bases  # nothing measured it: projected, said so
    sized = [o for o in plan["options"] if not o["rejected_reason"]]
    assert sized and all(o["total_monthly_cost_usd"] > 0 for o in sized)
    dp = [o for o in plan["options"] if "DP" in o["option"]]
    assert dp, "attention-DP deployments are options of their own, named so"


def test_a_hugging_face_folder_adds_its_config_and_skips_tokenizer_and_generation_configs(
    db: str, tmp_path: Path
) -> None:
    folder = tmp_path / "Foo-8B"
    folder.mkdir()
    config = json.loads((CONFIG_DIR / "Qwen--Qwen3-8B_config.json").read_text())
    config.pop("_name_or_path", None)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    for side in ("tokenizer_config.json", "generation_config.json"):
        (folder / side).write_text('{"bos_token_id": 1}', encoding="utf-8")
    result = runner.invoke(app, ["models", "add", str(folder), "--db", db])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("added foo-8b:") and "refused" not in result.stdout


def test_an_added_config_wins_over_an_alias_and_release_suffixes_resolve(
    db: str, tmp_path: Path
) -> None:
    config = json.loads((CONFIG_DIR / "Qwen--Qwen3-8B_config.json").read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    _ok(["models", "add", str(path), "--name", "acme/Llama-3.3-70B-Instruct", "--db", db])
    shown = json.loads(_ok(["models", "show", "Llama-3.3-70B-Instruct", "--db", db, "--json"]))
    assert shown["total_params"] < 10e9  # the added one, not the shipped 70B it aliases
    dated = json.loads(
        _ok(["models", "show", "Qwen3-235B-A22B-Instruct-2507", "--db", db, "--json"])
    )
    assert dated["model"] == "qwen3-235b-a22b"


def test_a_config_added_in_one_process_is_read_by_predict_in_another(
    db: str, tmp_path: Path
) -> None:
    # Issue 31: `capplan predict` in a fresh process told the user to add the config they added.
    import subprocess
    import sys

    header = (
        "source,engine,engine_version,model,precision,gpu,gpu_count,tp,isl,osl,load_type,"
        "concurrency_or_rate,output_tok_s,ttft_ms,tpot_ms"
    )
    rows = [
        f"mine,vllm,0.11.0,acme/Custom-8B,bf16,H100-SXM-80GB,1,1,1024,128,concurrency,{c},"
        f"{120.0 * c / (1 + c / 64):.1f},{40 + 4 * c},{8 + 0.1 * c:.2f}"
        for c in (1, 2, 4, 8, 16)
    ]
    sweep = tmp_path / "custom.csv"
    sweep.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    config = json.loads((CONFIG_DIR / "Qwen--Qwen3-8B_config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    run_id = json.loads(_ok(["import", str(sweep), "--db", db, "--json"]))[0]["run_id"]
    catalog.forget_added()

    def predict() -> dict[str, object]:
        args = ["predict", "--run", str(run_id), "--concurrency", "32", "--db", db, "--json"]
        done = subprocess.run(
            [sys.executable, "-m", "cli", *args], capture_output=True, text=True, check=True
        )
        document: dict[str, object] = json.loads(done.stdout)
        return document

    before = json.dumps(predict())
    assert "model facts unknown" in before
    _ok(["models", "add", str(tmp_path / "config.json"), "--name", "acme/Custom-8B", "--db", db])
    catalog.forget_added()
    after = json.dumps(predict())
    assert "model facts unknown" not in after
