"""A result folder is grouped by what makes a run (issue 30 item 1): files are one run only
when they share deployment, workload, the tool's run identity and the numbers. vLLM's
`--result-dir` holds several models and days side by side; AIPerf's, guidellm's and
inference-perf's real folders still read as one run per tool run."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from db import run_reads
from db.engine import Engine, make_engine
from measurements.importers import import_bytes
from measurements.importers.common import DeploymentOverrides
from team.roles import SYSTEM
from tests.result_dirs import (
    FIXTURES,
    REAL_C1,
    THREE_RUNS,
    vllm_file_name,
    vllm_result,
    write_three_runs,
    zip_of,
)
from tests.stores import Stores
from workflows.ingest import FileOutcome, IngestOptions, IngestStatus, Upload, ingest, read_uploads
from workflows.result_folders import Member, folder_verdicts
from workflows.run_identity import RunPrint, fingerprint, same_measurement, same_run

FACTS = DeploymentOverrides(engine="vllm", gpu="H100-SXM-80GB", tp=1)
OPTIONS = IngestOptions(FACTS, atomic=True)
TINY = DeploymentOverrides(engine="vllm", model="tiny-random-llama", gpu="H100-SXM-80GB", tp=1)
AIPERF_C1 = FIXTURES / "aiperf" / "real-0.13.0" / "c1"


@pytest.fixture
def engine(stores: Stores) -> Iterator[Engine]:
    made = make_engine(stores.migrated("run-identity"))
    yield made
    made.dispose()


def _by_status(outcomes: list[FileOutcome], status: IngestStatus) -> list[FileOutcome]:
    return [o for o in outcomes if o.status is status]


def _models(engine: Engine, outcomes: list[FileOutcome]) -> list[str]:
    stored = _by_status(outcomes, IngestStatus.STORED)
    return sorted(run_reads.get_run(engine, o.run_id or 0).run.deployment.model for o in stored)


def test_a_vllm_result_dir_of_two_models_and_two_days_stores_three_runs(
    engine: Engine, tmp_path: Path
) -> None:
    written = write_three_runs(tmp_path / "results")
    outcomes = ingest(engine, read_uploads([tmp_path / "results"]), OPTIONS, actor=SYSTEM)
    assert [(o.file, o.status) for o in outcomes] == [
        (f"results/{path.name}", IngestStatus.STORED) for path in written
    ]
    assert _models(engine, outcomes) == sorted(model for model, _, _ in THREE_RUNS)
    again = ingest(engine, read_uploads([tmp_path / "results"]), OPTIONS, actor=SYSTEM)
    assert [o.status for o in again] == [IngestStatus.DUPLICATE] * 3


def test_a_zip_of_the_vllm_result_dir_stores_three_runs(engine: Engine, tmp_path: Path) -> None:
    written = write_three_runs(tmp_path / "results")
    data = zip_of([(f"results/{p.name}", p.read_bytes()) for p in written], folder_entry="results")
    outcomes = ingest(engine, [Upload("results.zip", data)], OPTIONS, actor=SYSTEM)
    assert [o.status for o in outcomes] == [IngestStatus.STORED] * 3
    assert all(o.file.startswith("results.zip/results/vllm-") for o in outcomes)


def test_one_model_at_one_load_on_two_days_with_other_numbers_is_two_runs(
    engine: Engine, tmp_path: Path
) -> None:
    model = "meta-llama/Llama-3.1-8B-Instruct"
    folder = tmp_path / "results"
    folder.mkdir()
    for date, slower in (("20250301-101010", 1.0), ("20250302-101010", 1.1)):
        (folder / vllm_file_name(model, date)).write_bytes(vllm_result(model, date, slower))
    outcomes = ingest(engine, read_uploads([folder]), OPTIONS, actor=SYSTEM)
    stored = _by_status(outcomes, IngestStatus.STORED)
    assert len(stored) == 2 and all(o.levels == 1 for o in stored)


def test_the_same_numbers_saved_twice_are_one_run_and_other_numbers_are_their_own(
    engine: Engine, tmp_path: Path
) -> None:
    # One date: the tool's run identity cannot tell them apart, the numbers do.
    model, date = "Qwen/Qwen3-32B", "20250302-121212"
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "a.json").write_bytes(vllm_result(model, date))
    (folder / "b-copy-of-a.json").write_bytes(vllm_result(model, date))
    (folder / "c-other-numbers.json").write_bytes(vllm_result(model, date, 1.02))
    outcomes = ingest(engine, read_uploads([folder]), OPTIONS, actor=SYSTEM)
    assert [(o.file, o.status) for o in outcomes] == [
        ("results/a.json", IngestStatus.STORED),
        ("results/b-copy-of-a.json", IngestStatus.SKIPPED),
        ("results/c-other-numbers.json", IngestStatus.STORED),
    ]
    assert outcomes[1].message == "skipped: another export of the run kept from a.json"


def test_a_result_that_cannot_be_read_beside_another_run_is_refused_on_its_own(
    engine: Engine, tmp_path: Path
) -> None:
    folder = tmp_path / "results"
    write_three_runs(folder)
    broken = json.loads(vllm_result("Qwen/Qwen3-32B", "20250303-090000"))
    broken["completed"] = -1
    (folder / "vllm-broken.json").write_text(json.dumps(broken))
    outcomes = ingest(engine, read_uploads([folder]), IngestOptions(FACTS), actor=SYSTEM)
    (refused,) = _by_status(outcomes, IngestStatus.REJECTED)
    assert refused.file == "results/vllm-broken.json" and "completed" in refused.message
    assert len(_by_status(outcomes, IngestStatus.STORED)) == 3


def test_a_zip_of_2000_results_of_2000_models_stores_2000_runs(engine: Engine) -> None:
    members = []
    for index in range(2000):
        model, date = f"org/model-{index:04d}", f"2025{1 + index % 12:02d}01-{index % 24:02d}0000"
        members.append(
            (f"results/{vllm_file_name(model, date, 1)}", vllm_result(model, date, 1.0, REAL_C1))
        )
    data = zip_of(members, folder_entry="results")
    started = time.perf_counter()
    outcomes = ingest(engine, [Upload("results.zip", data)], OPTIONS, actor=SYSTEM)
    elapsed_s = time.perf_counter() - started
    assert len(_by_status(outcomes, IngestStatus.STORED)) == 2000, outcomes[:3]
    assert len(outcomes) == 2000
    assert elapsed_s < 60, f"2,000 runs took {elapsed_s:.1f} s"


def test_every_file_of_the_real_tool_folders_ends_in_one_outcome(
    engine: Engine, tmp_path: Path
) -> None:
    results = tmp_path / "results"
    for tool, real in (
        ("vllm-bench", "vllm-bench-serve/real-0.32.0"),
        ("aiperf", "aiperf/real-0.13.0"),
        ("guidellm", "guidellm/real-0.8.1"),
        ("inference-perf", "inference-perf/real-0.7.0"),
    ):
        shutil.copytree(FIXTURES / real, results / tool)
    write_three_runs(results / "vllm-result-dir")
    for peer in (FIXTURES / "vllm-bench-serve").glob("*__*.json"):  # 4 shared deployments
        shutil.copy(peer, results / "vllm-result-dir")
    uploads = read_uploads([results])
    outcomes = ingest(engine, uploads, IngestOptions(FACTS), actor=SYSTEM)
    assert sorted(name for o in outcomes for name in o.files) == sorted(u.name for u in uploads)
    stored = _by_status(outcomes, IngestStatus.STORED)
    # vLLM's, AIPerf's and guidellm's c1, c4 and rate 2 are one sweep each; the result dir's
    # three runs are three, and three of the four shared peers' (the fourth names no model).
    assert sorted(o.levels for o in stored) == [1, 1, 1, 1, 1, 1, 3, 3, 3]
    refused = _by_status(outcomes, IngestStatus.REJECTED)
    (nightly,) = [o for o in refused if "llm-k8s__" in o.file]
    assert "field 'model'" in nightly.message
    # inference-perf's files name no model: one refusal per run, its other exports said so.
    refused.remove(nightly)
    assert sorted(o.file.split("/")[2] for o in refused) == ["c1", "c4", "rate2"]
    copies = [o.message for o in outcomes if o.file.startswith("results/inference-perf/c1/")]
    assert sum("refused as per_request_lifecycle_metrics.json is" in m for m in copies) == 2


def _read(path: Path) -> tuple[RunPrint, ...]:
    return fingerprint(import_bytes(path.name, path.read_bytes(), overrides=TINY))


def test_one_aiperf_runs_exports_are_one_measurement_and_another_loads_are_not() -> None:
    json_export = _read(AIPERF_C1 / "profile_export_aiperf.json")
    for other in ("profile_export_aiperf.csv", "profile_export.jsonl"):
        assert same_measurement(json_export, _read(AIPERF_C1 / other)), other
    c4 = _read(AIPERF_C1.parent / "c4" / "profile_export_aiperf.json")
    assert same_run(json_export, c4)
    assert not same_measurement(json_export, c4)


def test_2000_runs_of_one_model_in_one_folder_are_2000_runs_found_fast() -> None:
    members = []
    for index in range(2000):
        date = f"2025{1 + index % 12:02d}{1 + index % 28:02d}-{index % 24:02d}{index % 60:02d}00"
        name = f"results/{index}.json"
        data = vllm_result("org/one-model", date, 1 + index / 1000, REAL_C1)
        members.append(Member(name, import_bytes(name, data, overrides=FACTS), None, None))
    started = time.process_time()  # CPU seconds: a busy box stretches wall time, not these
    verdicts = folder_verdicts(members)
    elapsed_s = time.process_time() - started
    assert [v.left_out for v in verdicts] == [None] * 2000
    assert elapsed_s < 2, f"grouping 2,000 files took {elapsed_s:.1f} s"  # 5 s pairwise
