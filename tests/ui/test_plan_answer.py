"""The Plan page's answer as finance reads it (AppTest on a real demo store): the card bills
whole nodes, a lower expected cost points down in green, "How sure" in words and whole numbers,
refused inputs said and not applied, an implausible budget remarked on, and exports that do
not vanish when another is clicked."""

from __future__ import annotations

import re

from streamlit.proto.Metric_pb2 import Metric as MetricProto
from streamlit.testing.v1 import AppTest

from tests.ui.conftest import APP, RUN_TIMEOUT_S, settled, shown
from ui.plan_answer import RANGE_COLUMNS

DEMAND = "plan_demand_peak_requests_per_s"


def _plan_page() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _headline(at: AppTest) -> str:
    return shown(at.success[0].value)


def test_the_card_says_nodes_by_gpus_billed_and_the_gpus_used(store_url: str) -> None:
    at = _plan_page()
    (card,) = [m for m in at.metric if m.label.startswith("Nodes billed")]
    size = re.fullmatch(r"(\d+) x (\d+) GPUs", card.value)
    assert size is not None, card.value
    nodes, per_node = int(size[1]), int(size[2])
    billed = re.match(r"(\d+) GPUs billed, (\d+) used \((\d+) replicas\)", card.proto.delta)
    assert billed is not None, card.proto.delta
    assert int(billed[1]) == nodes * per_node >= int(billed[2])


def test_a_lower_expected_cost_points_down_in_green(store_url: str) -> None:
    at = _plan_page()
    for label in ("Monthly cost", "Yearly cost"):
        (metric,) = [m for m in at.metric if m.label.startswith(label)]
        planned = float(metric.value.strip("$").replace(",", ""))
        expected = float(metric.proto.delta.split("expected $")[1].replace(",", ""))
        assert expected < planned  # the demo's default plan is sized at 90% confidence
        assert metric.proto.direction == MetricProto.MetricDirection.DOWN, metric.proto
        assert metric.proto.color == MetricProto.MetricColor.GREEN, metric.proto


def test_how_sure_has_headers_in_words_and_whole_numbers(store_url: str) -> None:
    at = settled(_plan_page())
    (table,) = [d.value for d in at.dataframe if "Nodes P50" in d.value.columns]
    assert list(table.columns) == list(RANGE_COLUMNS.values())
    assert not any("_" in name for name in table.columns)
    for name in table.columns[1:]:
        values = [float(v) for v in table[name].dropna()]
        assert all(v.is_integer() for v in values), (name, values)


def test_a_demand_of_zero_is_said_beside_the_field_and_the_plan_stays(store_url: str) -> None:
    at = _plan_page()
    headline = _headline(at)
    at.number_input(key=DEMAND).set_value(0.0).run()
    assert not at.exception, [e.value for e in at.exception]
    beside = [shown(e.value) for e in at.sidebar.error]
    assert any("must be more than 0" in e and "Not applied" in e for e in beside), beside
    said = [shown(e.value) for e in at.main.error]
    assert any(s.startswith("Not applied: Peak requests per second") for s in said), said
    assert not any("Input should be" in s or "field '" in s for s in (*beside, *said))
    assert _headline(at) == headline  # the last plan, still on the page


def test_a_budget_beyond_any_spend_is_remarked_on(store_url: str) -> None:
    at = _plan_page()
    at.number_input(key="plan_budget").set_value(1e12).run()
    assert not at.exception, [e.value for e in at.exception]
    said = [shown(w.value) for w in at.sidebar.warning]
    assert any("beyond any plausible" in s and "every option fits" in s for s in said), said


def test_each_export_is_bytes_under_its_own_key_and_a_click_reruns_nothing(
    store_url: str,
) -> None:
    at = settled(_plan_page())
    buttons = at.get("download_button")
    labels = {b.label for b in buttons}
    assert {"Scenario as YAML", "Plan as XLSX", "Plan as CSV", "Plan as JSON"} <= labels
    for button in buttons:
        assert str(button.key).startswith(("plan_download_", "plan_report_")), button.label
        assert not button.proto.HasField("deferred_file_id"), button.label
        assert button.proto.ignore_rerun, button.label
    keys = {b.label: b.proto.id for b in buttons}
    at.get("download_button")[0].click()
    at.run()
    assert {b.label: b.proto.id for b in at.get("download_button")} == keys


def test_the_page_says_what_it_planned_and_that_an_out_of_range_number_is_not_applied(
    store_url: str,
) -> None:
    # The browser refuses a number outside its field's range before the server sees it (the
    # field shows it, the plan does not move): the page says what it planned for, and why.
    at = _plan_page()
    at.number_input(key=DEMAND).set_value(12.5).run()
    at.number_input(key="plan_isl").set_value(10**9).run()  # past the field's maximum
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key="plan_isl").value == 1024
    said = " ".join(shown(c.value) for c in at.caption)
    assert "Planned for 12.5 requests/s at peak, ISL 1,024 / OSL 1,024 tokens" in said, said
    assert "outside its field's range is not applied" in said


def test_an_expected_cost_equal_to_the_planned_one_draws_no_arrow() -> None:
    from ui.plan_answer import _expected_delta

    assert _expected_delta(61_320.0, 61_320.0) is None  # was "+$0", drawn as a red up-arrow
    assert _expected_delta(61_320.0, 52_000.0) == "-$9,320: expected $52,000"
