"""The Curves page on the real vllm bench serve and guidellm runs of one vLLM CPU server: one
workload for ISL 128 and a mean of 129, and the clients compared on one chart with definitions."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from reports.client_compare import compare_clients
from tests.client_runs import MODEL, client_curves, store_client_runs
from tests.ui.conftest import APP, RUN_TIMEOUT_S
from ui.clients import comparison_rows


def _curves_page(store_url: str) -> tuple[AppTest, dict[str, int]]:
    ids = store_client_runs(store_url, rounded=True)
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    at.switch_page("ui/curves.py").run()
    at.selectbox(key="curves_model").set_value(MODEL).run()
    assert not at.exception, [e.value for e in at.exception]
    return at, ids


def _figures(at: AppTest) -> list[dict[str, object]]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def test_isl_128_and_a_mean_of_129_are_one_workload_on_the_curves_page(store_url: str) -> None:
    at, ids = _curves_page(store_url)
    assert at.selectbox(key="curves_workload").options == ["128/64"]
    shown = at.multiselect(key=f"curves_runs_{MODEL}_128/64")
    assert set(shown.value) == set(ids.values())
    # Each run keeps its exact values where it is shown.
    assert {shown.format_func(run_id).rsplit(" · ", 1)[-1] for run_id in ids.values()} == {
        "128/64",
        "129/64",
    }
    captions = " ".join(c.value for c in at.caption)
    assert "Workload 128/64 holds runs measured at 128/64, 129/64" in captions
    assert "within 2 tokens or 2%" in captions


def test_the_clients_are_overlaid_one_trace_per_tool_with_their_definitions(
    store_url: str,
) -> None:
    at, _ = _curves_page(store_url)
    (compare,) = [f for f in _figures(at) if "Compare the clients" in str(f["layout"])]
    traces = compare["data"]
    assert isinstance(traces, list)
    assert [t["name"] for t in traces] == ["vllm bench serve", "guidellm 0.8.1"]
    assert all(t["x"] == [1.0, 4.0, 16.0] for t in traces)
    notes = " ".join(m.value for m in at.markdown)
    assert "**vllm bench serve**" in notes and "**guidellm 0.8.1**" in notes
    assert "`output_throughput` = output tokens of the successful requests / duration" in notes
    assert "`inter_token_latency_ms`" in notes and "duration:" in notes
    assert any("Client CPU" in c.value for c in at.caption)
    table = next(d.value for d in at.dataframe if "output tok/s / vllm-bench" in d.value.columns)
    assert list(table["tool"]) == ["vllm bench serve", "guidellm 0.8.1"] * 3


def test_comparison_rows_put_each_value_beside_its_ratio() -> None:
    (comparison,) = compare_clients(list(client_curves().values()))
    rows = comparison_rows(comparison)
    reference, last = rows[-2], rows[-1]
    assert last["tool"] == "guidellm 0.8.1" and last["concurrency"] == 16.0
    value, ratio = last["output tok/s"], last["output tok/s / vllm-bench"]
    base = reference["output tok/s"]
    assert isinstance(value, float) and isinstance(ratio, float) and isinstance(base, float)
    assert ratio == pytest.approx(value / base, abs=0.001)
