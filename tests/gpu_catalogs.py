"""A GPU added the way a user adds one: a row in a copy of the GPU catalog (and one in a copy of
the price catalog), injected by pointing the loaders at the copies. No code file changes."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

import hardware.gpus
import hardware.prices

MI300X = "MI300X-OAM-192GB"
# AMD Instinct MI300X datasheet numbers (dense peaks; no FP4): a GPU the shipped catalog lacks.
MI300X_ROW: dict[str, str] = {
    "gpu": MI300X,
    "aliases": "AMD Instinct MI300X; mi300x_oam; MI300X OAM",
    "name_token": "MI300X",
    "other_part_markers": "",
    "planned_by_default": "yes",
    "form_factor": "OAM",
    "memory_gb": "192",
    "memory_type": "HBM3",
    "mem_bw_tb_s": "5.3",
    "bf16_dense_tflops": "1307",
    "fp8_dense_tflops": "2615",
    "fp4_dense_tflops": "",
    "bf16_sparse_tflops": "2615",
    "fp8_sparse_tflops": "5230",
    "nvlink_gb_s_bidirectional": "",
    "nvlink_gb_s_per_direction": "",
    "tdp_w": "750",
    "source": "AMD Instinct MI300X datasheet (test row)",
    "as_of": "2026",
    "notes": "",
}
# Written under an alias: the price catalog canonicalises through the GPU catalog too.
MI300X_PRICE_ROW = (
    "Nebius,AMD MI300X (8-GPU),mi300x_oam,8,on_demand,28.0,3.50,not stated,2026-01,test row,low,"
)


def catalog_row(fields: dict[str, str]) -> str:
    """One GPU catalog CSV line for the given column values, in the catalog's column order."""
    out = io.StringIO()
    csv.DictWriter(out, fieldnames=hardware.gpus.COLUMNS, lineterminator="").writerow(fields)
    return out.getvalue()


def add_gpu(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    row: dict[str, str] = MI300X_ROW,
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
