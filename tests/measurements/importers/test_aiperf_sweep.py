"""AIPerf sweep and confidence aggregates: goldens are the `mean` values the fixtures hold."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from errors import InputError
from measurements.importers import aiperf, aiperf_sweep, import_bytes
from measurements.importers.common import DeploymentOverrides
from measurements.run_file import LoadKind, Provenance, RunFile

FIXTURES = Path(__file__).parents[2] / "fixtures" / "aiperf" / "aggregates"
SWEEP = FIXTURES / "constructed__profile_export_aiperf_sweep.json"
SINGLE = FIXTURES / "constructed__profile_export_aiperf_sweep_single-run.json"
AGGREGATE = FIXTURES / "constructed__profile_export_aiperf_aggregate.json"
DEPLOYED = DeploymentOverrides(engine="vllm", model="Qwen/Qwen3-0.6B")


def load(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def runs_of(doc: dict[str, Any], overrides: DeploymentOverrides = DEPLOYED) -> list[RunFile]:
    data = json.dumps(doc).encode()
    return aiperf_sweep.parse("sweep.json", doc, data, overrides, Provenance.IMPORTED)


def refusal(doc: dict[str, Any], overrides: DeploymentOverrides = DEPLOYED) -> InputError:
    with pytest.raises(InputError) as caught:
        runs_of(doc, overrides)
    assert caught.value.file == "sweep.json"
    return caught.value


def test_detection_and_auto_import() -> None:
    assert aiperf_sweep.sniff("x", load(SWEEP)) == (
        "AIPerf sweep aggregate profile_export_aiperf_sweep.json (3 combinations)"
    )
    assert "confidence aggregate" in (aiperf_sweep.sniff("x", load(AGGREGATE)) or "")
    assert aiperf_sweep.sniff("x", {"aggregation_type": "sweep"}) is None
    assert aiperf.sniff("x", load(SWEEP)) is None and aiperf.sniff("x", load(AGGREGATE)) is None
    for path in (SWEEP, SINGLE, AGGREGATE):
        imported = import_bytes(path.name, path.read_bytes(), overrides=DEPLOYED)
        assert imported.format_id == "aiperf-sweep"


def test_sweep_is_one_run_with_a_level_per_combination() -> None:
    (run,) = runs_of(load(SWEEP))
    assert [(lv.load_kind, lv.load_value) for lv in run.levels] == [
        (LoadKind.CONCURRENCY, 1),
        (LoadKind.CONCURRENCY, 4),
        (LoadKind.CONCURRENCY, 16),
    ]
    top = run.levels[2]
    assert top.value("request_s") == 12.5  # request_throughput_avg.mean
    assert top.value("p99_ttft_ms") == 252.0  # time_to_first_token_p99.mean
    assert top.value("mean_tpot_ms") == 14.5  # inter_token_latency_avg.mean
    assert top.value("p50_e2e_ms") == 3750.5  # request_latency_p50.mean
    assert top.value("min_ttft_ms") is None  # min across runs is not the distribution's min
    by_name = {m.name: m for m in top.metrics}
    key = "per_combination_metrics[2].metrics.time_to_first_token_p99.mean"
    assert (by_name["p99_ttft_ms"].source_key, by_name["p99_ttft_ms"].source_value) == (key, 252.0)
    assert (run.workload.isl, run.workload.osl) == (512, 250)
    notes = top.notes or ""
    assert "num_profile_runs 9" in notes and "time_to_first_token_p99 217.222..286.778" in notes
    assert "usage_prompt_tokens_diff_pct_avg" in notes  # negative mean, left unmapped
    assert all(level.load_stated for level in run.levels)


def test_single_run_sweep_keys_cells_by_tag_and_a_dotted_parameter() -> None:
    (run,) = runs_of(load(SINGLE))
    assert [lv.load_value for lv in run.levels] == [2, 8]
    first = run.levels[0]
    assert first.value("mean_ttft_ms") == 52.0  # time_to_first_token.mean: the run's avg
    assert first.value("request_s") == 1.8
    assert first.value("max_ttft_ms") is None
    assert "confidence intervals" not in (first.notes or "")  # collapsed to the mean


def test_confidence_aggregate_is_one_level_at_its_variation() -> None:
    (run,) = runs_of(load(AGGREGATE))
    (level,) = run.levels
    assert (level.load_kind, level.load_value, level.load_stated) == (
        LoadKind.CONCURRENCY,
        16,
        True,
    )
    assert level.value("p99_ttft_ms") == 252.0
    assert level.value("p50_tpot_ms") == 14.25
    assert level.value("mean_e2e_ms") == 3750.5
    assert run.environment.client_version == "0.13.0"
    assert "num_profile_runs 3, num_successful_runs 3" in (level.notes or "")


def test_aggregate_without_a_variation_uses_the_users_load_or_the_achieved_rate() -> None:
    doc = load(AGGREGATE)
    del doc["metadata"]["variation_values"]
    (level,) = runs_of(doc)[0].levels
    assert (level.load_kind, level.load_value, level.load_stated) == (LoadKind.RATE, 12.5, False)
    given_load = DEPLOYED.model_copy(update={"concurrency": 32})
    (level,) = runs_of(doc, given_load)[0].levels
    assert (level.load_kind, level.load_value, level.load_stated) == (
        LoadKind.CONCURRENCY,
        32,
        True,
    )
    del doc["metrics"]["request_throughput_avg"]
    assert "--concurrency" in refusal(doc).message


def test_a_second_swept_parameter_splits_the_sweep_into_runs() -> None:
    doc = load(SWEEP)
    for i, entry in enumerate(doc["per_combination_metrics"]):
        entry["parameters"]["isl"] = 128 if i else 512
    runs = runs_of(doc)
    assert sorted(run.label or "" for run in runs) == ["isl=128", "isl=512"]
    assert len({run.source_sha256 for run in runs}) == 2


def test_engine_and_model_must_come_from_the_user() -> None:
    assert refusal(load(SWEEP), DeploymentOverrides(model="m")).field == "engine"


def _combo(doc: dict[str, Any], index: int) -> dict[str, Any]:
    entry: dict[str, Any] = doc["per_combination_metrics"][index]
    return entry


def _metric(doc: dict[str, Any], key: str) -> dict[str, Any]:
    entry: dict[str, Any] = doc["per_combination_metrics"][0]["metrics"][key]
    return entry


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: _metric(d, "time_to_first_token_p99").update(mean=-1), "negative"),
        (lambda d: _metric(d, "time_to_first_token_p99").update(mean="fast"), "number"),
        (lambda d: _metric(d, "request_latency_p50").update(unit="s?"), "time unit"),
        (lambda d: _metric(d, "time_to_first_token_p99").update(unit="s"), "differs"),
        (lambda d: _metric(d, "time_to_first_token_p99").pop("unit"), "unit"),
        (lambda d: _metric(d, "time_to_first_token_p99").update(ci_low="x"), "number"),
        (lambda d: d["per_combination_metrics"][0]["metrics"].update(ttft_p99_ms=3), None),
        (lambda d: d["per_combination_metrics"][0].update(metrics=[]), "object"),
        (lambda d: _combo(d, 0).update(parameters={"concurrency": 0}), "0"),
        (
            lambda d: _combo(d, 0).update(parameters={"concurrency": 1.5}),
            "whole",
        ),
        (lambda d: _combo(d, 1).update(parameters={"concurrency": 1}), "same"),
        (lambda d: d.update(per_combination_metrics=[]), "empty"),
        (lambda d: d["per_combination_metrics"].append(7), "object"),
    ],
)
def test_bad_sweeps_are_refused_naming_the_field(change: Any, expected: str | None) -> None:
    doc = load(SWEEP)
    change(doc)
    if expected is None:  # an unknown key is noted, not refused
        (run,) = runs_of(doc)
        assert "ttft_p99_ms" in (run.levels[0].notes or "")
        return
    error = refusal(doc)
    assert expected in error.message
    assert error.field and error.field.startswith("per_combination_metrics")


_VALUES: st.SearchStrategy[object] = st.sampled_from(
    [None, "x", -1, 0, 1.5, 1e308, True, [], {}, "<delete>"]
)


@settings(max_examples=120, deadline=None)
@given(
    path=st.sampled_from([SWEEP, SINGLE, AGGREGATE]),
    picks=st.lists(
        st.tuples(st.integers(0, 50), st.integers(0, 50), st.integers(0, 3), _VALUES),
        max_size=4,
    ),
)
def test_mutated_aggregates_import_or_raise_input_error(
    path: Path, picks: list[tuple[int, int, int, object]]
) -> None:
    doc = copy.deepcopy(load(path))
    for outer, inner, depth, value in picks:
        _mutate(doc, [outer, inner, outer + inner, outer * 3][: depth + 1], value)
    try:
        imported = import_bytes("fuzz.json", json.dumps(doc).encode(), overrides=DEPLOYED)
    except InputError as exc:
        assert exc.file == "fuzz.json" and exc.message
        return
    assert imported.runs and all(run.levels for run in imported.runs)


def _mutate(node: Any, path: list[int], value: object) -> None:
    """Walk `path` (each step picks a key or an item) and replace or delete what it ends on."""
    for step, pick in enumerate(path):
        if isinstance(node, dict) and node:
            key: Any = sorted(node)[pick % len(node)]
        elif isinstance(node, list) and node:
            key = pick % len(node)
        else:
            return
        if step == len(path) - 1 or not isinstance(node[key], dict | list):
            if value == "<delete>":
                del node[key]
            else:
                node[key] = value
            return
        node = node[key]
