"""Result folders as the tools leave them (issue 24): the real folders of AIPerf 0.13,
guidellm 0.8.1 and inference-perf 0.7 recorded against the vLLM CPU server (c1, c4, rate2 with
their warm-ups, phases and side files) import as one run per tool run, with the tool's numbers;
a folder and a zip of it read alike; nested folders of several tools import in one go."""

from __future__ import annotations

import io
import shutil
import zipfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from db import run_reads
from db.engine import Engine, make_engine
from errors import InputError
from measurements.importers import import_bytes
from measurements.importers.common import DeploymentOverrides
from team.roles import SYSTEM
from tests.stores import Stores
from workflows.ingest import FileOutcome, IngestOptions, IngestStatus, Upload, ingest, read_uploads

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
AIPERF = FIXTURES / "aiperf" / "real-0.13.0"
GUIDELLM = FIXTURES / "guidellm" / "real-0.8.1"
INFERENCE_PERF = FIXTURES / "inference-perf" / "real-0.7.0"
FACTS = DeploymentOverrides(engine="vllm", model="tiny-random-llama", gpu="H100-SXM-80GB", tp=1)
OPTIONS = IngestOptions(FACTS, atomic=True)


@pytest.fixture
def engine(stores: Stores) -> Iterator[Engine]:
    made = make_engine(stores.migrated("result-folders"))
    yield made
    made.dispose()


def _stored(outcomes: list[FileOutcome]) -> list[FileOutcome]:
    return [o for o in outcomes if o.status is IngestStatus.STORED]


def _said(outcomes: list[FileOutcome], name: str) -> str:
    (line,) = [o.message for o in outcomes if o.files == (name,)]
    return line


def test_one_aiperf_run_is_one_stored_run_with_its_warmup_left_out(
    engine: Engine, tmp_path: Path
) -> None:
    folder = shutil.copytree(AIPERF / "c1", tmp_path / "aiperf-c1")
    outcomes = ingest(engine, read_uploads([folder]), OPTIONS, actor=SYSTEM)
    (stored,) = _stored(outcomes)
    assert stored.files == ("aiperf-c1/profile_export_aiperf.json",)
    warmup = _said(outcomes, "aiperf-c1/phases/warmup/profile_export_aiperf.json")
    assert warmup.startswith("skipped: the warm-up phase (") and "left out" in warmup
    for copy in (
        "profile_export_aiperf.csv",
        "profile_export.jsonl",
        "phases/profiling/profile_export_aiperf.json",
        "phases/profiling/profile_export_aiperf.csv",
    ):
        said = _said(outcomes, f"aiperf-c1/{copy}")
        assert said == "skipped: another export of the run kept from profile_export_aiperf.json"
    assert "not a result file" in _said(outcomes, "aiperf-c1/phase_manifest.json")
    # The tool's own numbers: the same as the JSON imported alone.
    alone = import_bytes(
        "profile_export_aiperf.json",
        (AIPERF / "c1" / "profile_export_aiperf.json").read_bytes(),
        overrides=FACTS,
    )
    assert stored.run_id is not None
    (level,) = run_reads.get_run(engine, stored.run_id).run.levels
    (expected,) = alone.runs[0].levels
    assert level.metrics == expected.metrics
    assert (level.load_kind, level.load_value) == (expected.load_kind, expected.load_value)


def test_a_zip_of_the_folder_reads_as_the_folder(engine: Engine) -> None:
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w") as archive:
        for path in sorted((AIPERF / "rate2").rglob("*")):
            if path.is_file():
                archive.write(path, f"rate2/{path.relative_to(AIPERF / 'rate2')}")
    outcomes = ingest(
        engine, [Upload("aiperf-rate2.zip", packed.getvalue())], OPTIONS, actor=SYSTEM
    )
    (stored,) = _stored(outcomes)
    assert stored.files == ("aiperf-rate2.zip/rate2/profile_export_aiperf.json",)
    assert stored.levels == 1
    skipped = [o for o in outcomes if o.status is IngestStatus.SKIPPED]
    assert all("aiperf-rate2.zip/rate2/" in o.file for o in skipped)


def test_guidellm_exports_of_one_run_are_one_run(engine: Engine, tmp_path: Path) -> None:
    folder = shutil.copytree(GUIDELLM / "c4", tmp_path / "guidellm-c4")
    outcomes = ingest(engine, read_uploads([folder]), OPTIONS, actor=SYSTEM)
    (stored,) = _stored(outcomes)
    assert stored.files == ("guidellm-c4/benchmarks.json",)
    for copy in ("benchmarks.csv", "benchmarks.yaml"):
        said = _said(outcomes, f"guidellm-c4/{copy}")
        assert said == "skipped: another export of the run kept from benchmarks.json"


def test_an_inference_perf_sweep_is_one_run_at_the_workload_it_asked_for(
    engine: Engine, tmp_path: Path
) -> None:
    folder = shutil.copytree(INFERENCE_PERF, tmp_path / "inference-perf")
    outcomes = ingest(engine, read_uploads([folder]), OPTIONS, actor=SYSTEM)
    (stored,) = _stored(outcomes)
    assert stored.levels == 3  # c1, c4 and rate 2: one deployment, one requested workload
    assert stored.run_id is not None
    run = run_reads.get_run(engine, stored.run_id).run
    assert (run.workload.isl, run.workload.osl) == (128, 32)
    assert run.workload.isl_distribution == "fixed"
    assert "the client counted ?/" in (run.notes or "")


def test_nested_folders_of_several_tools_import_in_one_go(engine: Engine, tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(AIPERF / "c4", results / "aiperf" / "c4")
    shutil.copytree(GUIDELLM / "rate2", results / "guidellm" / "rate2")
    shutil.copytree(INFERENCE_PERF / "c1", results / "inference-perf" / "c1")
    (results / ".DS_Store").write_bytes(b"\0\0")
    (results / "aiperf" / "c4" / "stderr.txt").write_bytes(b"")  # as the recorder leaves it
    log = b"[2026-12-04 02:27:46] INFO inference-perf started\n"  # opens like JSON, is none
    (results / "inference-perf" / "c1" / "stderr.txt").write_bytes(log)
    outcomes = ingest(engine, read_uploads([results]), OPTIONS, actor=SYSTEM)
    stored = _stored(outcomes)
    assert sorted(o.file for o in stored) == [
        "results/aiperf/c4/profile_export_aiperf.json",
        "results/guidellm/rate2/benchmarks.json",
        "results/inference-perf/c1/stage_0_lifecycle_metrics.json",
    ]
    assert not any(".DS_Store" in o.file for o in outcomes)
    skipped = {o.file: o.message for o in outcomes if o.status is IngestStatus.SKIPPED}
    log_line = skipped["results/inference-perf/c1/stderr.txt"]
    assert log_line == "skipped: not a result file capplan reads"
    assert skipped["results/aiperf/c4/stderr.txt"] == "skipped: empty"
    assert all(o.status is not IngestStatus.REJECTED for o in outcomes)


def test_an_export_that_cannot_be_read_alone_is_a_copy_beside_its_sibling(
    engine: Engine, tmp_path: Path
) -> None:
    # AIPerf's CSV names no model: alone it is refused for want of one; in its folder, beside
    # the JSON that names the run, it is another export of that run.
    folder = shutil.copytree(AIPERF / "c1", tmp_path / "aiperf-c1")
    no_model = IngestOptions(DeploymentOverrides(engine="vllm", gpu="H100-SXM-80GB", tp=1))
    outcomes = ingest(engine, read_uploads([folder]), no_model, actor=SYSTEM)
    assert len(_stored(outcomes)) == 1
    said = _said(outcomes, "aiperf-c1/profile_export_aiperf.csv")
    assert said == "skipped: another export of the run kept from profile_export_aiperf.json"


def test_a_file_over_the_limit_in_a_folder_is_skipped_with_a_line(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = shutil.copytree(GUIDELLM / "c1", tmp_path / "guidellm-c1")
    (folder / "server.log").write_bytes(b"x" * 2048)
    monkeypatch.setattr("workflows.result_folders.MAX_IMPORT_BYTES", 1024)
    uploads = [u for u in read_uploads([folder]) if u.name.endswith(("server.log", ".json"))]
    outcomes = ingest(engine, uploads, OPTIONS, actor=SYSTEM)
    said = _said(outcomes, "guidellm-c1/server.log")
    assert said == "skipped: 2,048 bytes, over the 1,024 byte limit"


def test_a_run_no_export_can_be_read_of_is_refused_once(engine: Engine, tmp_path: Path) -> None:
    folder = shutil.copytree(AIPERF / "c1", tmp_path / "aiperf-c1")
    no_engine = IngestOptions(DeploymentOverrides(model="m", gpu="H100-SXM-80GB", tp=1))
    outcomes = ingest(engine, read_uploads([folder]), no_engine, actor=SYSTEM)
    (refused,) = [o for o in outcomes if o.status is IngestStatus.REJECTED]
    assert refused.files == ("aiperf-c1/profile_export_aiperf.json",)
    assert "field 'engine'" in refused.message
    copy = _said(outcomes, "aiperf-c1/profile_export_aiperf.csv")
    assert copy == (
        "skipped: another export of the run, refused as profile_export_aiperf.json is "
        "(see its line)"
    )
    with pytest.raises(InputError, match=r"aiperf-c1/profile_export_aiperf\.json: field 'engine'"):
        ingest(engine, read_uploads([folder]), replace(no_engine, atomic=True), actor=SYSTEM)


def test_an_engine_log_beside_the_results_gives_the_run_its_kv_cache_report(
    engine: Engine, tmp_path: Path
) -> None:
    # Issue 31 item 5: the server's own start-up log (a real vLLM CPU server's lines) travels
    # with the results into the stored run, where the planner reads the capacity from it.
    folder = shutil.copytree(GUIDELLM / "c4", tmp_path / "guidellm-c4")
    shutil.copy(FIXTURES / "vllm-cpu-logs" / "startup-0.32.0.log", folder / "server.log")
    outcomes = ingest(engine, read_uploads([folder]), OPTIONS, actor=SYSTEM)
    assert len(_stored(outcomes)) == 1
    assert _said(outcomes, "guidellm-c4/server.log").startswith("skipped")  # never a result
    (run,) = run_reads.load_runs(engine)
    startup = run.run.startup
    assert startup.kv_cache_tokens == 524_288
    assert (startup.max_concurrency, startup.max_concurrency_at_tokens) == (256.0, 2048)
