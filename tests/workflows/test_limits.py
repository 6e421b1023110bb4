"""The stated ranges: Bound's test and words, a scenario key's own bound read for its form field,
and the planning workflow refusing a sample count beyond SAMPLES itself."""

from __future__ import annotations

import pytest

from errors import InputError
from planner.inputs.scenario import DemandSpec, OptionsSpec
from workflows.limits import RUN_ID, SAMPLES, Bound, highest
from workflows.planning import draws_for

pytestmark = pytest.mark.hostile


def test_a_bound_holds_finite_values_inside_it_and_compares_integers_exactly() -> None:
    assert SAMPLES.holds(0) and SAMPLES.holds(100_000) and not SAMPLES.holds(100_001)
    assert not Bound(0, 1).holds(float("nan")) and not Bound(0, 1e9).holds(float("inf"))
    assert RUN_ID.holds(2**63 - 1) and not RUN_ID.holds(2**63) and not RUN_ID.holds(10**400)
    assert SAMPLES.text() == "between 0 and 100,000"
    assert Bound(0.001, 1_000).text() == "between 0.001 and 1,000"


def test_a_form_field_takes_the_scenario_keys_own_upper_bound() -> None:
    assert highest(DemandSpec, "peak_requests_per_s") == 1e7
    assert highest(OptionsSpec, "startup_s_if_unknown") == 86_400
    with pytest.raises(KeyError, match="states no upper bound"):
        highest(OptionsSpec, "gpus_per_node")


def test_planning_refuses_a_sample_count_beyond_its_range() -> None:
    with pytest.raises(InputError, match="must be between 0 and 100,000") as caught:
        draws_for(1_000_000_000)
    assert caught.value.field == "samples"
    assert draws_for(0) is None and draws_for(None) is None
