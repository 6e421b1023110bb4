"""A scenario as a person writes it: read from a YAML file, a saved text, an edited form or a
page's link (bounded JSON), and written back as YAML; the what-if multipliers as typed. Every
refusal names the file, field and value (ScenarioError, InputError)."""

from __future__ import annotations

from measurements.bounded import load_json
from planner.inputs.scenario import (
    load_scenario,
    scenario_from_dict,
    scenario_from_yaml,
    scenario_to_yaml,
)
from planner.inputs.what_if_spec import parse_multipliers

__all__ = [
    "load_json",
    "load_scenario",
    "parse_multipliers",
    "scenario_from_dict",
    "scenario_from_yaml",
    "scenario_to_yaml",
]
