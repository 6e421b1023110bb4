"""Curve CSV importer: the shipped CSVs, stat columns, comments, blanks and bad rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from errors import InputError
from measurements.importers import import_bytes, import_path
from measurements.run_file import LoadKind, Origin, Provenance, Source

DATA = Path(__file__).parents[3] / "measurements/demo/data"
SEED = DATA / "seed_article_h100_llama31_70b_fp8.csv"
SILICON = DATA / "silicon_sample_h100_h200.csv"
HEADER = (
    "source,engine,engine_version,model,precision,gpu,gpu_count,tp,isl,osl,load_type,"
    "concurrency_or_rate,output_tok_s,total_tok_s,request_s,ttft_ms,ttft_stat,ttft_ms_p50,"
    "ttft_ms_p99,tpot_ms,tpot_stat,tpot_ms_p99,itl_ms,e2e_latency_ms,e2e_stat,notes"
)
IDENT = "lab,vLLM,0.8.0,m,fp8,H100-SXM-80GB,8,8,1000,200"


def csv_bytes(*rows: str, header: str = HEADER) -> bytes:
    return "\n".join(["# hand-made", header, *rows]).encode()


def row(load: str = "concurrency,8", metrics: str = "100,,,,,,,,,,,,,") -> str:
    return f"{IDENT},{load},{metrics}"


def test_seed_article_is_two_runs_of_four_levels() -> None:
    imported = import_path(SEED, provenance=Provenance.PUBLISHED)
    vllm, trt = imported.runs
    assert imported.format_id == "curve-csv"
    assert [run.deployment.engine for run in imported.runs] == ["vllm", "tensorrt-llm"]
    assert [level.value("output_tok_s") for level in vllm.levels] == [68.2, 1010, 2840, 3710]
    assert [level.value("output_tok_s") for level in trt.levels] == [81.4, 1240, 3620, 4890]
    assert [level.load_value for level in vllm.levels] == [1, 16, 64, 128]
    assert vllm.levels[2].value("p50_ttft_ms") == 24.2
    assert vllm.levels[2].value("p99_ttft_ms") == 62.4
    assert vllm.levels[0].notes == "single-stream decode speed"
    assert (vllm.source, vllm.label, vllm.provenance) == (
        Source.CURVE_CSV,
        "seed-article",
        Provenance.PUBLISHED,
    )
    assert "14 min engine build" in (vllm.notes or "")  # '#' comment lines become notes


def test_blank_cells_are_unknown_never_zero() -> None:
    (vllm, _) = import_path(SEED).runs
    assert vllm.deployment.tp is None and vllm.workload.isl is None
    assert [m.name for m in vllm.levels[1].metrics] == ["output_tok_s"]


def test_silicon_derived_output_and_unspecified_ttft() -> None:
    runs = import_path(SILICON).runs
    level = runs[0].levels[0]
    (output,) = [m for m in level.metrics if m.name == "output_tok_s"]
    assert (output.value, output.origin, output.source_key) == (
        204.57,
        Origin.DERIVED,
        "derived_output_tok_s",
    )
    assert level.value("ttft_ms") == 6775.54  # "unspecified" statistic: the bare name
    assert level.value("tpot_ms") == 25.476
    assert runs[0].deployment.engine_version == "0.5.8.post1"


@pytest.mark.parametrize(
    ("stat", "name"),
    [("mean", "mean_ttft_ms"), ("median", "p50_ttft_ms"), ("P99", "p99_ttft_ms"), ("", "ttft_ms")],
)
def test_ttft_stat_column_chooses_the_statistic(stat: str, name: str) -> None:
    (run,) = import_bytes("c.csv", csv_bytes(row(metrics=f",,,50,{stat},,,,,,,,,"))).runs
    assert run.levels[0].value(name) == 50


def test_itl_and_e2e_columns() -> None:
    (run,) = import_bytes("c.csv", csv_bytes(row(metrics=",,,,,,,,,,3.5,900,p99,"))).runs
    assert run.levels[0].value("itl_ms") == 3.5
    assert run.levels[0].value("p99_e2e_ms") == 900


def test_engine_is_lowercased_and_rate_rows_are_rate_levels() -> None:
    data = csv_bytes(row(), row("RATE,2.5"))
    (run,) = import_bytes("c.csv", data).runs
    assert run.deployment.engine == "vllm" and run.notes == "hand-made"
    assert [(level.load_kind, level.load_value) for level in run.levels] == [
        (LoadKind.CONCURRENCY, 8),
        (LoadKind.RATE, 2.5),
    ]


def test_missing_column_names_the_column() -> None:
    header = HEADER.replace("concurrency_or_rate,", "conc,")
    with pytest.raises(InputError) as caught:
        import_bytes("c.csv", csv_bytes(row(), header=header), format_id="curve-csv")
    assert caught.value.field == "concurrency_or_rate"


def test_missing_column_in_a_curve_like_header_names_the_column() -> None:
    header = HEADER.replace("engine_version,", "")
    bad_row = row().replace("0.8.0,", "", 1)
    with pytest.raises(InputError) as caught:
        import_bytes("c.csv", csv_bytes(bad_row, header=header))
    assert caught.value.field == "engine_version"


def test_unknown_column_is_refused() -> None:
    header = HEADER.replace("ttft_ms_p99", "ttft_p99")
    with pytest.raises(InputError) as caught:
        import_bytes("c.csv", csv_bytes(row(), header=header))
    assert caught.value.field == "ttft_p99"


@pytest.mark.parametrize(
    ("bad", "column", "value", "message"),
    [
        (row(metrics="fast,,,,,,,,,,,,,"), "output_tok_s", "fast", "not a number"),
        (row(metrics="-3,,,,,,,,,,,,,"), "output_tok_s", "-3", "negative"),
        (row(metrics="nan,,,,,,,,,,,,,"), "output_tok_s", "nan", "finite"),
        (row("bursty,8"), "load_type", "bursty", "concurrency or rate"),
        (row("concurrency,0"), "concurrency_or_rate", "0", "greater than 0"),
        (row().replace(",8,8,", ",8,2.5,"), "tp", "2.5", "whole number"),
    ],
)
def test_bad_cell_names_file_row_column_and_value(
    bad: str, column: str, value: str, message: str
) -> None:
    with pytest.raises(InputError, match=message) as caught:
        import_bytes("c.csv", csv_bytes(row("concurrency,1"), bad))
    assert caught.value.file == "c.csv" and caught.value.field == column
    assert caught.value.value == value and "row 4" in str(caught.value)


def test_row_with_wrong_number_of_cells_is_refused() -> None:
    with pytest.raises(InputError, match="row 3: has 27 values"):
        import_bytes("c.csv", csv_bytes(row() + ",extra"))


def test_a_row_repeating_an_earlier_rows_numbers_is_counted_once_and_said() -> None:
    (run,) = import_bytes("c.csv", csv_bytes(row(), row())).runs
    assert len(run.levels) == 1
    assert "row 4 repeats row 3's numbers: counted once" in (run.notes or "")


def test_a_load_measured_again_with_other_numbers_is_a_repeat_run_not_an_error() -> None:
    first, again = import_bytes(
        "c.csv", csv_bytes(row(), row("concurrency,16"), row(metrics="90,,,,,,,,,,,,,"))
    ).runs
    assert [lv.load_value for lv in first.levels] == [8, 16]
    assert [lv.value("output_tok_s") for lv in again.levels] == [90]
    assert again.label == "lab (repeat 2)" and first.label == "lab"
    assert first.source_sha256 != again.source_sha256


def test_serving_configurations_in_the_notes_split_a_sweep_into_runs() -> None:
    # NVIDIA's sample: TP, expert parallel, attention DP and quantisation in the notes column.
    ep8 = "id=a; moe_tp=1; moe_ep=8; attention_dp=1; gemm_quant=fp8; pp=1"
    tp8 = "id=b; moe_tp=8; moe_ep=1; attention_dp=1; gemm_quant=fp8; pp=1"
    metrics = "100,,,,,,,,,,,,,{}"
    by_ep, by_tp = import_bytes(
        "c.csv",
        csv_bytes(row(metrics=metrics.format(ep8)), row(metrics=metrics.format(tp8))),
    ).runs
    assert by_ep.deployment.engine_args["moe_ep"] == "8" and by_ep.deployment.pp is None  # pp=1
    assert by_tp.deployment.engine_args["moe_tp"] == "8"
    assert "id" not in by_ep.deployment.engine_args  # a row's id is not a configuration


def test_a_load_written_4_and_4_0_is_one_load() -> None:
    first, again = import_bytes(
        "c.csv", csv_bytes(row("concurrency,4"), row("concurrency,4.0", "90,,,,,,,,,,,,,"))
    ).runs
    assert [lv.load_value for lv in first.levels] == [4] and again.label == "lab (repeat 2)"


def test_the_blackwell_moe_sample_imports_one_run_per_configuration() -> None:
    imported = import_path(DATA / "silicon_sample_2026_blackwell_moe.csv")
    runs = imported.runs
    assert len(runs) > 300
    layouts = {
        (r.deployment.tp, r.deployment.gpu_count, r.deployment.engine_args.get("attention_dp"))
        for r in runs
        if r.deployment.model == "deepseek-ai/DeepSeek-R1" and r.deployment.engine == "tensorrt-llm"
    }
    # attention DP 1 is left unstated where nothing else in its group differs (as stored before)
    assert (1, 64, "64") in layouts and (8, 8, None) in layouts


def test_header_without_rows_is_refused() -> None:
    with pytest.raises(InputError, match="no data rows"):
        import_bytes("c.csv", csv_bytes())


@pytest.mark.parametrize("stat", ["p75", "p999", "trimmed mean"])
def test_a_statistic_with_no_canonical_name_is_refused_not_stored_as_unstated(stat: str) -> None:
    with pytest.raises(InputError) as info:
        import_bytes("c.csv", csv_bytes(row(metrics=f",,,50,{stat},,,,,,,,,")))
    message = str(info.value)
    assert "c.csv" in message and "ttft_stat" in message and stat in message


def test_min_and_max_statistics_keep_their_names() -> None:
    (run,) = import_bytes("c.csv", csv_bytes(row(metrics=",,,50,min,,,,,,,,,"))).runs
    assert run.levels[0].value("min_ttft_ms") == 50 and run.levels[0].value("ttft_ms") is None
