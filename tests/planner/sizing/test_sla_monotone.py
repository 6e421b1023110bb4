"""Targets are monotone (issue 21 item 5): a looser target never allows fewer streams per
replica than a tighter one on the same data, whatever statistic the source left unstated:
every target kind loosened by its limit, and each p99 target against the p50 of the same limit."""

from __future__ import annotations

from dataclasses import replace

import pytest

from planner.analysis.capacity import make_plan
from planner.curves.load import CurvePoint, LoadCurve
from planner.inputs.prices import load_catalog_csv
from planner.inputs.sla_targets import SLA_TARGETS
from planner.sizing.options import SizedOption
from tests.planner.builders import scenario, silicon_curves

CATALOG = load_catalog_csv()
CANDIDATES = {"engines": ["vllm"], "gpus": ["H200-SXM-141GB"], "tp": [1, 2]}
WORKLOAD = {"isl": 1024, "osl": 1024}
# A tight and a loose limit per target kind (upper limits grow, min speeds fall).
LIMITS = {
    "ttft_p50_ms": (250.0, 400.0),
    "ttft_p99_ms": (250.0, 400.0),
    "tpot_p99_ms": (24.0, 35.0),
    "min_stream_tok_s": (40.0, 28.0),
    "e2e_p99_ms": (25_000.0, 40_000.0),
}


def _vllm_70b() -> list[LoadCurve]:
    return [c for c in silicon_curves() if c.key.engine == "vllm" and "70B" in c.key.model]


def _stated_as(curves: list[LoadCurve], stat: str) -> list[LoadCurve]:
    """The same numbers, stated as p50 / p99 / mean instead of unstated."""

    def point(p: CurvePoint) -> CurvePoint:
        fields = {"concurrency": p.concurrency, "output_tok_s": p.output_tok_s}
        fields[f"{stat}_ttft_ms"] = p.ttft_ms
        fields[f"{stat}_tpot_ms" if stat != "p99" else "p99_tpot_ms"] = p.tpot_ms
        if stat == "p99":
            fields["p99_e2e_ms"] = (p.ttft_ms or 0) + 1023 * (p.tpot_ms or 0)
        return CurvePoint(**fields)

    return [replace(c, points=tuple(point(p) for p in c.points), flags=()) for c in curves]


def _streams(curves: list[LoadCurve], sla: dict[str, float]) -> dict[object, float]:
    plan = make_plan(
        scenario(
            model="meta-llama/Llama-3.1-70B", workload=WORKLOAD, sla=sla, candidates=CANDIDATES
        ),
        curves,
        CATALOG,
    )
    return {
        o.key: (o.concurrency_per_replica if isinstance(o, SizedOption) else 0.0)
        for o in plan.options
    }


DATA = {
    "unstated": _vllm_70b,
    "p99": lambda: _stated_as(_vllm_70b(), "p99"),
    "mean": lambda: _stated_as(_vllm_70b(), "mean"),
}


def test_every_target_kind_is_in_the_table() -> None:
    assert set(LIMITS) == {t.field for t in SLA_TARGETS}


@pytest.mark.parametrize("data", sorted(DATA))
@pytest.mark.parametrize("field", sorted(LIMITS))
def test_a_looser_limit_never_allows_fewer_streams(field: str, data: str) -> None:
    tight, loose = LIMITS[field]
    curves = DATA[data]()
    at_tight, at_loose = _streams(curves, {field: tight}), _streams(curves, {field: loose})
    assert at_tight.keys() == at_loose.keys()
    for key, streams in at_tight.items():
        assert at_loose[key] >= streams, (key, streams, at_loose[key])


@pytest.mark.parametrize("data", sorted(DATA))
@pytest.mark.parametrize("limit", [250.0, 300.0, 400.0])
def test_a_p50_target_never_allows_fewer_streams_than_the_p99_of_the_same_limit(
    limit: float, data: str
) -> None:
    curves = DATA[data]()
    p50, p99 = _streams(curves, {"ttft_p50_ms": limit}), _streams(curves, {"ttft_p99_ms": limit})
    for key, streams in p99.items():
        assert p50[key] >= streams, (key, p50[key], streams)
