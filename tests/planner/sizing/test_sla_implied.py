"""A target that a tighter one at a higher percentile already implies changes nothing: a TTFT
p50 looser than the TTFT p99 that holds never removes the answer."""

from __future__ import annotations

from planner.analysis.capacity import make_plan
from planner.inputs.prices import load_catalog_csv
from planner.sizing.draws import Draws
from planner.sizing.options import SizedOption
from planner.sizing.sla_series import implied_targets
from tests.planner.builders import scenario, silicon_curves

CATALOG = load_catalog_csv()
FITTED = Draws(samples=1, noise_scale=0.0)
BRIEF = {"workload": {"isl": 1024, "osl": 1024}, "sla": {"ttft_p99_ms": 1000, "tpot_p99_ms": 30}}


def _sized(sla: dict[str, float]) -> list[tuple[str, int]]:
    sc = scenario(
        **(BRIEF | {"sla": sla}),
        candidates={
            "engines": ["vllm", "tensorrt-llm"],
            "gpus": ["H100-SXM-80GB", "H200-SXM-141GB"],
        },
    )
    plan = make_plan(sc, silicon_curves(), CATALOG, draws=FITTED)
    return [(o.title(), o.replicas) for o in plan.options if isinstance(o, SizedOption)]


def test_a_looser_median_beside_a_met_p99_keeps_every_answer() -> None:
    base = _sized({"ttft_p99_ms": 1000, "tpot_p99_ms": 30})
    assert base, "the brief has answers on the silicon sample"
    assert _sized({"ttft_p99_ms": 1000, "tpot_p99_ms": 30, "ttft_p50_ms": 2000}) == base
    assert _sized({"ttft_p99_ms": 1000, "tpot_p99_ms": 30, "tpot_p90_ms": 30}) == base


def test_only_a_higher_percentile_at_a_limit_no_looser_implies() -> None:
    assert implied_targets({"ttft_p99_ms": 1000, "ttft_p50_ms": 2000}) == {
        "ttft_p50_ms": "ttft_p99_ms"
    }
    assert implied_targets({"ttft_p99_ms": 1000, "ttft_p50_ms": 500}) == {}
    assert implied_targets({"ttft_p50_ms": 1000, "ttft_p99_ms": 500}) == {
        "ttft_p50_ms": "ttft_p99_ms"
    }
    assert implied_targets({"tpot_p99_ms": 30, "ttft_p50_ms": 2000}) == {}
    assert implied_targets({"ttft_p99_ms": 1000, "ttft_mean_ms": 2000}) == {}
