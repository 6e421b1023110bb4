"""Shipped GPU specs: the datasheet numbers, under the names the planner and prices use."""

from __future__ import annotations

from pathlib import Path

import pytest

from errors import InputError
from planner.gpus import load_gpu_specs
from planner.prices import load_catalog_csv


def test_h100_and_h200_specs_load_under_the_catalog_names() -> None:
    specs = {spec.gpu: spec for spec in load_gpu_specs()}
    assert set(specs) == {"H100-SXM-80GB", "H200-SXM-141GB"}
    assert {entry.gpu for entry in load_catalog_csv()} <= set(specs)
    # NVIDIA datasheet values: same compute, more and faster memory on H200.
    assert specs["H100-SXM-80GB"].mem_bw_tb_s == 3.35 and specs["H200-SXM-141GB"].mem_bw_tb_s == 4.8
    assert specs["H100-SXM-80GB"].fp8_dense_tflops == specs["H200-SXM-141GB"].fp8_dense_tflops
    assert all(spec.source and spec.as_of for spec in specs.values())


def test_a_bad_number_names_the_file_row_and_column(tmp_path: Path) -> None:
    text = (Path(__file__).parents[2] / "planner" / "data" / "gpu_specs.csv").read_text()
    bad = tmp_path / "specs.csv"
    bad.write_text(text.replace(",3.35,", ",fast,"), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_gpu_specs(bad)
    assert "specs.csv" in str(info.value) and "mem_bw_tb_s" in str(info.value)
