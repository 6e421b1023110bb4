"""`capplan plan` on a scenario the store has no measurement at: the serving model's answer
with the sweeps that would tighten it (text, --json) on the demo store, and exit 2 with the
measurement plan when no curve of the model backs any candidate."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from planner.engine.curves import distance_error
from tests.stores import Stores

BRIEF = Path(__file__).resolve().parents[1] / "fixtures" / "scenarios" / "agent-brief.yaml"
runner = CliRunner()


@pytest.fixture(scope="module")
def demo_url(stores: Stores) -> str:
    return stores.demo("nodata")


def test_the_agent_brief_is_answered_by_the_serving_model_and_prints_the_probe_commands(
    demo_url: str,
) -> None:
    result = runner.invoke(app, ["plan", str(BRIEF), "--db", demo_url])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Run ")  # the answer first: measurements close it, not block it
    text = " ".join(result.stdout.split())
    assert "adjusted by the serving model from 8192/1024, 3.4x away" in text
    said = " ".join(f"validated error at that distance {distance_error(3.4).text()}".split())
    assert said in text
    probes = [line for line in lines if line.startswith("capplan probe --launch ")]
    assert len(probes) == 8  # 2 engines x 2 GPUs x 2 TP sizes
    assert {shlex.split(line)[3].split()[0] for line in probes} == {"vllm", "trtllm-serve"}
    assert any(line.startswith("for c in 1 2 4") and "vllm bench serve" in line for line in lines)
    assert any("aiperf profile" in line for line in lines)


def test_workloads_past_the_limit_are_no_warning_when_the_serving_model_reads_them(
    demo_url: str,
) -> None:
    result = runner.invoke(app, ["plan", str(BRIEF), "--db", demo_url])
    assert not [w for w in result.stderr.split("warning: ") if "too far to adjust" in w]


def test_plan_json_carries_the_measurement_plan_under_canonical_keys(demo_url: str) -> None:
    result = runner.invoke(app, ["plan", str(BRIEF), "--db", demo_url, "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    plan = document["measurement_plan"]
    assert plan["no_data"] is False
    gaps = {(g["engine"], g["gpu"]): g["modelled"] for g in plan["gaps"]}
    assert gaps == {
        (e, g): (e, g) != ("tensorrt-llm", "H100-SXM-80GB")
        for e in ("vllm", "tensorrt-llm")
        for g in ("H100-SXM-80GB", "H200-SXM-141GB")
    }
    sweep = plan["sweeps"][0]
    assert set(sweep) >= {"engine", "gpu", "tp", "concurrencies", "probe_command"}
    assert sweep["isl"] == 3000 and sweep["osl"] == 300


def test_a_model_with_no_curve_exits_2_with_what_to_measure(demo_url: str, tmp_path: Path) -> None:
    other = tmp_path / "mixtral.yaml"
    other.write_text(BRIEF.read_text().replace("meta-llama/Llama-3.1-70B-Instruct", "Mixtral-8x7B"))
    result = runner.invoke(app, ["plan", str(other), "--db", demo_url])
    assert result.exit_code == 2
    assert result.stdout.startswith("No measurements close enough to Mixtral-8x7B at 3000/300")
    assert "capplan probe --launch" in result.stdout
    assert result.stderr.startswith("error: no measured curve matches model 'Mixtral-8x7B'")
    as_json = runner.invoke(app, ["plan", str(other), "--db", demo_url, "--json"])
    assert as_json.exit_code == 2
    assert json.loads(as_json.stdout)["measurement_plan"]["no_data"] is True


def test_a_scenario_the_data_answers_has_no_measurement_plan(demo_url: str, tmp_path: Path) -> None:
    # vLLM was measured at 1024/1024 on both GPUs in the demo data: nothing to measure.
    platform = Path(__file__).resolve().parents[2] / "docs" / "scenarios" / "agent-platform.yaml"
    vllm_only = tmp_path / "vllm.yaml"
    vllm_only.write_text(
        platform.read_text().replace("engines: [vllm, tensorrt-llm]", "engines: [vllm]")
    )
    args = ["plan", str(vllm_only), "--db", demo_url, "--json", "--samples", "0"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["measurement_plan"] is None
