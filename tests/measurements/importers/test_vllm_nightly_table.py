"""vLLM nightly benchmark table importer: numbers as the table in the fixture states them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from errors import InputError
from measurements.importers import DeploymentOverrides, import_bytes, import_path
from measurements.run_file import LoadKind, Source

TABLE = (
    Path(__file__).parents[2]
    / "fixtures/vllm-bench-serve/llm-k8s__01_tp8_pp1__benchmark_results.json"
)
FLAGS = DeploymentOverrides(engine="vllm", model="meta-llama/Llama-3.3-70B-Instruct")


def rows() -> list[dict[str, Any]]:
    table: list[dict[str, Any]] = json.loads(TABLE.read_bytes())
    return table


def test_each_row_is_a_level_loaded_from_the_test_name_suffix() -> None:
    imported = import_path(TABLE, overrides=FLAGS)
    (run,) = imported.runs
    assert imported.format_id == "vllm-nightly-table" and run.source == Source.VLLM_BENCH
    kinds = [(level.load_kind, level.load_value) for level in run.levels]
    assert kinds == [
        (LoadKind.RATE, 1.0),
        (LoadKind.RATE, 4.0),
        (LoadKind.RATE, 16.0),
        (LoadKind.CONCURRENCY, 200.0),
    ]
    assert "all 200 requests were sent at once" in (run.levels[3].notes or "")
    assert run.label == "tp8_pp1"


def test_values_match_the_table() -> None:
    (run,) = import_path(TABLE, overrides=FLAGS).runs
    first, *_, last = run.levels
    assert first.value("output_tok_s") == 208.17717816867716
    assert first.value("request_s") == 0.9745666315653629
    assert first.value("p50_ttft_ms") == 56.37217849994158
    assert first.value("p99_tpot_ms") == 28.033566246584865
    assert last.value("total_tok_s") == 3571.6730559792
    assert last.requests_sent == 200


def test_table_itl_is_per_chunk() -> None:
    (run,) = import_path(TABLE, overrides=FLAGS).runs
    level = run.levels[0]
    assert level.value("p99_icl_ms") == 42.95781370012719
    assert not [m for m in level.metrics if "_itl_" in m.name]


def test_tp_and_pp_come_from_the_test_name_and_gpu_column_is_noted() -> None:
    (run,) = import_path(TABLE, overrides=FLAGS).runs
    assert (run.deployment.tp, run.deployment.pp) == (8, 1)
    assert "1xStandard_ND96asr_v4 x 1" in (run.notes or "")


def test_engine_and_model_must_come_from_the_user() -> None:
    with pytest.raises(InputError, match="--engine"):
        import_path(TABLE)
    with pytest.raises(InputError, match="--model"):
        import_path(TABLE, overrides=DeploymentOverrides(engine="vllm"))


def test_two_test_name_prefixes_are_two_runs() -> None:
    table = rows()
    table[0]["Test name"] = "tp4_pp1_qps_01"
    runs = import_bytes("t.json", json.dumps(table).encode(), overrides=FLAGS).runs
    assert [(run.label, len(run.levels)) for run in runs] == [("tp4_pp1", 1), ("tp8_pp1", 3)]
    assert len({run.source_sha256 for run in runs}) == 2


def test_test_name_without_qps_suffix_names_the_row() -> None:
    table = rows()
    table[2]["Test name"] = "tp8_pp1_warmup"
    with pytest.raises(InputError, match="_qps_") as caught:
        import_bytes("t.json", json.dumps(table).encode(), overrides=FLAGS)
    assert caught.value.field == "row 3: Test name" and caught.value.value == "tp8_pp1_warmup"


def test_negative_throughput_is_refused() -> None:
    table = rows()
    table[1]["Output Tput (tok/s)"] = -5
    with pytest.raises(InputError, match="negative") as caught:
        import_bytes("t.json", json.dumps(table).encode(), overrides=FLAGS)
    assert caught.value.field == "row 2: Output Tput (tok/s)"
