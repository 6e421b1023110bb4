"""What the validation bench reads: the shipped curve CSVs through the product's importer (one
representative curve per deployment, GPU and workload), GPU facts, and AIConfigurator's own
estimates (aiconfigurator_vs_silicon.csv) as a baseline."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.bench_generations import deployment, load_curves
from hardware.gpus import GpuSpec, load_gpu_specs
from planner.curves.load import CurveKey, LoadCurve
from planner.curves.names import canonical_gpu, canonical_model

ROOT = Path(__file__).resolve().parents[2]
# The copy the repo ships (bench_fit_accuracy reads it too).
AIC_CSV = ROOT / "planner" / "physics" / "data" / "aiconfigurator_vs_silicon.csv"
AIC_BACKENDS = {"vllm": "vllm", "trtllm": "tensorrt-llm", "sglang": "sglang"}
# metric -> (AIConfigurator's column); the silicon numbers themselves come from the curves.
AIC_COLUMNS = {
    "output_tok_s": "aic_derived_output_tok_s",
    "ttft_ms": "aic_ttft_ms",
    "tpot_ms": "aic_tpot_ms",
}
# (canonical model, engine, GPU, TP, ISL, OSL, concurrency)
AicKey = tuple[str, str, str, int, int, int, float]


def deployment_key(key: CurveKey) -> tuple[object, ...]:
    """Engine, model, precision, TP and layout (bench_generations.deployment), on its GPU."""
    return (*deployment(key), key.gpu)


def workload(curve: LoadCurve) -> tuple[int, int]:
    """The curve's (ISL, OSL); load_curves keeps only curves that state both."""
    return curve.key.isl or 0, curve.key.osl or 0


def representatives(curves: Sequence[LoadCurve]) -> list[LoadCurve]:
    """One curve per deployment, GPU and workload: the one with the most levels (repeats and
    other versions of the same deployment are left out), in a stable order."""
    best: dict[tuple[object, ...], LoadCurve] = {}
    for curve in curves:
        if curve.label and "(repeat" in curve.label:
            continue
        key = (*deployment_key(curve.key), *workload(curve))
        if key not in best or len(curve.points) > len(best[key].points):
            best[key] = curve
    return sorted(best.values(), key=lambda c: (repr(deployment_key(c.key)), workload(c)))


def all_curves() -> list[LoadCurve]:
    """Every concurrency curve of both shipped samples, with ISL and OSL stated."""
    return load_curves()


@dataclass(frozen=True, slots=True)
class Gpus:
    """The GPU catalog's specs by canonical name."""

    specs: dict[str, GpuSpec]

    def bandwidth_ratio(self, source: str, target: str) -> float | None:
        """Target over source memory bandwidth (None: a GPU without specs)."""
        a, b = self.specs.get(source), self.specs.get(target)
        return None if a is None or b is None else b.mem_bw_tb_s / a.mem_bw_tb_s

    def architecture(self, gpu: str) -> str:
        """'Hopper', 'Blackwell', or '' when unknown."""
        spec = self.specs.get(gpu)
        return spec.architecture if spec is not None else ""

    def dominates(self, bigger: str, smaller: str) -> bool:
        """Whether `bigger` has at least as much of every resource (bandwidth, memory, FLOPS)."""
        a, b = self.specs.get(bigger), self.specs.get(smaller)
        if a is None or b is None:
            return False
        pairs = (
            (a.mem_bw_tb_s, b.mem_bw_tb_s),
            (a.memory_gb, b.memory_gb),
            (a.bf16_dense_tflops, b.bf16_dense_tflops),
        )
        return all(x >= y for x, y in pairs)


def gpus() -> Gpus:
    """The product's GPU catalog."""
    return Gpus({spec.gpu: spec for spec in load_gpu_specs()})


def aiconfigurator_estimates(path: Path | None = None) -> dict[tuple[AicKey, str], float]:
    """(point, metric) -> AIConfigurator 0.12's own estimate, from its comparison file."""
    found = path or AIC_CSV
    if not found.exists():
        return {}
    lines = [line for line in found.read_text().splitlines() if not line.startswith("#")]
    table: dict[tuple[AicKey, str], float] = {}
    for row in csv.DictReader(lines):
        engine = AIC_BACKENDS.get(row["backend"])
        if engine is None:
            continue
        point = (
            canonical_model(row["model"]),
            engine,
            canonical_gpu(row["system"]),
            int(row["tp"]),
            int(row["isl"]),
            int(row["osl"]),
            float(row["concurrency"]),
        )
        for metric, column in AIC_COLUMNS.items():
            if row[column].strip():
                table[(point, metric)] = float(row[column])
    return table


def aic_key(curve: LoadCurve, concurrency: float) -> AicKey:
    """The AIConfigurator table's key of one measured level of a curve."""
    key = curve.key
    model = canonical_model(key.model)
    return (model, key.engine, key.gpu or "", key.tp or 0, key.isl or 0, key.osl or 0, concurrency)
