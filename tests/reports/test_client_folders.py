"""Compare the clients on the real result folders of four tools (vllm bench serve 0.32, AIPerf
0.13, guidellm 0.8.1, inference-perf 0.7) run against one vLLM CPU server at concurrency 1 and 4
and at 2 requests/s, imported as the tools left them (issue 24 item 6): one deployment, one
requested workload, every load compared, rates by rate."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from db.engine import make_engine
from measurements.importers.common import DeploymentOverrides
from planner.curves.load import CurvePoint, LoadCurve
from reports.client_compare import CONCURRENCY, RATE, compare_clients
from reports.tool_definitions import DEFINITIONS
from team.roles import SYSTEM
from tests.client_runs import client_curves
from tests.stores import Stores
from workflows.ingest import IngestOptions, IngestStatus, ingest, read_uploads
from workflows.planning import load_curves

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FOLDERS = {
    "vllm-bench": FIXTURES / "vllm-bench-serve" / "real-0.32.0",
    "aiperf": FIXTURES / "aiperf" / "real-0.13.0",
    "guidellm": FIXTURES / "guidellm" / "real-0.8.1",
    "inference-perf": FIXTURES / "inference-perf" / "real-0.7.0",
}
FACTS = DeploymentOverrides(engine="vllm", model="tiny-random-llama", gpu="H100-SXM-80GB", tp=1)


def test_four_tools_folders_compare_at_every_load_they_share(
    stores: Stores, tmp_path: Path
) -> None:
    results = tmp_path / "results"
    for tool, folder in FOLDERS.items():
        shutil.copytree(folder, results / tool)
    engine = make_engine(stores.migrated("client-folders"))
    outcomes = ingest(
        engine, read_uploads([results]), IngestOptions(FACTS, atomic=True), actor=SYSTEM
    )
    stored = [o for o in outcomes if o.status is IngestStatus.STORED]
    assert len(stored) == 4 and all(o.levels == 3 for o in stored), [o.file for o in stored]
    (comparison,) = compare_clients(load_curves(engine))
    engine.dispose()
    assert comparison.workload == "128/32" and comparison.reference == "vllm-bench"
    assert sorted(t.tool for t in comparison.traces) == sorted(FOLDERS)
    assert comparison.shared_loads() == [(CONCURRENCY, 1.0), (CONCURRENCY, 4.0), (RATE, 2.0)]
    assert comparison.no_shared_load_text() is None
    assert "TP1" in comparison.title()
    rows = comparison.rows()
    assert [(r.kind, r.concurrency) for r in rows[-4:]] == [(RATE, 2.0)] * 4
    by_tool = {r.tool: r for r in rows if r.kind == RATE}
    reference = by_tool["vllm-bench"].values[0]
    for tool, row in by_tool.items():
        assert row.values[0] is not None and reference
        assert row.ratios[0] == pytest.approx(row.values[0] / reference)
        assert tool in DEFINITIONS, tool  # every tool's definitions are written out


def test_tools_that_share_no_load_are_said_so() -> None:
    (comparison,) = compare_clients(_two_tools_apart())
    assert comparison.shared_loads() == []
    said = comparison.no_shared_load_text() or ""
    assert said.startswith("These tools share no load")
    assert "concurrency 8" in said and "request rate 8 req/s" in said


def _two_tools_apart() -> list[LoadCurve]:
    """vllm bench serve at concurrency 8 only, guidellm at 8 requests/s only."""
    first, second = list(client_curves().values())[:2]
    point = CurvePoint(8.0, output_tok_s=100.0, p50_ttft_ms=20.0)
    return [
        replace(first, points=(point,), rate_points=()),
        replace(second, points=(), rate_points=(point,)),
    ]
