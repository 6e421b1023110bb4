"""AIPerf / GenAI-Perf CSV exports: golden numbers are the cells the fixtures hold."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from errors import InputError
from measurements.importers import aiperf, genai_perf, import_bytes, perf_csv
from measurements.importers.common import DeploymentOverrides
from measurements.run_file import Level, LoadKind, Provenance, RunFile, Source

FIXTURES = Path(__file__).parents[2] / "fixtures"
EARLY = FIXTURES / "aiperf" / "aiperf-examples-run1__profile_export_aiperf_early-format.csv"
EARLY_JSON = EARLY.with_suffix(".json")
CURRENT = FIXTURES / "aiperf" / "constructed__profile_export_aiperf_current.csv"
GENAI = FIXTURES / "genai-perf" / "constructed__profile_export_genai_perf.csv"
GENAI_JSON = FIXTURES / "genai-perf" / "k8s-dev__profile_export_genai_perf.json"
DEPLOYED = DeploymentOverrides(engine="vllm", model="openai/gpt-oss-20b")


def run_of(text: str, overrides: DeploymentOverrides = DEPLOYED) -> RunFile:
    (run,) = perf_csv.parse("export.csv", text, text.encode(), overrides, Provenance.IMPORTED)
    return run


def level_of(text: str, overrides: DeploymentOverrides = DEPLOYED) -> Level:
    (level,) = run_of(text, overrides).levels
    return level


def refusal(text: str, overrides: DeploymentOverrides = DEPLOYED) -> InputError:
    with pytest.raises(InputError) as caught:
        run_of(text, overrides)
    assert caught.value.file == "export.csv"
    return caught.value


def test_detection_names_the_tool_and_the_tables() -> None:
    early, current, genai = (p.read_text(encoding="utf-8") for p in (EARLY, CURRENT, GENAI))
    assert perf_csv.sniff("x", early) == (
        "AIPerf profile_export_aiperf.csv (10 per-request metrics, 11 run totals)"
    )
    assert "GPU telemetry table" in (perf_csv.sniff("x", current) or "")
    assert (perf_csv.sniff("x", genai) or "").startswith("GenAI-Perf profile_export_genai_perf")
    totals_only = "Metric,Value\nRequest Throughput (requests/sec),2.00\n"
    assert (perf_csv.sniff("x", totals_only) or "").startswith("AIPerf or GenAI-Perf")
    assert perf_csv.sniff("x", "source,engine\nx,vllm\n") is None
    assert perf_csv.sniff("x", {"Metric": "avg"}) is None
    for path in (EARLY, CURRENT, GENAI):
        imported = import_bytes(path.name, path.read_bytes(), overrides=DEPLOYED)
        assert imported.format_id == "perf-csv"


def test_early_aiperf_csv_matches_the_cells() -> None:
    run = run_of(EARLY.read_text(encoding="utf-8"))
    (level,) = run.levels
    assert level.value("mean_ttft_ms") == 2343.22  # Time to First Token (ms), avg
    assert level.value("p99_ttft_ms") == 3833.39
    assert level.value("p50_e2e_ms") == 9097.35  # Request Latency (ms), p50
    assert level.value("mean_tpot_ms") == 27.76  # Inter Token Latency: our TPOT
    assert level.value("p99_icl_ms") == 140.53  # Inter Chunk Latency: per-chunk gaps
    assert level.value("stream_tok_s") == 36.68
    assert level.value("request_s") == 9.55  # Request Throughput (requests/sec), Value
    assert level.value("output_tok_s") == 2320.72
    assert level.value("p1_ttft_ms") is None  # p1 has no canonical name
    assert (level.completed, level.failed, level.duration_s) == (89, 11, 9.32)
    assert (level.input_tokens_total, level.output_tokens_total) == (48950, 21624)
    assert (run.workload.isl, run.workload.osl) == (550, 243)
    assert (run.source, run.environment.client) == (Source.AIPERF, "aiperf")
    assert run.started_at is not None and run.started_at.year == 2025
    by_name = {m.name: m for m in level.metrics}
    assert by_name["p99_ttft_ms"].source_key == "Time to First Token (ms) / p99"
    assert by_name["p99_ttft_ms"].source_value == 3833.39
    assert by_name["request_s"].source_key == "Request Throughput (requests/sec) / Value"
    assert "time_to_second_token" in (level.notes or "")
    assert "11 failed requests" in (level.notes or "")


def test_without_a_load_the_achieved_rate_is_kept_and_marked_not_stated() -> None:
    level = level_of(EARLY.read_text(encoding="utf-8"))
    assert (level.load_kind, level.load_value, level.load_stated) == (LoadKind.RATE, 9.55, False)
    assert "--concurrency" in (level.notes or "")


def test_the_users_load_is_used_when_given() -> None:
    text = EARLY.read_text(encoding="utf-8")
    level = level_of(text, DEPLOYED.model_copy(update={"concurrency": 100}))
    assert (level.load_kind, level.load_value, level.load_stated) == (
        LoadKind.CONCURRENCY,
        100,
        True,
    )
    assert "stated by the user" in (level.notes or "")


@pytest.mark.parametrize(("csv_path", "json_path"), [(EARLY, EARLY_JSON), (GENAI, GENAI_JSON)])
def test_csv_numbers_equal_the_json_twin_to_the_two_decimals_written(
    csv_path: Path, json_path: Path
) -> None:
    from_csv = level_of(csv_path.read_text(encoding="utf-8"))
    doc = json.loads(json_path.read_text(encoding="utf-8"))
    importer = aiperf if json_path == EARLY_JSON else genai_perf
    data = json_path.read_bytes()
    (run,) = importer.parse("twin.json", doc, data, DEPLOYED, Provenance.IMPORTED)
    (from_json,) = run.levels
    shared = {m.name for m in from_csv.metrics} & {m.name for m in from_json.metrics}
    assert len(shared) >= 20
    assert {m.name for m in from_csv.metrics} == shared  # the CSV holds nothing the JSON lacks
    for name in shared:
        csv_value, json_value = from_csv.value(name), from_json.value(name)
        assert csv_value is not None and json_value is not None
        assert math.isclose(csv_value, json_value, abs_tol=0.005), name
    assert from_csv.completed == from_json.completed


def test_genai_perf_thousands_separators_and_per_sec_units() -> None:
    run = run_of(GENAI.read_text(encoding="utf-8"))
    (level,) = run.levels
    assert level.value("mean_ttft_ms") == 1524.63  # "1,524.63"
    assert level.value("p99_e2e_ms") == 2645.88  # "2,645.88"
    assert level.value("request_s") == 0.47  # Request Throughput (per sec)
    assert level.value("output_tok_s") == 12.10  # Output Token Throughput (per sec)
    assert level.completed == 35  # Request Count (count)
    assert (run.source, run.environment.client) == (Source.GENAI_PERF, "genai-perf")


def test_current_aiperf_csv_reads_past_the_telemetry_table() -> None:
    run = run_of(CURRENT.read_text(encoding="utf-8"))
    (level,) = run.levels
    assert level.value("mean_ttft_ms") == 82.85
    assert level.value("p99_tpot_ms") == 19.05
    assert (level.completed, level.duration_s) == (100, 519.60)
    assert run.environment.gpu_name == "NVIDIA A100-SXM4-80GB"  # GPU_Name column


def test_engine_and_model_must_come_from_the_user() -> None:
    text = EARLY.read_text(encoding="utf-8")
    assert refusal(text, DeploymentOverrides(model="m")).field == "engine"
    assert refusal(text, DeploymentOverrides(engine="vllm")).field == "model"


def _replace_cell(text: str, label: str, column: int, value: str) -> str:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(label):
            cells = line.split(",")
            cells[column] = value
            lines[i] = ",".join(cells)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("abc", "expected a number"),
        ("nan", "finite"),
        ("-5", "negative"),
        ("1e999", "finite"),
    ],
)
def test_a_bad_cell_is_refused_naming_its_row_and_column(value: str, expected: str) -> None:
    text = _replace_cell(EARLY.read_text(encoding="utf-8"), "Time to First Token", 11, value)
    error = refusal(text)
    assert expected in error.message
    assert "Time to First Token (ms)" in (error.field or "") and "p99" in (error.field or "")


def test_other_bad_inputs_are_refused() -> None:
    early = EARLY.read_text(encoding="utf-8")
    unit = early.replace("Time to First Token (ms)", "Time to First Token (fortnights)")
    assert "time unit" in refusal(unit).message
    twice = early.replace("Inter Token Latency (ms)", "Inter Chunk Latency (ms)")
    assert "twice" in refusal(twice).message
    assert "header has" in refusal(early.replace("27.76,22.13", "27.76,1,22.13")).message
    half = _replace_cell(early, "Request Count", 1, "89.5")
    assert "whole number" in refusal(half).message
    no_rate = "\n".join(line for line in early.splitlines() if "Request Throughput" not in line)
    assert "--concurrency" in refusal(no_rate).message
    with pytest.raises(InputError):
        perf_csv.parse("export.csv", "a,b\n1,2\n", b"", DEPLOYED, Provenance.IMPORTED)


_CELL_VALUES = st.sampled_from(["", "abc", "nan", "-1", "0", "1e999", "1,2", "89.5", "(ms)", '"'])


@settings(max_examples=120, deadline=None)
@given(
    path=st.sampled_from([EARLY, CURRENT, GENAI]),
    edits=st.lists(st.tuples(st.integers(0, 200), st.integers(0, 20), _CELL_VALUES), max_size=4),
    drop=st.lists(st.integers(0, 200), max_size=2),
    load=st.sampled_from([None, 8]),
)
def test_mutated_exports_import_or_raise_input_error(
    path: Path, edits: list[tuple[int, int, str]], drop: list[int], load: int | None
) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    for row, column, value in edits:
        cells = lines[row % len(lines)].split(",")
        cells[column % len(cells)] = value
        lines[row % len(lines)] = ",".join(cells)
    for row in drop:
        if lines:
            del lines[row % len(lines)]
    data = "\n".join(lines).encode()
    overrides = DEPLOYED.model_copy(update={"concurrency": load})
    try:
        imported = import_bytes("fuzz.csv", data, overrides=overrides)
    except InputError as exc:
        assert exc.file == "fuzz.csv" and exc.message
        return
    assert imported.runs and all(run.levels for run in imported.runs)
