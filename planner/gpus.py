"""GPU hardware facts (memory, bandwidth, peak FLOPS) with their sources, from planner/data."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from errors import InputError
from planner.curves import canonical_gpu

SPECS_CSV = Path(__file__).with_name("data") / "gpu_specs.csv"


@dataclass(frozen=True, slots=True)
class GpuSpec:
    """One GPU SKU's datasheet numbers (dense tensor-core peaks) and where they come from."""

    gpu: str
    memory_gb: float
    mem_bw_tb_s: float
    bf16_dense_tflops: float
    fp8_dense_tflops: float
    nvlink_gb_s_per_direction: float
    tdp_w: float
    source: str
    as_of: str
    notes: str


def load_gpu_specs(path: Path = SPECS_CSV) -> list[GpuSpec]:
    """The shipped GPU specs, keyed by canonical GPU name (H100-SXM-80GB, H200-SXM-141GB)."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = csv.DictReader(line for line in lines if not line.startswith("#"))
    return [_spec(row, path, number) for number, row in enumerate(rows, start=1)]


def _spec(row: dict[str, str], path: Path, number: int) -> GpuSpec:
    def value(column: str) -> float:
        text = (row.get(column) or "").strip()
        try:
            return float(text)
        except ValueError as exc:
            raise InputError(
                f"row {number}: expected a number", file=str(path), field=column, value=text
            ) from exc

    return GpuSpec(
        gpu=canonical_gpu(row["gpu"]),
        memory_gb=value("memory_gb"),
        mem_bw_tb_s=value("mem_bw_tb_s"),
        bf16_dense_tflops=value("bf16_dense_tflops"),
        fp8_dense_tflops=value("fp8_dense_tflops"),
        nvlink_gb_s_per_direction=value("nvlink_gb_s_per_direction"),
        tdp_w=value("tdp_w"),
        source=row.get("source", ""),
        as_of=row.get("as_of", ""),
        notes=row.get("notes", ""),
    )
