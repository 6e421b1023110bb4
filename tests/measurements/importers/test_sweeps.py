"""Files of one sweep (one load level each) merge into one run; anything else stays apart."""

from __future__ import annotations

from pathlib import Path

from measurements.importers import DeploymentOverrides, import_path
from measurements.importers.sweeps import merge_sweeps
from measurements.run_file import RunFile

REAL = Path(__file__).parents[2] / "fixtures" / "vllm-cpu-real"
FACTS = DeploymentOverrides(gpu="H100-SXM-80GB", tp=1)


def _runs(*names: str, overrides: DeploymentOverrides = FACTS) -> list[RunFile]:
    return [import_path(REAL / name, overrides=overrides).runs[0] for name in names]


def test_one_file_per_concurrency_becomes_one_run_sorted_by_load() -> None:
    (merged,) = merge_sweeps(_runs("c32.json", "c1.json", "c8.json"))
    assert [level.load_value for level in merged.levels] == [1, 8, 32]
    assert merged.origin_file == "c32.json, c1.json, c8.json"
    # Mean prompt lengths differ by a token between files (random prompts): 129, 128, 128.
    assert merged.workload.isl == 128 and merged.workload.osl == 64
    assert merged.source_sha256 is not None and len(merged.source_sha256) == 64


def test_merging_the_same_files_in_another_order_gives_the_same_key() -> None:
    (one,) = merge_sweeps(_runs("c1.json", "c8.json"))
    (other,) = merge_sweeps(_runs("c8.json", "c1.json"))
    assert one.source_sha256 == other.source_sha256


def test_a_repeated_load_level_is_two_measurements_not_one_sweep() -> None:
    runs = _runs("c8.json", "c8.json")
    assert merge_sweeps(runs) == runs


def test_other_deployment_facts_keep_runs_apart() -> None:
    h200 = DeploymentOverrides(gpu="H200-SXM-141GB", tp=1)
    runs = [*_runs("c1.json"), *_runs("c8.json", overrides=h200)]
    assert merge_sweeps(runs) == runs


def test_a_single_run_passes_unchanged() -> None:
    runs = _runs("c1.json")
    assert merge_sweeps(runs) == runs
