"""guidellm CSV importer: the fixture's cells were copied from the real v2 JSON report, so the
CSV import must equal the JSON import (and the numbers guidellm wrote into the JSON)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from errors import InputError
from measurements.importers import decode, guidellm, guidellm_csv
from measurements.importers.common import DeploymentOverrides
from measurements.run_file import LoadKind, Provenance, RunFile

FIXTURES = Path(__file__).parents[2] / "fixtures" / "guidellm"
CSV = FIXTURES / "benchmarks.csv"
V2 = FIXTURES / "llm-d-benchmark__guidellm_report_v2.json"
CURVE_CSVS = sorted((Path(__file__).parents[3] / "measurements" / "demo" / "data").glob("*.csv"))
VLLM = DeploymentOverrides(engine="vllm")


def parse_text(text: str, name: str = "benchmarks.csv") -> RunFile:
    data = text.encode()
    (run,) = guidellm_csv.parse(name, decode(name, data), data, VLLM, Provenance.IMPORTED)
    return run


def csv_run() -> RunFile:
    return parse_text(CSV.read_text(encoding="utf-8"))


def json_run() -> RunFile:
    data = V2.read_bytes()
    (run,) = guidellm.parse(V2.name, decode(V2.name, data), data, VLLM, Provenance.IMPORTED)
    return run


def json_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(V2.read_text(encoding="utf-8"))
    return doc


def table() -> list[list[str]]:
    return list(csv.reader(CSV.read_text(encoding="utf-8").splitlines()))


def text_of(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def test_sniff_names_the_csv_and_its_benchmark_count() -> None:
    doc = decode(CSV.name, CSV.read_bytes())
    assert guidellm_csv.sniff(CSV.name, doc) == "guidellm CSV, 2 benchmarks"


@pytest.mark.parametrize("path", CURVE_CSVS, ids=lambda p: p.name)
def test_curve_csvs_are_not_guidellm(path: Path) -> None:
    assert guidellm_csv.sniff(path.name, decode(path.name, path.read_bytes())) is None


@pytest.mark.parametrize(
    "doc",
    [
        "a,b,c\n1,2,3\n4,5,6\n7,8,9\n",
        "Request Latency\nSuccessful s\nMean,Percentiles\n",  # headers only, no benchmark row
        "Foo,Foo\nSuccessful s,Successful s\nMean,Percentiles\n1,[1]\n",  # no known metric group
        {"benchmarks": []},
        ["Request Latency"],
    ],
)
def test_other_documents_are_not_guidellm_csv(doc: object) -> None:
    assert guidellm_csv.sniff("x.csv", doc) is None


def test_csv_levels_equal_the_json_levels_for_every_metric() -> None:
    from_csv, from_json = csv_run(), json_run()
    assert len(from_csv.levels) == len(from_json.levels) == 2
    for c, j in zip(from_csv.levels, from_json.levels, strict=True):
        csv_metrics = {m.name: m.value for m in c.metrics}
        json_metrics = {m.name: m.value for m in j.metrics}
        assert csv_metrics == json_metrics
        assert len(csv_metrics) == 36
        assert (c.load_kind, c.load_value, c.burst) == (j.load_kind, j.load_value, j.burst)
        assert (c.duration_s, c.completed, c.failed, c.incomplete, c.requests_sent) == (
            j.duration_s,
            j.completed,
            j.failed,
            j.incomplete,
            j.requests_sent,
        )
        assert c.notes == j.notes
    assert from_csv.deployment == from_json.deployment
    assert from_csv.workload == from_json.workload
    assert from_csv.started_at == from_json.started_at


def test_csv_numbers_are_the_ones_guidellm_wrote_in_the_json() -> None:
    level = csv_run().levels[0]
    metrics = json_doc()["benchmarks"][0]["metrics"]
    ttft = metrics["time_to_first_token_ms"]["successful"]
    assert level.value("mean_ttft_ms") == ttft["mean"]
    assert level.value("p99_ttft_ms") == ttft["percentiles"]["p99"]
    assert level.value("max_ttft_ms") == ttft["max"]
    itl = metrics["inter_token_latency_ms"]["successful"]
    assert level.value("p50_tpot_ms") == itl["median"]
    assert level.value("p90_tpot_ms") == itl["percentiles"]["p90"]
    latency = metrics["request_latency"]["successful"]
    assert level.value("mean_e2e_ms") == pytest.approx(latency["mean"] * 1000)
    assert level.value("output_tok_s") == metrics["output_tokens_per_second"]["successful"]["mean"]
    assert level.load_kind is LoadKind.RATE
    assert level.load_value == 2.0


def test_metric_sources_name_the_json_path_the_value_stands_for() -> None:
    metric = next(m for m in csv_run().levels[1].metrics if m.name == "p95_ttft_ms")
    assert metric.source_key == "metrics.time_to_first_token_ms.successful.percentiles.p95"
    expected = json_doc()["benchmarks"][1]["metrics"]["time_to_first_token_ms"]["successful"]
    assert metric.source_value == expected["percentiles"]["p95"]


def test_group_written_once_is_carried_to_its_blank_neighbours() -> None:
    rows = table()
    groups = rows[0]
    rows[0] = [g if i == 0 or g != groups[i - 1] else "" for i, g in enumerate(groups)]
    assert rows[0].count("") > 10
    assert parse_text(text_of(rows)).levels == csv_run().levels


def test_bad_percentiles_cell_names_row_and_column() -> None:
    text = CSV.read_text(encoding="utf-8").replace("[", "[oops, ", 1)
    with pytest.raises(InputError) as err:
        parse_text(text)
    message = str(err.value)
    assert "row 4" in message
    assert "Request Latency / Successful s / Percentiles" in message
    assert "benchmarks.csv" in message


def test_bad_number_names_the_value() -> None:
    rows = table()
    assert (rows[0][5], rows[1][5]) == ("Timings", "Duration")
    rows[3][5] = "five"
    with pytest.raises(InputError, match="five") as err:
        parse_text(text_of(rows))
    assert "Timings / Duration" in str(err.value)


def test_missing_strategy_column_is_an_input_error() -> None:
    text = CSV.read_text(encoding="utf-8").replace("Strategy", "Flavour", 1)
    with pytest.raises(InputError, match="Strategy"):
        parse_text(text)


def test_a_blank_successful_cell_leaves_that_metric_unknown() -> None:
    rows = table()
    col = next(
        i
        for i, header in enumerate(zip(rows[0], rows[1], rows[2], strict=True))
        if header == ("Time to First Token", "Successful ms", "Mean")
    )
    rows[3][col] = ""
    level = parse_text(text_of(rows)).levels[0]
    assert level.value("mean_ttft_ms") is None
    assert level.value("p50_ttft_ms") is not None


def test_parse_refuses_a_non_guidellm_csv() -> None:
    with pytest.raises(InputError, match="not a guidellm"):
        parse_text("a,b\n1,2\n3,4\n5,6\n", name="curve.csv")
