"""InferenceX (InferenceMAX) aggregated result record (`agg_*.json`): one concurrency level.

Latencies are in SECONDS and throughputs per GPU; capplan stores ms and whole-replica tok/s
(per-GPU x tp, marked DERIVED). Its `itl` comes from vLLM's benchmark fork: per chunk (`icl`)."""

from __future__ import annotations

import re

from pydantic import ValidationError

from measurements.importers.common import (
    DeploymentOverrides,
    MetricSet,
    Reader,
    content_key,
    join_notes,
    normalise_engine,
    resolve_deployment,
)
from measurements.run_file import (
    Environment,
    Level,
    LoadKind,
    Origin,
    Provenance,
    RunFile,
    Source,
    Workload,
    input_error_from_validation,
)

FORMAT_ID = "inferencex-agg"
DESCRIPTION = (
    "InferenceX aggregated record (agg_*.json): an object with hw, conc, framework, tp, "
    "tput_per_gpu and latencies in seconds (mean_ttft, p99_tpot, ...)"
)
CLIENT = "InferenceX (vLLM benchmark_serving fork)"

_STAT_KEY = re.compile(r"(mean|median|std|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el|intvty)")
_STATS = {"mean": "mean", "median": "p50", "std": "std"} | {
    f"p{p}": f"p{p}" for p in (50, 90, 95, 99)
}
_METRICS = {"ttft": "ttft", "tpot": "tpot", "itl": "icl", "e2el": "e2e"}
_PER_GPU = (
    ("output_tput_per_gpu", "output_tok_s"),
    ("tput_per_gpu", "total_tok_s"),
    ("input_tput_per_gpu", "input_tok_s"),
)
_IMAGE_VERSION = re.compile(r":v?(\d+(?:\.\d+)+\S*)$")
_ARGS = ("image", "spec_decoding", "ep", "dp_attention", "disagg", "is_multinode")


def sniff(name: str, doc: object) -> str | None:
    """Describe an InferenceX aggregated record, else None."""
    if not isinstance(doc, dict) or not {"tput_per_gpu", "conc", "hw"} <= doc.keys():
        return None
    return "InferenceX aggregated record (agg_*.json, seconds, per-GPU throughput)"


def parse(
    name: str,
    doc: object,
    data: bytes,
    overrides: DeploymentOverrides,
    provenance: Provenance,
) -> list[RunFile]:
    """The record as a one-level run at its concurrency."""
    if not isinstance(doc, dict):
        return []
    reader = Reader(name, doc)
    stated, run_notes = _stated(reader)
    deployment, conflicts = resolve_deployment(name, stated, overrides)
    args = {key: str(doc[key]) for key in _ARGS if doc.get(key) is not None}
    deployment = deployment.model_copy(update={"engine_args": args})
    return [
        RunFile(
            source=Source.VLLM_BENCH,
            provenance=provenance,
            deployment=deployment,
            workload=Workload(isl=reader.count("isl") or None, osl=reader.count("osl") or None),
            environment=Environment(client=CLIENT),
            levels=(_level(reader, stated.tp),),
            label=reader.text("infmax_model_prefix"),
            notes=join_notes(conflicts + run_notes, "\n"),
            origin_file=name,
            source_sha256=content_key(data),
        )
    ]


def _stated(reader: Reader) -> tuple[DeploymentOverrides, list[str]]:
    tp = reader.count("tp") or None
    image = reader.text("image")
    version = _IMAGE_VERSION.search(image) if image else None
    spread = reader.obj.get("disagg") is True or reader.obj.get("is_multinode") is True
    framework = reader.text("framework")
    stated = DeploymentOverrides(
        engine=normalise_engine(framework) if framework else None,
        engine_version=version[1] if version else None,
        model=reader.text("model"),
        precision=reader.text("precision"),
        gpu=reader.text("hw"),
        gpu_count=None if spread else tp,
        tp=tp,
    )
    keys = ("ep", "dp_attention", "spec_decoding")
    notes = [f"{key}: {reader.obj[key]}" for key in keys if reader.obj.get(key) is not None]
    if spread:
        notes.append("disaggregated or multi-node: GPUs per replica not stated")
    return stated, notes


def _level(reader: Reader, tp: int | None) -> Level:
    concurrency = reader.count("conc", required=True) or 0
    if concurrency < 1:
        raise reader.fail("conc", "must be at least 1", concurrency)
    metrics = MetricSet()
    notes = _per_gpu(reader, metrics, tp) + _latencies(reader, metrics)
    try:
        return Level(
            load_kind=LoadKind.CONCURRENCY,
            load_value=float(concurrency),
            metrics=metrics.metrics(),
            notes=join_notes(notes + metrics.notes),
        )
    except ValidationError as exc:
        raise input_error_from_validation(exc, reader.file) from exc


def _per_gpu(reader: Reader, metrics: MetricSet, tp: int | None) -> list[str]:
    found = [(key, name, reader.number(key)) for key, name in _PER_GPU]
    present = [(key, name, value) for key, name, value in found if value is not None]
    if present and tp is None:
        return ["per-GPU throughputs not converted: the file does not state tp"]
    for key, name, value in present:
        metrics.add(name, value * (tp or 1), origin=Origin.DERIVED, source=(key, value))
    return [f"throughputs are the file's per-GPU values x tp {tp}"] if present else []


def _latencies(reader: Reader, metrics: MetricSet) -> list[str]:
    unmapped: list[str] = []
    for key in reader.obj:
        match = _STAT_KEY.fullmatch(key)
        value = reader.number(key) if match else None
        if match is None or value is None:
            continue
        stat, metric = _STATS.get(match[1]), match[2]
        if metric == "intvty" and match[1] == "median":
            metrics.add("stream_tok_s", value, origin=Origin.DERIVED, source=(key, value))
        elif stat is not None and metric in _METRICS:
            canonical = f"{stat}_{_METRICS[metric]}_ms"
            metrics.add(canonical, value * 1000, source=(key, value))
        else:
            unmapped.append(key)
    return ["not mapped (no canonical name): " + ", ".join(unmapped)] if unmapped else []
