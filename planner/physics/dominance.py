"""What a GPU runs a deployment on, and when one GPU is at least another on every resource.

A step reads weights and cache (bandwidth), multiplies at the precision its kernel really
computes in (an FP4 checkpoint runs weight-only on a GPU without FP4 tensor cores: its math is
16-bit there, native FP4 on Blackwell), keeps its cache in memory and, at TP > 1, talks over
NVLink. A GPU with at least the bandwidth, kernel FLOPS, memory and link of another never serves
the same deployment slower (physics no answer may break: planner.sizing.selection floors a
projection onto such a GPU by the measured curve of the one it dominates).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hardware.gpus import GpuSpec
from planner.physics.models import canonical_precision

# Formats whose math runs at 16 bits where the GPU has no tensor cores for them.
_WEIGHT_ONLY_FALLBACK = {"fp4": "bf16", "nvfp4": "bf16", "mxfp4": "bf16"}


@dataclass(frozen=True, slots=True)
class KernelPath:
    """The dense peak a deployment's matrix multiplies run at on one GPU, and in words how."""

    tflops: float
    native: bool  # the GPU computes in the checkpoint's format itself
    words: str  # "native FP4" or "FP4 weights, 16-bit math (no FP4 tensor cores)"


def kernel_path(gpu: GpuSpec, precision: str | None) -> KernelPath:
    """The peak the kernels of `precision` really run at on `gpu` (16-bit when unknown)."""
    name = canonical_precision(precision) or "bf16"
    own = gpu.dense_tflops(name)
    if own is not None:
        return KernelPath(own, True, f"native {name.upper()}")
    fallback = _WEIGHT_ONLY_FALLBACK.get(name, "bf16")
    tflops = gpu.dense_tflops(fallback) or gpu.bf16_dense_tflops
    words = f"{name.upper()} weights, {fallback.upper()} math (no {name.upper()} tensor cores)"
    return KernelPath(tflops, False, words)


def dominates(faster: GpuSpec, slower: GpuSpec, precision: str | None, tp: int) -> bool:
    """Whether `faster` has at least `slower`'s bandwidth, kernel FLOPS at this precision,
    memory and (TP > 1) NVLink bandwidth: then it never serves the deployment slower."""
    if faster.gpu == slower.gpu:
        return False
    link_ok = tp <= 1 or (faster.nvlink_gb_s_per_direction or 0.0) >= (
        slower.nvlink_gb_s_per_direction or 0.0
    )
    return (
        faster.mem_bw_tb_s >= slower.mem_bw_tb_s
        and kernel_path(faster, precision).tflops >= kernel_path(slower, precision).tflops
        and faster.memory_bytes >= slower.memory_bytes
        and link_ok
    )


def spec_distance(a: GpuSpec, b: GpuSpec, precision: str | None) -> float:
    """How far apart two GPUs are for a deployment (0: the same resources): the log ratios of
    bandwidth, kernel FLOPS and memory, bandwidth counting most (decode is memory-bound), and a
    change of kernel path (weight-only on one, native on the other) counting as far as a
    doubling."""
    bw = abs(math.log(a.mem_bw_tb_s / b.mem_bw_tb_s))
    pa, pb = kernel_path(a, precision), kernel_path(b, precision)
    flops = abs(math.log(pa.tflops / pb.tflops))
    memory = abs(math.log(a.memory_bytes / b.memory_bytes))
    path = math.log(2.0) if pa.native != pb.native else 0.0
    return 2.0 * bw + flops + 0.5 * memory + path
