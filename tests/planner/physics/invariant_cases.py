"""The catalog's deployments for the physics-invariant tests: every shipped model at its
checkpoint precision x GPU x engine x TP whose weights leave a KV cache, with the serving model
built from the physics priors (what planner.engine.transfer gives a deployment with no data)."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from functools import cache

import numpy as np

from hardware.gpus import GpuSpec, load_gpu_specs
from planner.engine.calibrate import steady
from planner.engine.model import EngineModel, EnginePrediction, Query
from planner.engine.spec import EngineSpec, engine_spec
from planner.engine.step import PRIOR, PRIOR_LOG_SD, Array
from planner.engine.transfer import Donors, transferred
from planner.physics.catalog import entries
from planner.physics.invariants import Band, Series
from planner.physics.models import canonical_precision
from planner.physics.roofline import Ceilings, ceilings
from planner.sizing.answer_guard import engine_series

ENGINES = ("vllm", "sglang", "tensorrt-llm")
TPS = (1, 2, 4, 8)
# (ISL, OSL): chat, long prompt, long output.
WORKLOADS = ((1000, 500), (8192, 256), (256, 4096))
CONCURRENCIES = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0)
RATES = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0)


@dataclass(frozen=True, slots=True)
class Deployment:
    """One catalog deployment: model, precision, engine, GPU, TP and its physics."""

    model: str
    precision: str
    engine: str
    gpu: GpuSpec
    tp: int
    ceil: Ceilings
    spec: EngineSpec

    @property
    def label(self) -> str:
        """In words, for failure messages (a reproducer)."""
        return f"{self.engine} {self.model} {self.precision} TP{self.tp} {self.gpu.gpu}"

    def model_of(self) -> EngineModel:
        """The physics-only serving model (the priors' efficiencies)."""
        return EngineModel(self.spec, transferred(Donors(PRIOR, PRIOR_LOG_SD, "priors")))


def precision_of(checkpoint: str) -> str | None:
    """'nvfp4 (mixed with fp8)' -> 'nvfp4'."""
    return canonical_precision(checkpoint.split(" ", maxsplit=1)[0]) if checkpoint else None


@cache
def catalog() -> tuple[Deployment, ...]:
    """Every deployment of the catalog whose weights fit with room for a KV cache."""
    out = []
    for entry in entries():
        if entry.facts is None or (precision := precision_of(entry.facts.checkpoint)) is None:
            continue
        for engine in ENGINES:
            for tp in TPS:
                for gpu in load_gpu_specs():
                    found = _deployment(entry.model, precision, engine, gpu, tp)
                    if found is not None:
                        out.append(found)
    return tuple(out)


def _deployment(
    model: str, precision: str, engine: str, gpu: GpuSpec, tp: int
) -> Deployment | None:
    ceil = ceilings(model, precision, gpu, tp, engine=engine)
    if isinstance(ceil, str) or ceil.kv_budget_bytes <= 0:
        return None
    spec = engine_spec(ceil, gpu, engine)
    if isinstance(spec, str):
        return None
    return Deployment(model, precision, engine, gpu, tp, ceil, spec)


def sample(items: tuple[Deployment, ...], count: int, seed: int) -> list[Deployment]:
    """A fixed, seeded subset (all when there are no more than `count`)."""
    if len(items) <= count:
        return list(items)
    return sorted(random.Random(seed).sample(list(items), count), key=lambda d: d.label)


def read(deployment: Deployment, kind: str, isl: int, osl: int) -> tuple[EnginePrediction, Series]:
    """The physics-only serving model's answer at the standard loads of a kind."""
    loads = CONCURRENCIES if kind == "concurrency" else RATES
    found = deployment.model_of().predict(Query(kind, loads, isl, osl))
    return found, engine_series(found, f"{deployment.label} ISL {isl} OSL {osl}")


@cache
def centres(deployment: Deployment, kind: str, isl: int, osl: int) -> tuple[Series, float]:
    """The serving model's centres only (no band draws: fast enough for the whole catalog) at
    the standard loads of a kind, and the capacity in sequences (inf for a rate)."""
    loads = CONCURRENCIES if kind == "concurrency" else RATES
    model = deployment.model_of()
    arr = np.array(loads, dtype=np.float64)
    isls, osls = np.full_like(arr, isl), np.full_like(arr, osl)
    state = steady(model.spec, model.params, kind, arr, isl=isls, osl=osls)
    series = Series(
        label=f"{deployment.label} ISL {isl} OSL {osl}",
        load_kind=kind,
        loads=loads,
        output_tok_s=Band(_floats(state.output_tok_s)),
        ttft_ms=Band(_floats(state.ttft_s * 1000.0)),
        tpot_ms=Band(_floats(state.tpot_s * 1000.0)),
        e2e_ms=Band(_floats(state.e2e_s * 1000.0)),
        running=tuple(float(v) for v in state.running),
    )
    cap = model.spec.capacity_seqs(isl, osl) * model.params.kv_scale
    return series, min(cap, float(model.spec.max_seqs)) if kind == "concurrency" else math.inf


def _floats(values: Array) -> tuple[float, ...]:
    return tuple(float(v) for v in values)
