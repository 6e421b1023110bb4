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
    """Closed loop (fixed in-flight requests), open loop (request arrival rate), or offline: a
    max-throughput run (trtllm-bench throughput, MLPerf offline, vLLM's throughput benchmark)
    that queues every request at once and lets the engine batch as it likes. An offline level's
    load_value is the number of requests in the run, never a concurrency: the planner uses its
    output tok/s as a ceiling on the curve, not as a point of it."""

    CONCURRENCY = "concurrency"
    RATE = "rate"
    OFFLINE = "offline"
