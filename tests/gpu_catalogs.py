"""A GPU added the way a user adds one: a row in a copy of the GPU catalog (and one in a copy of
the price catalog), injected by pointing the loaders at the copies. No code file changes."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

import hardware.gpus
import hardware.prices

B200 = "B200-SXM-180GB"
# Numbers from shared/datasets/gpu_specs_blackwell.csv (AIConfigurator's b200_sxm.yaml).
B200_ROW: dict[str, str] = {
    "gpu": B200,
    "aliases": "NVIDIA B200; b200_sxm; B200 SXM",
    "name_token": "B200",
    "other_part_markers": "",
    "planned_by_default": "yes",
    "form_factor": "SXM6",
    "memory_gb": "180",
    "memory_type": "HBM3e",
    "mem_bw_tb_s": "7.7",
    "bf16_dense_tflops": "2250",
    "fp8_dense_tflops": "4500",
    "fp4_dense_tflops": "9000",
    "bf16_sparse_tflops": "4500",
    "fp8_sparse_tflops": "9000",
    "nvlink_gb_s_bidirectional": "1800",
    "nvlink_gb_s_per_direction": "900",
    "tdp_w": "1000",
    "source": "aisimulate_core/systems/b200_sxm.yaml (test row)",
    "as_of": "2026",
    "notes": "",
}
# Written under an alias: the price catalog canonicalises through the GPU catalog too.
B200_PRICE_ROW = (
    "Nebius,NVIDIA HGX B200 (8-GPU),b200_sxm,8,on_demand,44.0,5.50,not stated,2026-01,test row,low,"
)


def catalog_row(fields: dict[str, str]) -> str:
    """One GPU catalog CSV line for the given column values, in the catalog's column order."""
    out = io.StringIO()
    csv.DictWriter(out, fieldnames=hardware.gpus.COLUMNS, lineterminator="").writerow(fields)
    return out.getvalue()


def add_gpu(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    row: dict[str, str] = B200_ROW,
    price_row: str | None = None,
) -> Path:
    """Copy the shipped GPU catalog with one more row (and the price catalog with price_row)
    into tmp_path and make them the defaults for this test; the GPU catalog copy's path."""
    catalog = tmp_path / "gpus.csv"
    shipped = hardware.gpus.CATALOG_CSV.read_text(encoding="utf-8").rstrip("\n")
    catalog.write_text(f"{shipped}\n{catalog_row(row)}\n", encoding="utf-8")
    monkeypatch.setattr(hardware.gpus, "CATALOG_CSV", catalog)
    if price_row is not None:
        prices = tmp_path / "gpu_prices.csv"
        quoted = hardware.prices.DEFAULT_CATALOG.read_text(encoding="utf-8").rstrip("\n")
        prices.write_text(f"{quoted}\n{price_row}\n", encoding="utf-8")
        monkeypatch.setattr(hardware.prices, "DEFAULT_CATALOG", prices)
    return catalog
