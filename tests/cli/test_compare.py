"""`capplan runs --compare` and the workload column of `capplan fit`, on the real vllm bench serve
and guidellm runs of one vLLM CPU server (guidellm's token means at the issue's 129 / 63.9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from tests.client_runs import GPU, MODEL, store_client_runs
from tests.stores import Stores

runner = CliRunner()
RUN_IDS = {"vllm-bench": 1, "guidellm": 2}  # the order store_client_runs stores them in


@pytest.fixture(scope="module")
def db(stores: Stores) -> str:
    url = stores.migrated("compare")
    assert store_client_runs(url, rounded=True) == RUN_IDS
    return url


def test_runs_compare_json_lists_each_tool_side_by_side_with_ratios(db: str) -> None:
    result = runner.invoke(app, ["runs", "--compare", "--json", "--db", db])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    (comparison,) = document["comparisons"]
    assert comparison["workload"] == "128/64" and comparison["reference"] == "vllm-bench"
    tools = {tool["tool"]: tool for tool in comparison["tools"]}
    assert tools["guidellm"]["workloads"] == ["129/64"]
    assert "first request" in tools["vllm-bench"]["definitions"]["duration"]
    assert "window" in tools["guidellm"]["definitions"]["duration"]
    rows = {(row["tool"], row["concurrency"]): row for row in comparison["rows"]}
    assert set(rows) == {(tool, c) for tool in tools for c in (1.0, 4.0, 16.0)}
    guidellm = rows[("guidellm", 16.0)]
    assert guidellm["output_tok_s"] == pytest.approx(1268.4, abs=0.05)  # guidellm printed it
    assert guidellm["output_tok_s_ratio"] == pytest.approx(1268.42 / 3287.78, rel=1e-4)
    assert rows[("vllm-bench", 16.0)]["p99_tpot_ms_ratio"] == 1.0
    assert "Client CPU" in document["why_they_differ"]


def test_runs_compare_prints_a_table_per_comparison_and_the_definitions(db: str) -> None:
    result = runner.invoke(app, ["runs", "--compare", "--db", db])
    assert result.exit_code == 0, result.output
    words = " ".join(result.stdout.split())  # the terminal's width may wrap any line
    assert "ratios to vllm-bench" in words
    assert "- guidellm (run 2 (129/64)): output tok/s: `output_tokens_per_second`" in words
    assert "- vllm bench serve (run 1 (128/64)): output tok/s: `output_throughput`" in words
    assert "TPOT: `inter_token_latency_ms`" in words


def test_runs_compare_keeps_to_the_models_asked(db: str) -> None:
    def comparisons(*models: str) -> list[object]:
        args = ["runs", "--compare", "--json", "--db", db]
        for model in models:
            args += ["--model", model]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        found: list[object] = json.loads(result.stdout)["comparisons"]
        return found

    assert len(comparisons(f"org/{MODEL}-Instruct")) == 1  # the planner's model matching
    assert comparisons("meta-llama/Llama-3.1-70B") == []


def test_runs_compare_refuses_an_unknown_reference_tool(db: str) -> None:
    result = runner.invoke(app, ["runs", "--compare", "--reference", "nosuch", "--db", db])
    assert result.exit_code == 2
    assert "--reference" in result.stderr and "nosuch" in result.stderr


def test_runs_compare_says_so_when_no_two_tools_measured_one_workload(stores: Stores) -> None:
    result = runner.invoke(app, ["runs", "--compare", "--db", stores.empty("nocompare")])
    assert result.exit_code == 0, result.output
    words = " ".join(result.stdout.split())
    assert "No deployment and workload was measured by two or more tools" in words


def test_fit_puts_both_tools_runs_in_one_workload_with_their_exact_labels(db: str) -> None:
    result = runner.invoke(app, ["fit", "--json", "--db", db])
    assert result.exit_code == 0, result.output
    documents = json.loads(result.stdout)
    assert [d["workload"] for d in documents] == ["128/64", "128/64"]
    assert sorted(d["label"].rsplit(" · ", 1)[-1] for d in documents) == ["128/64", "129/64"]


# At ISL 130 neither run is exact: both are within rounding, the nearer (129) is used, unflagged.
@pytest.mark.parametrize(
    ("isl", "chosen"), [(128, "vllm-bench"), (129, "guidellm"), (130, "guidellm")]
)
def test_a_plan_takes_both_runs_as_one_workload_and_uses_the_exact_one(
    db: str, tmp_path: Path, isl: int, chosen: str
) -> None:
    scenario = tmp_path / "clients.yaml"
    scenario.write_text(
        f"name: clients\nmodel: {MODEL}\nworkload: {{isl: {isl}, osl: 64}}\n"
        "demand: {peak_requests_per_s: 10}\nsla: {ttft_p99_ms: 2000}\n"
        f"candidates: {{engines: [vllm], gpus: [{GPU}]}}\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["plan", str(scenario), "--samples", "0", "--json", "--db", db])
    assert result.exit_code == 0, result.output
    (option,) = json.loads(result.stdout)["options"]
    assert option["run_id"] == RUN_IDS[chosen]
    assert any("chosen from 2 runs" in flag for flag in option["flags"]), option["flags"]
    assert not any("ISL/OSL" in flag for flag in option["flags"]), option["flags"]
