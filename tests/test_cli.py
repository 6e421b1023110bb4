"""The capplan CLI end to end on a real SQLite file: import, runs, fit, predict, plan, demo-data."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import openpyxl
import pytest
from typer.testing import CliRunner

from cli import app
from db import scenarios
from db.engine import make_engine
from db.prices import list_prices
from db.run_reads import load_runs
from measurements.importers import import_path
from measurements.run_file import write_run_file
from measurements.sim.server import start_in_thread
from planner.analysis.capacity import make_plan
from planner.curves.load import curve_from_run
from planner.inputs.scenario import load_scenario
from team.roles import SYSTEM
from tests.stores import Stores
from workflows import history

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
C8 = FIXTURES / "vllm-cpu-real" / "c8.json"
SCENARIOS = ROOT / "docs" / "scenarios"

runner = CliRunner()


@pytest.fixture
def db(stores: Stores) -> str:
    return stores.empty()


@pytest.fixture(scope="module")
def demo_db(stores: Stores) -> str:
    url = stores.empty("demo")
    result = runner.invoke(app, ["demo-data", "--db", url, "--json"])
    assert result.exit_code == 0, result.output
    return url


def _json(args: list[str]) -> object:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _runs(db: str) -> list[dict[str, object]]:
    runs = _json(["runs", "--json", "--db", db])
    assert isinstance(runs, list)
    return runs


def test_every_command_has_help_and_is_documented_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = [
        "import",
        "runs",
        "fit",
        "predict",
        "plan",
        "demo-data",
        "app",
        "db upgrade",
        "probe",
        "sim-server",
    ]
    for command in commands:
        result = runner.invoke(app, [*command.split(), "--help"])
        assert result.exit_code == 0, command
        assert "Usage" in result.output
        assert f"capplan {command}" in readme, f"README does not document `capplan {command}`"


def test_import_reports_the_tools_own_numbers_and_second_import_is_a_duplicate(db: str) -> None:
    first = _json(["import", str(C8), "--db", db, "--json"])
    assert isinstance(first, list) and first[0]["created"] is True
    second = _json(["import", str(C8), "--db", db, "--json"])
    assert isinstance(second, list) and second[0]["created"] is False
    assert second[0]["run_id"] == first[0]["run_id"]
    assert "already stored" in str(second[0]["message"])
    runs = _runs(db)
    assert len(runs) == 1
    level = runs[0]["levels"][0]  # type: ignore[index]
    # The numbers `vllm bench serve` printed for this run (c8.json).
    assert level["output_tok_s"] == pytest.approx(4958.706048513109)
    assert level["p99_ttft_ms"] == pytest.approx(53.6081785600561)
    assert level["p50_ttft_ms"] == pytest.approx(17.928565000033814)
    assert level["load_kind"] == "concurrency" and level["load_value"] == 8
    assert runs[0]["deployment"]["engine"] == "vllm"  # type: ignore[index]


def test_import_plain_output_says_duplicate(db: str) -> None:
    runner.invoke(app, ["import", str(C8), "--db", db])
    result = runner.invoke(app, ["import", str(C8), "--db", db])
    assert result.exit_code == 0
    assert "already stored" in result.stdout


def test_bad_file_exits_2_names_the_file_and_stores_nothing(db: str, tmp_path: Path) -> None:
    bad = tmp_path / "truncated.json"
    bad.write_text(C8.read_text(encoding="utf-8")[:300], encoding="utf-8")
    result = runner.invoke(app, ["import", str(C8), str(bad), "--db", db])
    assert result.exit_code == 2
    assert "truncated.json" in result.stderr
    assert _runs(db) == []


def test_unknown_format_lists_what_was_looked_for(db: str, tmp_path: Path) -> None:
    odd = tmp_path / "odd.json"
    odd.write_text('{"hello": 1}', encoding="utf-8")
    result = runner.invoke(app, ["import", str(odd), "--db", db])
    assert result.exit_code == 2
    assert "odd.json" in result.stderr and "vllm" in result.stderr.lower()


def test_deployment_facts_come_from_flags(db: str) -> None:
    args = ["import", str(C8), "--gpu", "H100-SXM-80GB", "--tp", "2", "--gpu-count", "2"]
    _json([*args, "--engine-version", "0.32.0", "--db", db, "--json"])
    deployment = _runs(db)[0]["deployment"]
    assert deployment["gpu"] == "H100-SXM-80GB" and deployment["tp"] == 2  # type: ignore[index]
    assert deployment["engine_version"] == "0.32.0"  # type: ignore[index]


def test_demo_data_is_idempotent(demo_db: str) -> None:
    again = _json(["demo-data", "--db", demo_db, "--json"])
    assert isinstance(again, dict)
    assert again["runs_created"] == 0 and again["runs_already_present"] > 100
    labels = {run["label"] for run in _runs(demo_db)}
    assert "seed-article" in labels and "aiconfigurator-silicon-sample" in labels


def test_fit_reports_held_out_error_per_curve(demo_db: str) -> None:
    fits = _json(["fit", "--json", "--db", demo_db])
    assert isinstance(fits, list) and len(fits) > 50
    fitted = [f for f in fits if f["throughput"]]
    assert fitted, "at least some curves must get a throughput fit"
    assert all("loo_mape_pct" in f["throughput"] for f in fitted)


def test_predict_marks_extrapolation(demo_db: str) -> None:
    seed = next(r for r in _runs(demo_db) if r["label"] == "seed-article")
    document = _json(
        [
            "predict",
            "--run",
            str(seed["run_id"]),
            "--concurrency",
            "8,24,500",
            "--db",
            demo_db,
            "--json",
        ]
    )
    assert isinstance(document, dict)
    flags = [p["extrapolated"] for p in document["predictions"]]
    assert flags == [False, False, True]


def _run_id(db: str, label: str, engine: str, gpu: str, tp: int | None = None) -> int:
    for run in _runs(db):
        deployment = run["deployment"]
        assert isinstance(deployment, dict)
        if (run["label"], deployment["engine"], deployment["gpu"]) == (label, engine, gpu) and (
            tp is None or deployment["tp"] == tp
        ):
            run_id = run["run_id"]
            assert isinstance(run_id, int)
            return run_id
    raise AssertionError(f"no {label} run for {engine} on {gpu}")


def test_predict_flags_the_seed_articles_single_stream_speed_above_the_ceiling(
    demo_db: str,
) -> None:
    run_id = _run_id(demo_db, "seed-article", "tensorrt-llm", "H100-SXM-80GB")
    args = ["predict", "--run", str(run_id), "--concurrency", "1,64", "--db", demo_db]
    document = _json([*args, "--json"])
    assert isinstance(document, dict)
    assert document["provenance"] == "published"
    physics = document["physics"]
    ceiling = physics["ceilings"]["decode_tok_s_single_stream"]
    assert 45 < ceiling < 50  # 3.35 TB/s over ~69.5 GB of FP8 weights read per token
    assert any("81.4 tok/s per stream" in flag for flag in document["flags"])
    first = document["predictions"][0]
    assert first["output_pct_of_ceiling"] > 100  # the fit follows the published point
    plain = runner.invoke(app, args)
    assert plain.exit_code == 0
    assert "above the single-stream decode ceiling" in " ".join(plain.stdout.split())


def test_predict_projects_a_run_onto_the_other_gpu_and_says_so(demo_db: str) -> None:
    run_id = _run_id(demo_db, "aiconfigurator-silicon-sample", "vllm", "H100-SXM-80GB", tp=2)
    base = ["predict", "--run", str(run_id), "--concurrency", "32", "--db", demo_db, "--json"]
    measured = _json(base)
    projected = _json([*base, "--project-to", "H200"])
    assert isinstance(measured, dict) and isinstance(projected, dict)
    assert projected["provenance"] == "projected"
    assert any(flag.startswith("PROJECTED from") for flag in projected["flags"])
    faster = projected["predictions"][0]["output_tok_s"]
    slower = measured["predictions"][0]["output_tok_s"]
    assert 1.05 < faster / slower < 1.43  # more bandwidth helps, never beyond its ratio
    bad_args = ["predict", "--run", str(run_id), "--concurrency", "8", "--project-to", "MI300X"]
    bad = runner.invoke(app, [*bad_args, "--db", demo_db])
    assert bad.exit_code == 2 and "--project-to" in bad.stderr


def test_predict_rejects_bad_concurrency_list(demo_db: str) -> None:
    result = runner.invoke(app, ["predict", "--run", "1", "--concurrency", "8,x", "--db", demo_db])
    assert result.exit_code == 2
    assert "--concurrency" in result.stderr


def test_plan_on_seed_article_answers_from_the_serving_model_and_passes_over_tensorrt_llm(
    demo_db: str,
) -> None:
    # Issue 21: the seed article's 3000/500 was "nothing measured soundly meets the SLA"; vLLM's
    # silicon curves (1024/1024 ... 8192/1024, 2.9-3.4x away) now answer through the serving
    # model, and the article's own table (above one H100's ceilings, no workload) stays passed
    # over.
    document = _json(["plan", str(SCENARIOS / "seed-article-h100.yaml"), "--db", demo_db, "--json"])
    assert isinstance(document, dict)
    rec = document["recommendation"]
    assert isinstance(rec, dict) and str(rec["choice"]).startswith("vllm on H100-SXM-80GB")
    result = runner.invoke(
        app, ["plan", str(SCENARIOS / "seed-article-h100.yaml"), "--db", demo_db]
    )
    assert result.exit_code == 0
    assert result.stdout.startswith("Run vLLM TP")
    text = " ".join(result.stdout.split())
    assert "adjusted by the serving model" in text
    assert "Passed over TensorRT-LLM (TP unknown) on H100 SXM 80GB" in text


def test_plan_exports_xlsx(demo_db: str, tmp_path: Path) -> None:
    target = tmp_path / "plan.xlsx"
    result = runner.invoke(
        app,
        ["plan", str(SCENARIOS / "agent-platform.yaml"), "--db", demo_db, "--export", str(target)],
    )
    assert result.exit_code == 0, result.output
    book = openpyxl.load_workbook(target)
    assert "options" in book.sheetnames


def test_plan_shows_cost_ranges_and_sensitivity_and_exports_them(
    demo_db: str, tmp_path: Path
) -> None:
    scenario = str(SCENARIOS / "agent-platform.yaml")
    args = ["plan", scenario, "--db", demo_db, "--samples", "20", "--sensitivity"]
    document = _json([*args, "--json"])
    assert isinstance(document, dict)
    ranges = document["ranges"]
    assert ranges["samples"] == 20 and "held-out" in ranges["method"]
    assert document["sizing_confidence"] == 0.9
    chosen = document["recommendation"]["choice"]
    sized = [o for o in ranges["options"] if o["nodes"] is not None]
    assert sized and any(o["title"] == chosen for o in sized)
    for option in sized:
        nodes, cost = option["nodes"], option["total_monthly_cost_usd"]
        assert nodes["p10"] <= nodes["p50"] <= nodes["p90"]
        assert cost["p10"] <= cost["p50"] <= cost["p90"]
        assert nodes["p50"] <= option["point_nodes"]  # planned at 90%: at or above the median
    swings = document["sensitivity"]
    labels = [row["input"] for row in swings]
    assert "requests/s at peak" in labels and "SLA TTFT p99, ms" in labels
    demand = next(row for row in swings if row["input"] == "requests/s at peak")
    assert demand["cost_change_low_pct"] <= 0 <= demand["cost_change_high_pct"]
    assert document["recommendation"]["binding_text"]
    plain = runner.invoke(app, args)
    assert plain.exit_code == 0 and "Ranges: 20 error samples per option" in plain.stdout
    target = tmp_path / "plan.xlsx"
    _json([*args, "--export", str(target), "--json"])
    book = openpyxl.load_workbook(target)
    assert {"inputs", "options", "curves", "ranges", "sensitivity"} <= set(book.sheetnames)
    header = [cell.value for cell in book["ranges"][1]]
    assert header[:2] == ["option", "nodes_planned"] and "usd_per_month_p90" in header
    no_ranges = _json(["plan", scenario, "--db", demo_db, "--samples", "0", "--json"])
    assert isinstance(no_ranges, dict) and no_ranges["ranges"] is None


def test_scenario_with_unknown_key_is_rejected(demo_db: str, tmp_path: Path) -> None:
    scenario = tmp_path / "bad.yaml"
    text = (SCENARIOS / "agent-platform.yaml").read_text(encoding="utf-8")
    scenario.write_text(text + "surprise: 1\n", encoding="utf-8")
    result = runner.invoke(app, ["plan", str(scenario), "--db", demo_db])
    assert result.exit_code == 2
    assert "bad.yaml" in result.stderr and "surprise" in result.stderr


def test_db_upgrade_reports_revision(db: str) -> None:
    document = _json(["db", "upgrade", "--db", db, "--json"])
    assert isinstance(document, dict) and document["revision"]


def test_database_url_comes_from_environment(
    stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = stores.empty("env")
    monkeypatch.setenv("CAPPLAN_DB", url)
    _json(["import", str(C8), "--json"])
    assert len(_runs(url)) == 1


def test_runfile_written_by_capplan_imports_with_its_numbers(db: str, tmp_path: Path) -> None:
    run = import_path(C8).runs[0]
    target = tmp_path / "probe-run.json"
    write_run_file(run, target)
    document = _json(["import", str(target), "--db", db, "--json"])
    assert isinstance(document, list) and document[0]["format"] == "runfile"
    level = _runs(db)[0]["levels"][0]  # type: ignore[index]
    assert level["output_tok_s"] == pytest.approx(4958.706048513109)


def test_same_content_under_another_name_is_a_duplicate(db: str, tmp_path: Path) -> None:
    _json(["import", str(C8), "--db", db, "--json"])
    copy = tmp_path / "c8-copy.json"
    shutil.copy(C8, copy)
    again = _json(["import", str(copy), "--db", db, "--json"])
    assert isinstance(again, list) and again[0]["created"] is False


def test_files_of_one_sweep_import_as_one_curve_unless_asked_not_to(
    db: str, stores: Stores
) -> None:
    files = [str(FIXTURES / "vllm-cpu-real" / f"c{c}.json") for c in (1, 8, 32)]
    facts = ["--gpu", "H100-SXM-80GB", "--tp", "1"]
    (row,) = _json(["import", *files, *facts, "--db", db, "--json"])  # type: ignore[misc]
    assert row["levels"] == 3
    fits = _json(["fit", "--json", "--db", db])
    assert isinstance(fits, list) and fits[0]["throughput"] is not None
    other = stores.empty("apart")
    rows = _json(["import", *files, *facts, "--no-merge", "--db", other, "--json"])
    assert isinstance(rows, list) and [r["levels"] for r in rows] == [1, 1, 1]


def test_runs_json_counts_the_stored_samples(db: str) -> None:
    detailed = FIXTURES / "vllm-cpu-real" / "c16-detailed.json"
    _json(["import", str(detailed), "--db", db, "--json"])
    (run,) = _runs(db)
    assert run["samples"] == 128  # the file's own `ttfts` list has 128 entries


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--tp", "0"], "--tp"),
        (["--gpu-count", "0"], "--gpu-count"),
    ],
)
def test_bad_flags_exit_2_naming_the_flag(db: str, args: list[str], field: str) -> None:
    result = runner.invoke(app, ["import", str(C8), *args, "--db", db])
    assert result.exit_code == 2 and field in result.stderr
    assert "Traceback" not in result.output


def test_plan_export_to_a_missing_folder_exits_2(demo_db: str, tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "plan.json"
    result = runner.invoke(
        app,
        ["plan", str(SCENARIOS / "agent-platform.yaml"), "--db", demo_db, "--export", str(target)],
    )
    assert result.exit_code == 2 and "--export" in result.stderr


@pytest.mark.parametrize("value", ["8,nan", "inf", "8,-1"])
def test_non_finite_or_negative_concurrency_is_refused(demo_db: str, value: str) -> None:
    result = runner.invoke(app, ["predict", "--run", "1", "--concurrency", value, "--db", demo_db])
    assert result.exit_code == 2 and "--concurrency" in result.stderr


def test_a_database_url_without_its_driver_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["runs", "--db", "mysql+mysqldb://u:secret@127.0.0.1/x"])
    assert result.exit_code == 2
    assert "secret" not in result.output and "not installed" in result.stderr


def test_probe_sweeps_a_server_writes_the_run_file_and_stores_it(db: str, tmp_path: Path) -> None:
    base_url, stop = start_in_thread("tiny-fast")
    out = tmp_path / "probe.json"
    args = [
        "probe",
        "--base-url",
        base_url,
        "--model",
        "sim-tiny",
        "--isl",
        "64",
        "--osl",
        "16",
        "--concurrency",
        "1,2,4",
        "--no-stop-at-saturation",  # every level, however a busy machine slows the server
        "--requests-per-level",
        "12",
        "--gpu",
        "H100-SXM-80GB",
        "--tp",
        "1",
        "--out",
        str(out),
        "--db",
        db,
        "--json",
    ]
    try:
        document = _json(args)
    finally:
        stop()
    assert isinstance(document, dict) and document["complete"] is True
    assert document["run_id"] is not None and out.exists()
    (run,) = _runs(db)
    assert run["source"] == "probe" and run["provenance"] == "measured"
    assert [level["load_value"] for level in run["levels"]] == [1, 2, 4]  # type: ignore[index]


def test_probe_without_a_server_to_talk_to_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "probe",
            "--model",
            "m",
            "--isl",
            "8",
            "--osl",
            "8",
            "--concurrency",
            "1",
            "--out",
            str(tmp_path / "r.json"),
        ],
    )
    assert result.exit_code == 2 and "--base-url" in result.stderr


def test_a_zip_of_a_results_folder_imports_as_one_sweep(db: str, tmp_path: Path) -> None:
    archive = tmp_path / "results.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for name in ("c1.json", "c8.json"):
            bundle.write(FIXTURES / "vllm-cpu-real" / name, f"results/{name}")
    (row,) = _json(["import", str(archive), "--tp", "1", "--db", db, "--json"])  # type: ignore[misc]
    files = "results.zip/results/c1.json, results.zip/results/c8.json"
    assert row["levels"] == 2 and row["file"] == files


def test_a_result_folders_side_files_are_skipped_with_a_line_a_folder(
    db: str, tmp_path: Path
) -> None:
    """Issue 24 item 3: AIPerf's started_at.txt made the whole zip fail (exit 2); the files left
    out are one line per folder (item 7)."""
    archive = tmp_path / "artifacts.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.write(C8, "run/c8.json")
        bundle.writestr("run/started_at.txt", "2026-12-01T10:00:00")
        bundle.writestr("run/logs/aiperf.log", "INFO profiling started\n")
    result = runner.invoke(app, ["import", str(archive), "--tp", "1", "--db", db])
    assert result.exit_code == 0, result.output
    lines = " ".join(result.stdout.split())
    assert "artifacts.zip/run/c8.json: vLLM bench serve" in lines
    side = "1 file left out: not results (logs, manifests, configs) (1)"
    assert f"artifacts.zip/run/: {side}" in lines
    assert f"artifacts.zip/run/logs/: {side}" in lines
    assert len(_runs(db)) == 1
    only_side = tmp_path / "side.zip"
    with zipfile.ZipFile(only_side, "w") as bundle:
        bundle.writestr("run/started_at.txt", "2026-12-01T10:00:00")
    refused = runner.invoke(app, ["import", str(only_side), "--db", db])
    assert refused.exit_code == 2
    assert "no result file in side.zip (1 file skipped" in " ".join(refused.stderr.split())
    assert len(_runs(db)) == 1


def test_a_zip_with_a_path_traversal_member_is_refused_and_nothing_stored(
    db: str, tmp_path: Path
) -> None:
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.write(C8, "../c8.json")
    result = runner.invoke(app, ["import", str(archive), "--db", db])
    assert result.exit_code == 2 and "evil.zip" in result.stderr and "../c8.json" in result.stderr
    assert _runs(db) == []


def test_load_flag_and_plain_db_path_for_a_file_without_a_stated_load(tmp_path: Path) -> None:
    individual = FIXTURES / "llmperf" / "llmperf-leaderboard__individual__anyscale_70b.json"
    path = tmp_path / "team" / "runs.db"
    args = ["import", str(individual), "--engine", "vllm", "--model", "llama-70b"]
    _json([*args, "--concurrency", "12", "--db", str(path), "--json"])
    (stored,) = load_runs(make_engine(f"sqlite:///{path}"))
    (level,) = stored.run.levels
    assert (level.load_kind.value, level.load_value, level.load_stated) == ("concurrency", 12, True)
    flags = ["--concurrency", "2", "--request-rate", "1", "--db", str(path)]
    both = runner.invoke(app, [*args, *flags])
    assert both.exit_code == 2 and "not both" in both.output


def test_report_writes_each_format_and_refuses_an_unknown_one(demo_db: str, tmp_path: Path) -> None:
    scenario = str(SCENARIOS / "agent-platform.yaml")
    base = ["report", scenario, "--db", demo_db, "--samples", "10", "--no-sensitivity", "--json"]
    target = tmp_path / "report.xlsx"
    summary = _json([*base, "--format", "xlsx", "--out", str(target)])
    assert isinstance(summary, dict) and summary["bytes"] == target.stat().st_size
    book = openpyxl.load_workbook(target)
    assert {"inputs", "options", "runs"} <= set(book.sheetnames)
    document = tmp_path / "report.json"
    _json([*base, "--format", "json", "--out", str(document)])
    saved = json.loads(document.read_text(encoding="utf-8"))
    assert saved["plan"]["recommendation"]["choice"] == summary["recommended"]
    bad = runner.invoke(
        app, ["report", scenario, "--format", "docx", "--out", "x", "--db", demo_db]
    )
    assert bad.exit_code == 2 and "--format" in bad.stderr


def test_report_of_a_plan_record_is_remade_from_its_own_runs_and_prices(
    demo_db: str, tmp_path: Path
) -> None:
    engine = make_engine(demo_db)
    text = (SCENARIOS / "agent-platform.yaml").read_text(encoding="utf-8")
    scenarios.save_scenario(engine, "agent-platform", text, actor=SYSTEM)
    scenario = load_scenario(SCENARIOS / "agent-platform.yaml")
    stored = load_runs(engine)
    curves = [c for c in (curve_from_run(s.run, s.run_id) for s in stored) if c is not None]
    plan = make_plan(scenario, curves, list_prices(engine))
    record = history.record_plan(engine, "agent-platform", plan, curves=curves, actor=SYSTEM)
    target = tmp_path / "audit.json"
    base = ["report", "--record", str(record.record_id), "--format", "json"]
    summary = _json([*base, "--out", str(target), "--samples", "0", "--db", demo_db, "--json"])
    assert isinstance(summary, dict) and summary["matches_record"] is True
    assert summary["monthly_cost_usd"] == record.summary.total_monthly_cost_usd
    saved = json.loads(target.read_text(encoding="utf-8"))
    assert f"plan record {record.record_id}" in saved["title"]
    both = runner.invoke(app, [*base, str(SCENARIOS / "agent-platform.yaml"), "--out", "x"])
    assert both.exit_code == 2 and "one of them" in both.stderr
