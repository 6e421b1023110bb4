"""The pages' access layer, called directly: uploads one file at a time, writes bump the version
so cached loaders reload, scenarios round-trip through the store.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from db import run_lists, run_reads
from errors import InputError, ScenarioError
from measurements.importers import DeploymentOverrides
from planner.inputs.scenario import scenario_from_dict
from tests.result_dirs import THREE_RUNS, vllm_file_name, vllm_result
from tests.ui.conftest import FIXTURES
from ui import resources as res
from ui.tables import price_rows

C8 = FIXTURES / "vllm-cpu-real" / "c8.json"
# What `vllm bench serve` printed in c8.json (output_throughput, p99_ttft_ms).
C8_OUTPUT_TOK_S = 4958.71
C8_P99_TTFT_MS = 53.61


def test_upload_stores_good_files_one_by_one_and_rejects_bad_ones(store_url: str) -> None:
    engine = res.store_engine(store_url)
    before = run_lists.list_runs(engine)
    version = res.store_version(store_url)
    files = [
        ("c8.json", C8.read_bytes()),
        ("empty.json", b""),
        ("notes.txt", b"just some words, no benchmark"),
    ]
    outcomes = res.import_uploads(store_url, files, DeploymentOverrides(gpu="H100-SXM-80GB"))
    assert [(o.file, o.status) for o in outcomes] == [
        ("c8.json", "stored"),
        ("empty.json", "rejected"),
        ("notes.txt", "rejected"),
    ]
    assert "empty.json" in outcomes[1].message and "empty" in outcomes[1].message
    assert "notes.txt" in outcomes[2].message and "vllm-bench" in outcomes[2].message
    assert res.store_version(store_url) == version + 1
    after = run_lists.list_runs(engine)
    assert len(after) == len(before) + 1
    stored = run_reads.get_run(engine, outcomes[0].run_id or 0).run
    (level,) = stored.levels
    assert level.value("output_tok_s") == pytest.approx(C8_OUTPUT_TOK_S, abs=0.01)
    assert level.value("p99_ttft_ms") == pytest.approx(C8_P99_TTFT_MS, abs=0.01)
    assert stored.deployment.gpu == "H100-SXM-80GB"  # from the form: the file does not say


def test_files_of_one_sweep_are_stored_as_one_run(store_url: str) -> None:
    files = [
        (name, (FIXTURES / "vllm-cpu-real" / name).read_bytes()) for name in ("c1.json", "c32.json")
    ]
    (outcome,) = res.import_uploads(
        store_url, files, DeploymentOverrides(gpu="H100-SXM-80GB", tp=1)
    )
    assert outcome.status == "stored" and outcome.levels == 2
    assert outcome.file == "c1.json, c32.json"
    run = run_reads.get_run(res.store_engine(store_url), outcome.run_id or 0).run
    assert [level.load_value for level in run.levels] == [1, 32]


def test_uploading_the_same_file_again_stores_nothing(store_url: str) -> None:
    first = res.import_uploads(store_url, [("c8.json", C8.read_bytes())], DeploymentOverrides())
    version = res.store_version(store_url)
    again = res.import_uploads(store_url, [("copy.json", C8.read_bytes())], DeploymentOverrides())
    assert again[0].status == "already stored"
    assert again[0].run_id == first[0].run_id
    assert res.store_version(store_url) == version  # nothing written, nothing to reload


def test_a_file_that_lacks_the_engine_asks_for_the_form(store_url: str) -> None:
    text = C8.read_text(encoding="utf-8").replace('"vllm"', '"openai"')
    (outcome,) = res.import_uploads(
        store_url, [("openai.json", text.encode())], DeploymentOverrides()
    )
    assert outcome.status == "rejected"
    assert "openai.json" in outcome.message and "engine" in outcome.message
    (fixed,) = res.import_uploads(
        store_url,
        [("openai.json", text.encode())],
        res.deployment_overrides({"engine": "sglang", "tp": None}),
    )
    assert fixed.status == "stored"


def test_bad_form_values_name_the_field() -> None:
    with pytest.raises(InputError, match="tp"):
        res.deployment_overrides({"tp": 0})


def test_writes_bump_the_version_so_cached_loaders_reload(store_url: str) -> None:
    version = res.store_version(store_url)
    summaries = res.run_summaries(store_url, version)
    assert res.delete_run(store_url, summaries[0].run_id)
    fresh = res.run_summaries(store_url, res.store_version(store_url))
    assert len(fresh) == len(summaries) - 1
    assert res.run_summaries(store_url, version) == summaries  # the old key still answers


def test_scenarios_round_trip_through_the_store(store_url: str) -> None:
    scenario = scenario_from_dict(
        {
            "name": "agent-platform",
            "model": "meta-llama/Llama-3.1-70B",
            "precision": "fp8",
            "workload": {"isl": 1024, "osl": 1024},
            "demand": {"peak_requests_per_s": 20},
            "sla": {"ttft_p99_ms": 300, "tpot_p99_ms": 30},
            "pricing": {"H100-SXM-80GB": 2.5},
        }
    )
    res.save_scenario(store_url, scenario)
    assert res.load_scenario(store_url, "agent-platform") == scenario
    names = [r.name for r in res.saved_scenarios(store_url, res.store_version(store_url))]
    assert names == ["agent-platform"]


def test_plan_for_uses_the_stored_prices(store_url: str) -> None:
    raw = {
        "name": "p",
        "model": "meta-llama/Llama-3.1-70B",
        "precision": "fp8",
        "workload": {"isl": 1024, "osl": 1024},
        "demand": {"peak_requests_per_s": 5},
        "candidates": {"engines": ["vllm"], "gpus": ["H200-SXM-141GB"]},
    }
    plan = res.plan_for(scenario_from_dict(raw), store_url, res.store_version(store_url))
    rows = price_rows(res.price_catalog(store_url, res.store_version(store_url)))
    for row in rows:
        if row["gpu"] == "H200-SXM-141GB" and row["is_default"]:
            row["usd_per_gpu_hour"] = 9.0
    res.save_price_rows(store_url, rows)
    repriced = res.plan_for(scenario_from_dict(raw), store_url, res.store_version(store_url))
    assert {o.usd_per_gpu_hour for o in plan.options} == {3.5}  # the shipped Nebius default
    assert {o.usd_per_gpu_hour for o in repriced.options} == {9.0}


def test_a_scenario_file_opens_and_a_bad_one_names_the_key() -> None:
    path = Path(__file__).parents[2] / "docs" / "scenarios" / "seed-article-h100.yaml"
    scenario = res.scenario_from_upload(path.name, path.read_bytes())
    assert scenario.options.max_streams_per_replica == 64
    with pytest.raises(ScenarioError) as info:
        res.scenario_from_upload("odd.yaml", path.read_bytes() + b"surprise: 1\n")
    assert "odd.yaml" in str(info.value) and "surprise" in str(info.value)


def _zip_bytes(members: list[tuple[str, bytes]]) -> bytes:
    import io  # local: this test was appended to a file whose imports stay as they were
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for member, content in members:
            archive.writestr(member, content)
    return buffer.getvalue()


def test_an_uploaded_zip_is_expanded_and_a_refused_zip_is_one_rejection(store_url: str) -> None:
    real = FIXTURES / "vllm-cpu-real"
    sweep = _zip_bytes(
        [(f"results/{name}", (real / name).read_bytes()) for name in ("c1.json", "c8.json")]
        + [("results/notes.txt", b"just some words"), ("__MACOSX/results/._c1.json", b"\0")]
    )
    evil = _zip_bytes([("../c32.json", (real / "c32.json").read_bytes())])
    files = [
        ("evil.zip", evil),
        ("sweep.zip", sweep),
        ("c32.json", (real / "c32.json").read_bytes()),
    ]
    outcomes = res.import_uploads(store_url, files, DeploymentOverrides(gpu="H100-SXM-80GB", tp=1))
    assert [(o.file, o.status) for o in outcomes] == [
        ("evil.zip", "rejected"),
        ("sweep.zip/results/c1.json, sweep.zip/results/c8.json, c32.json", "stored"),
        ("sweep.zip/results/notes.txt", "skipped"),
    ]
    assert "evil.zip: member '../c32.json'" in outcomes[0].message
    run = run_reads.get_run(res.store_engine(store_url), outcomes[1].run_id or 0).run
    assert [level.load_value for level in run.levels] == [1, 8, 32]
    assert run.levels[1].value("output_tok_s") == pytest.approx(C8_OUTPUT_TOK_S, abs=0.01)


def test_a_folder_upload_and_a_zip_of_a_vllm_result_dir_store_every_run(store_url: str) -> None:
    """Issue 30 item 1: the Runs page's upload of `--result-dir results/` (two models, two
    days at one load) stored 1 of 3 runs, the others left out as copies."""
    files = [
        (f"results/{vllm_file_name(model, date)}", vllm_result(model, date, slower))
        for model, date, slower in THREE_RUNS
    ]
    facts = DeploymentOverrides(engine="vllm", gpu="H100-SXM-80GB", tp=1)
    outcomes = res.import_uploads(store_url, files, facts)
    assert [(o.file, o.status) for o in outcomes] == [(name, "stored") for name, _ in files]
    again = res.import_uploads(store_url, [("results.zip", _zip_bytes(files))], facts)
    assert [(o.file, o.status) for o in again] == [
        (f"results.zip/{name}", "already stored") for name, _ in files
    ]
