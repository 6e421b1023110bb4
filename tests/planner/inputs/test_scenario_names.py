"""A scenario's GPU, engine and model names are cleaned as they are read: a full-width letter or a
zero-width space is normalised into the catalog's name; a look-alike of a catalog GPU or a known
engine is refused naming both and the odd character."""

from __future__ import annotations

import pytest

from errors import ScenarioError
from planner.inputs.scenario import Scenario, scenario_from_yaml

pytestmark = pytest.mark.hostile

YAML = """\
name: agent
model: "Qwen/Qwen3-8B{model_tail}"
workload: {{isl: 1024, osl: 256}}
demand: {{peak_requests_per_s: 5}}
candidates: {{gpus: ["{gpu}"], engines: ["{engine}"]}}
pricing: {{"{gpu}": 2.5}}
"""


def _read(gpu: str, engine: str = "vllm", model_tail: str = "") -> Scenario:
    text = YAML.format(gpu=gpu, engine=engine, model_tail=model_tail)
    return scenario_from_yaml(text, "agent.yaml")


@pytest.mark.parametrize("gpu", ["\\uFF28100-SXM-80GB", "H100\\u200B-SXM-80GB"])
def test_wide_and_invisible_characters_plan_the_catalog_gpu(gpu: str) -> None:
    scenario = _read(gpu, engine="\\u200Bvllm", model_tail="\\u200B")
    assert scenario.candidates.gpus == ("H100-SXM-80GB",)
    assert scenario.candidates.engines == ("vllm",)
    assert scenario.model == "Qwen/Qwen3-8B"
    assert scenario.on_demand_price("H100-SXM-80GB") == 2.5


@pytest.mark.parametrize(
    ("gpu", "engine", "expected"),
    [
        ("\\u041D100-SXM-80GB", "vllm", "the catalog's 'H100-SXM-80GB'"),
        ("H100-SXM-80GB", "vll\\u043C", "the engine 'vllm'"),
    ],
    ids=["Cyrillic EN GPU", "Cyrillic EM engine"],
)
def test_a_lookalike_is_refused_naming_both(gpu: str, engine: str, expected: str) -> None:
    with pytest.raises(ScenarioError, match="looks like") as caught:
        _read(gpu, engine=engine)
    assert expected in str(caught.value) and "CYRILLIC" in str(caught.value)
