"""A scenario's name and model are shown in the app, the terminal and every report: a NUL, an
ESC or a bidi override in them is refused when the scenario is read, naming the field."""

from __future__ import annotations

import pytest

from errors import ScenarioError
from planner.inputs.scenario import scenario_from_dict, scenario_from_yaml

pytestmark = pytest.mark.hostile

YAML = """\
name: {name}
model: {model}
workload: {{isl: 1024, osl: 256}}
demand: {{peak_requests_per_s: 5}}
"""


@pytest.mark.parametrize(
    ("written", "escape"),
    [
        (r'"agent\0platform"', "\\x00"),
        (r'"agent\e[31mplatform"', "\\x1b"),
        (r'"report\u202Efdp.exe"', "\\u202e"),
        (r'"a\u2066b"', "\\u2066"),
        (r'"two\nlines"', "\\x0a"),
    ],
    ids=["NUL", "ESC", "RLO", "LRI", "newline"],
)
def test_a_control_character_in_the_name_is_refused_naming_the_field(
    written: str, escape: str
) -> None:
    text = YAML.format(name=written, model="m")
    with pytest.raises(ScenarioError, match="must not contain control characters") as caught:
        scenario_from_yaml(text, "s.yaml")
    assert caught.value.field == "name" and caught.value.file == "s.yaml"
    assert f"found {escape}" in str(caught.value)


def test_a_bidi_override_in_the_model_is_refused_too() -> None:
    raw = {
        "name": "ok",
        "model": "llama\u202e",
        "workload": {"isl": 1, "osl": 1},
        "demand": {"peak_requests_per_s": 1},
    }
    with pytest.raises(ScenarioError) as caught:
        scenario_from_dict(raw, "s.yaml")
    assert caught.value.field == "model"


def test_names_in_any_script_still_read() -> None:
    scenario = scenario_from_yaml(YAML.format(name="'Équipe 中文 plan'", model="m"), "s.yaml")
    assert scenario.name == "Équipe 中文 plan"


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("demand: {peak_requests_per_s: yes}", "demand.peak_requests_per_s"),
        ("demand: {peak_concurrent_streams: on}", "demand.peak_concurrent_streams"),
        ("demand: {monthly_output_tokens: true}", "demand.monthly_output_tokens"),
        ("options: {gpus_per_node: yes}", "options.gpus_per_node"),
        ("pricing: {h100: on}", "pricing.h100"),
        ("pricing: {h100: {on_demand: 3, reserved: yes}}", "pricing.h100.reserved"),
        ("budget: {monthly_usd: no}", "budget.monthly_usd"),
    ],
    ids=["rate", "streams", "tokens", "node", "price", "reserved", "budget"],
)
def test_a_yaml_boolean_where_a_number_belongs_is_refused(line: str, field: str) -> None:
    """YAML 1.1 reads yes/on/true as a boolean; pydantic would plan it as 1 (req/s, GPUs, $)."""
    base = YAML.format(name="b", model="m")
    key = line.split(":", maxsplit=1)[0]
    if key == "demand":
        base = base.replace("demand: {peak_requests_per_s: 5}\n", "")
    with pytest.raises(ScenarioError, match="expected a number, got the boolean") as caught:
        scenario_from_yaml(base + line + "\n", "s.yaml")
    assert caught.value.field == field
    assert caught.value.file == "s.yaml"


def test_numbers_written_as_numbers_still_read() -> None:
    text = YAML.format(name="b", model="m") + "options: {gpus_per_node: 4}\npricing: {h100: 2}\n"
    scenario = scenario_from_yaml(text, "s.yaml")
    assert scenario.options.gpus_per_node == 4
    assert scenario.on_demand_price("H100-SXM-80GB") == 2.0
