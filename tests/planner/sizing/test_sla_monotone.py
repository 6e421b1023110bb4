"""Targets are monotone (issue 21 item 5, issue 23 item 6): a looser target never allows fewer
streams per replica than a tighter one on the same data, whatever statistic the source stated or
left unstated: every target kind loosened by its limit, and at one limit each lower statistic
(p50, p90, mean) against the p99 of the same metric."""

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
_BY_METRIC = {"ttft": (250.0, 400.0), "tpot": (24.0, 35.0), "e2e": (25_000.0, 40_000.0)}
LIMITS = {
    **{t.field: _BY_METRIC[t.metric] for t in SLA_TARGETS if t.metric in _BY_METRIC},
    "min_stream_tok_s": (40.0, 28.0),
}


def _vllm_70b() -> list[LoadCurve]:
    return [c for c in silicon_curves() if c.key.engine == "vllm" and "70B" in c.key.model]


def _stated_as(curves: list[LoadCurve], stat: str) -> list[LoadCurve]:
    """The same numbers, stated as p50 / p99 / mean instead of unstated."""

    def point(p: CurvePoint) -> CurvePoint:
        fields = {"concurrency": p.concurrency, "output_tok_s": p.output_tok_s}
        fields[f"{stat}_ttft_ms"] = p.ttft_ms
        fields[f"{stat}_tpot_ms"] = p.tpot_ms
        if stat == "p99":
            fields["p99_e2e_ms"] = (p.ttft_ms or 0) + 1023 * (p.tpot_ms or 0)
        return CurvePoint(**fields)

    return [replace(c, points=tuple(point(p) for p in c.points), flags=()) for c in curves]


def _spread(curves: list[LoadCurve]) -> list[LoadCurve]:
    """The same numbers as p50 / mean / p90 / p99 of one spread of requests (each statistic
    above the one before), TTFT, TPOT and e2e."""
    scale = {"p50": 1.0, "mean": 1.1, "p90": 1.3, "p99": 1.8}

    def point(p: CurvePoint) -> CurvePoint:
        fields: dict[str, float | None] = {"output_tok_s": p.output_tok_s}
        for stat, k in scale.items():
            ttft, tpot = (p.ttft_ms or 0.0) * k, (p.tpot_ms or 0.0) * k
            fields |= {f"{stat}_ttft_ms": ttft, f"{stat}_tpot_ms": tpot}
            fields[f"{stat}_e2e_ms"] = ttft + 1023 * tpot
        return CurvePoint(p.concurrency, **fields)

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
    "p90": lambda: _stated_as(_vllm_70b(), "p90"),
    "spread": lambda: _spread(_vllm_70b()),
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
@pytest.mark.parametrize("metric", ["ttft", "tpot", "e2e"])
@pytest.mark.parametrize("stat", ["p50", "p90", "mean"])
def test_a_lower_statistic_never_allows_fewer_streams_than_the_p99_of_the_same_limit(
    stat: str, metric: str, data: str
) -> None:
    curves = DATA[data]()
    limit = _BY_METRIC[metric][1]
    lower = _streams(curves, {f"{metric}_{stat}_ms": limit})
    p99 = _streams(curves, {f"{metric}_p99_ms": limit})
    for key, streams in p99.items():
        assert lower[key] >= streams, (key, lower[key], streams)


def test_each_statistic_reads_its_own_series_where_measured() -> None:
    curves = _spread(_vllm_70b())
    streams = {stat: _streams(curves, {f"ttft_{stat}_ms": 400.0}) for stat in ("p50", "p90", "p99")}
    assert streams["p50"].keys() == streams["p99"].keys()
    key = max(streams["p99"], key=lambda k: streams["p99"][k])
    assert streams["p50"][key] > streams["p90"][key] > streams["p99"][key] > 0, streams


def _with_p99(curves: list[LoadCurve]) -> list[LoadCurve]:
    """Unstated TTFT values and a measured p99 (1.8x) beside them."""

    def point(p: CurvePoint) -> CurvePoint:
        return replace(p, p99_ttft_ms=(p.ttft_ms or 0.0) * 1.8)

    return [replace(c, points=tuple(point(p) for p in c.points), flags=()) for c in curves]


@pytest.mark.parametrize("stat", ["p90", "mean"])
def test_a_target_beside_a_median_on_unstated_values_reads_the_measured_p99(stat: str) -> None:
    curves = _with_p99(_vllm_70b())
    with_p99 = _streams(curves, {"ttft_p50_ms": 400.0, "ttft_p99_ms": 400.0})
    with_lower = _streams(curves, {"ttft_p50_ms": 400.0, f"ttft_{stat}_ms": 400.0})
    assert any(with_p99.values()), with_p99
    for key, streams in with_p99.items():
        assert with_lower[key] >= streams, (key, with_lower[key], streams)
