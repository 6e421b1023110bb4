"""Compare the clients on the real runs of one vLLM CPU server by vllm bench serve and guidellm."""

from __future__ import annotations

from dataclasses import replace

import pytest

from reports.client_compare import COMPARED, compare_clients
from reports.tool_definitions import DEFINITIONS, definitions_for
from tests.client_runs import client_curves

# What the tools printed at concurrency 16 (tests/fixtures/vllm-cpu-clients/SOURCES.md).
VLLM_C16_TOK_S = 3287.78
GUIDELLM_C16_TOK_S = 1268.4


def test_one_deployment_and_workload_is_one_comparison_with_a_trace_per_tool() -> None:
    (comparison,) = compare_clients(list(client_curves(isl_mean=129.0).values()))
    assert comparison.workload == "128/64"
    assert comparison.reference == "vllm-bench"
    assert [t.tool for t in comparison.traces] == ["vllm-bench", "guidellm"]
    assert [t.workloads for t in comparison.traces] == [("128/64",), ("129/64",)]
    assert comparison.traces[1].client == "guidellm 0.8.1"
    assert [p.concurrency for p in comparison.traces[1].points] == [1.0, 4.0, 16.0]


def test_ratios_divide_by_the_reference_tool_at_the_same_concurrency() -> None:
    (comparison,) = compare_clients(list(client_curves().values()))
    rows = {(r.tool, r.concurrency): r for r in comparison.rows()}
    guidellm, vllm = rows[("guidellm", 16.0)], rows[("vllm-bench", 16.0)]
    tok_s = COMPARED.index("output_tok_s")
    assert vllm.values[tok_s] == pytest.approx(VLLM_C16_TOK_S, abs=0.01)
    assert guidellm.values[tok_s] == pytest.approx(GUIDELLM_C16_TOK_S, abs=0.05)
    assert guidellm.ratios[tok_s] == pytest.approx(GUIDELLM_C16_TOK_S / VLLM_C16_TOK_S, rel=1e-4)
    assert all(ratio in (None, 1.0) for ratio in vllm.ratios)
    # guidellm reports no per-chunk gaps: no value, no ratio.
    icl = COMPARED.index("p50_icl_ms")
    assert guidellm.values[icl] is None and guidellm.ratios[icl] is None
    assert vllm.values[icl] is not None


def test_the_reference_can_be_chosen() -> None:
    (comparison,) = compare_clients(list(client_curves().values()), reference="guidellm")
    assert comparison.reference == "guidellm" and comparison.traces[0].tool == "guidellm"
    row = next(r for r in comparison.rows() if r.tool == "vllm-bench" and r.concurrency == 16)
    assert row.ratios[0] == pytest.approx(VLLM_C16_TOK_S / GUIDELLM_C16_TOK_S, rel=1e-4)


def test_one_tool_or_another_workload_or_deployment_is_no_comparison() -> None:
    curves = client_curves()
    assert compare_clients([curves["vllm-bench"]]) == []
    assert compare_clients(list(client_curves(isl_mean=256.0).values())) == []
    other_tp = replace(curves["guidellm"], key=replace(curves["guidellm"].key, tp=2))
    assert compare_clients([curves["vllm-bench"], other_tp]) == []


def test_runs_of_one_tool_merge_into_one_trace_the_newest_winning_a_shared_concurrency() -> None:
    curves = client_curves()
    vllm = curves["vllm-bench"]
    newer = replace(vllm, run_id=9, points=vllm.points[-1:])
    newer = replace(newer, points=(replace(newer.points[0], output_tok_s=1.0),))
    (comparison,) = compare_clients([vllm, newer, curves["guidellm"]])
    trace = comparison.traces[0]
    assert trace.run_ids == (1, 9)
    assert [p.output_tok_s for p in trace.points][-1] == 1.0
    assert len(trace.points) == 3


def test_every_compared_tool_states_its_definitions() -> None:
    for tool in ("vllm-bench", "guidellm", "aiperf"):
        definitions = DEFINITIONS[tool]
        assert "duration" in definitions.output_tok_s or "window" in definitions.output_tok_s
        assert definitions.ttft and definitions.tpot and definitions.tokens
    assert "not documented by capplan" in definitions_for("llmperf").tpot
