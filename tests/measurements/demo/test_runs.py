"""Demo data: the shipped CSVs through the curve CSV importer, plus the seed start-up facts."""

from __future__ import annotations

import csv

from measurements.demo.runs import demo_file_paths, demo_runs
from measurements.run_file import Provenance

GROUP = ("engine", "engine_version", "model", "precision", "gpu", "gpu_count", "tp", "isl", "osl")


def data_rows(index: int) -> list[dict[str, str]]:
    lines = demo_file_paths()[index].read_text(encoding="utf-8").splitlines()
    return list(csv.DictReader(line for line in lines if not line.startswith("#")))


def test_seed_article_runs_have_four_levels_and_start_up_facts() -> None:
    seed = [run for run in demo_runs() if run.label == "seed-article"]
    vllm, trt = seed
    assert [len(run.levels) for run in seed] == [4, 4]
    assert [level.value("output_tok_s") for level in vllm.levels] == [68.2, 1010, 2840, 3710]
    assert (vllm.startup.cold_start_s, vllm.startup.vram_idle_gb) == (18, 71.2)
    assert (trt.startup.engine_build_s, trt.startup.vram_idle_gb) == (14 * 60, 68.4)
    assert trt.startup.cold_start_s is None
    assert "142 ms" in (trt.notes or "") and "198 ms" in (vllm.notes or "")


def test_silicon_sample_is_one_run_per_deployment_and_workload() -> None:
    rows = data_rows(1)
    groups = {tuple(row[column] for column in GROUP) for row in rows}
    silicon = [
        run
        for run in demo_runs()
        if run.label == "aiconfigurator-silicon-sample"
        and (run.origin_file or "").endswith("h100_h200.csv")
    ]
    assert len(rows) == 778
    assert len(silicon) == len(groups)
    assert sum(len(run.levels) for run in silicon) == 778


def test_demo_runs_are_published_and_the_files_exist() -> None:
    assert all(path.is_file() for path in demo_file_paths())
    runs = demo_runs()
    assert {run.provenance for run in runs} == {Provenance.PUBLISHED}
    assert len({run.source_sha256 for run in runs}) == len(runs)
