"""The one SLA-target registry: the scenario, the checks and every label read the same rows."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from planner.analysis.capacity import make_plan
from planner.analysis.recommend import binding_in_words, recommend
from planner.inputs.prices import load_catalog_csv
from planner.inputs.scenario import SlaSpec
from planner.inputs.sla_targets import (
    SLA_TARGET_BY_FIELD,
    SLA_TARGETS,
    STATISTICS,
    CheckKind,
    Direction,
)
from planner.sizing.sla import target_text
from tests.planner.builders import scenario, seed_curves, trusted


def test_the_scenario_has_one_sla_field_per_registry_row_in_its_order() -> None:
    assert list(SlaSpec.model_fields) == [target.field for target in SLA_TARGETS]
    for name, field in SlaSpec.model_fields.items():
        assert field.description == SLA_TARGET_BY_FIELD[name].description


def test_targets_come_back_in_registry_order() -> None:
    sla = SlaSpec(e2e_p99_ms=9000, ttft_p50_ms=200, min_stream_tok_s=20)
    assert list(sla.targets()) == ["ttft_p50_ms", "min_stream_tok_s", "e2e_p99_ms"]


def test_every_row_says_how_it_is_checked_and_is_named_once() -> None:
    for target in SLA_TARGETS:
        latency = target.check in (CheckKind.LATENCY, CheckKind.E2E)
        assert latency == (target.statistic in STATISTICS), target
        assert target.upper == (target.direction is Direction.AT_MOST)
        assert target.unit in target.form_label
    for words in ("label", "plain", "form_label", "sensitivity_label"):
        values = [getattr(target, words) for target in SLA_TARGETS]
        assert len(set(values)) == len(values), words


def test_target_text_is_label_operator_limit_unit() -> None:
    assert target_text("ttft_p99_ms", 300) == "TTFT p99 <= 300 ms"
    assert target_text("min_stream_tok_s", 40.5) == "stream speed >= 40.5 tok/s"


def test_a_binding_target_reads_in_the_registrys_plain_words() -> None:
    plan = make_plan(scenario(), seed_curves(), load_catalog_csv())
    choice = recommend(trusted(plan.options), None).choice
    assert choice is not None and choice.binding_constraint.startswith("stream speed")
    assert (binding_in_words(choice) or "").startswith(
        f"The {SLA_TARGET_BY_FIELD['min_stream_tok_s'].plain} target"
    )


def test_a_bare_target_is_its_p99_and_both_at_once_are_refused() -> None:
    sla = SlaSpec.model_validate({"ttft_ms": 800, "e2e_ms": None, "tpot_p50_ms": 20})
    assert sla.targets() == {"ttft_p99_ms": 800.0, "tpot_p50_ms": 20.0}
    assert sla.read_as == ("ttft_p99_ms",)
    assert "ttft_ms" not in sla.model_dump()  # saved with its statistic
    with pytest.raises(ValidationError, match="ttft_ms and ttft_p99_ms are both given"):
        SlaSpec.model_validate({"ttft_ms": 800, "ttft_p99_ms": 700})


def test_every_metric_takes_p50_p90_p99_and_mean() -> None:
    for metric in ("ttft", "tpot", "e2e"):
        stated = {t.statistic for t in SLA_TARGETS if t.metric == metric}
        assert stated == set(STATISTICS), metric


def test_a_bare_target_is_remembered_through_validation_and_checked() -> None:
    sla = SlaSpec.model_validate({"tpot_ms": 40})
    again = SlaSpec.model_validate(sla)
    assert again.read_as == ("tpot_p99_ms",) and sla.read_as == ("tpot_p99_ms",)
    assert SlaSpec.model_validate({"tpot_ms": None, "tpot_p99_ms": 5}).read_as == ()
    with pytest.raises(ValidationError, match="tpot_ms must be a number of milliseconds above 0"):
        SlaSpec.model_validate({"tpot_ms": -5})
