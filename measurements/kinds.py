"""The enumerations a RunFile is made of (which tool, how capplan came by the numbers, where one
number came from, closed or open loop): plain StrEnums, importable without pydantic, so the CLI
can offer them as choices without loading the run-file models."""

from __future__ import annotations

from enum import StrEnum


class Source(StrEnum):
    """Which tool produced the numbers."""

    PROBE = "probe"
    VLLM_BENCH = "vllm-bench"
    TRTLLM_BENCH = "trtllm-bench"
    AIPERF = "aiperf"
    GENAI_PERF = "genai-perf"
    GUIDELLM = "guidellm"
    LLMPERF = "llmperf"
    INFERENCE_PERF = "inference-perf"
    CURVE_CSV = "curve-csv"
    PUBLISHED = "published"


class Provenance(StrEnum):
    """How capplan came by the run: measured by our probe, imported from a tool, or published."""

    MEASURED = "measured"
    IMPORTED = "imported"
    PUBLISHED = "published"


class Origin(StrEnum):
    """Where one number came from."""

    REPORTED = "reported"  # printed by the tool that made the file
    RECOMPUTED = (
        "recomputed"  # computed by capplan from the per-request samples (canonical definitions)
    )
    DERIVED = "derived"  # computed from other numbers (e.g. 1000 / tpot), never measured directly


class LoadKind(StrEnum):
    """Closed loop (fixed in-flight requests) or open loop (request arrival rate)."""

    CONCURRENCY = "concurrency"
    RATE = "rate"
