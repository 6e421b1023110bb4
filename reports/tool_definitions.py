"""What each benchmark client means by its numbers, for showing runs of several tools side by side.

Read from the tools' own source (vLLM 0.32 `vllm/benchmarks/serve.py`, guidellm 0.8.1
`guidellm/benchmark/schemas/metrics.py` and `schemas/base/statistics.py`, AIPerf 0.13
`aiperf/metrics/types/`, inference-perf 0.7 `inference_perf/reportgen/base.py`) and
shared/reference/benchmark-formats.md section 0.1. capplan stores each tool's decode metric under
the canonical `tpot` (per request (e2e - TTFT) / (tokens - 1)).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ToolDefinitions:
    """How one tool defines the numbers the comparison shows."""

    tool: str  # RunFile.source
    name: str
    output_tok_s: str
    duration: str
    ttft: str
    tpot: str
    chunk_gap: str
    tokens: str


DEFINITIONS: dict[str, ToolDefinitions] = {
    "vllm-bench": ToolDefinitions(
        tool="vllm-bench",
        name="vllm bench serve",
        output_tok_s="`output_throughput` = output tokens of the successful requests / duration",
        duration="from just before the first request is sent until the last request ends "
        "(ramp-up and drain included; the one test prompt before it is not)",
        ttft="first streamed chunk that carries `choices` - send time, per request",
        tpot="`tpot` = (e2e - TTFT) / (output tokens - 1) per request, each request weighs "
        "the same",
        chunk_gap="`itl` = gaps between stream chunks, over all requests (a chunk may carry "
        "several tokens)",
        tokens="the server's `usage.completion_tokens` when the stream gives it, else its "
        "tokenizer",
    ),
    "guidellm": ToolDefinitions(
        tool="guidellm",
        name="guidellm",
        output_tok_s="`output_tokens_per_second` mean: a time-weighted mean of the rate of "
        "output-token events over the benchmark window, not total tokens / duration",
        duration="the measured window between the benchmark's start and end times, after any "
        "warm-up and before any cool-down",
        ttft="first token iteration - request start",
        tpot="`inter_token_latency_ms` = (last token - first token) / (tokens - 1), a "
        "distribution weighted by tokens (its `time_per_output_token_ms` is e2e / tokens)",
        chunk_gap="not reported",
        tokens="the server's usage when given, else its own count",
    ),
    "inference-perf": ToolDefinitions(
        tool="inference-perf",
        name="inference-perf",
        output_tok_s="`output_tokens_per_sec` = output tokens of the successful requests / the "
        "stage's span",
        duration="the stage's span: from the first request's start to the last request's end",
        ttft="first output token's arrival - request start (streamed requests only)",
        tpot="`time_per_output_token` = (last token - first token) / (output tokens - 1) per "
        "request",
        chunk_gap="not reported (its `inter_token_latency` is per token: the tokens of one "
        "chunk get a gap of 0, the chunk's gap falls on its first token)",
        tokens="its client re-tokenizes the streamed text unless the report config's "
        "`use_server_output_tokens` is set",
    ),
    "aiperf": ToolDefinitions(
        tool="aiperf",
        name="AIPerf",
        output_tok_s="`output_token_throughput` = output tokens / benchmark duration",
        duration="`benchmark_duration` = last response - first request of the profiling phase",
        ttft="first response - request start",
        tpot="`inter_token_latency` = (request latency - TTFT) / (output tokens - 1) per request",
        chunk_gap="`inter_chunk_latency` = gaps between stream chunks",
        tokens="its client tokenizer re-counts the text unless `--use-server-token-count`",
    ),
    "probe": ToolDefinitions(
        tool="probe",
        name="capplan probe",
        output_tok_s="output tokens completed inside the steady-state window / window length",
        duration="the steady-state window: ramp-up and drain excluded",
        ttft="first content chunk - send",
        tpot="(e2e - TTFT) / (output tokens - 1) per request",
        chunk_gap="gaps between chunks, kept apart from per-token gaps",
        tokens="the server's usage when given, else counted",
    ),
}

WHY_THEY_DIFFER = (
    "On one server the tools disagree for two reasons. Client CPU: a client on the same box as "
    "the engine competes with it for cores, and a heavier client (more processes, more Python "
    "per token) both slows the engine and stamps tokens later, so it reports lower tok/s and "
    "higher TTFT. Definitions: the duration that tok/s divides by (whole run, profiling phase or "
    "a steady window), how tokens are counted (server usage or a client tokenizer) and how TPOT "
    "is weighted (per request or per token) differ, so equal servers give unequal numbers."
)


def definitions_for(tool: str) -> ToolDefinitions:
    """The definitions of a tool, or a placeholder saying they are not documented here."""
    known = DEFINITIONS.get(tool)
    if known is not None:
        return known
    unknown = "not documented by capplan for this tool: see the tool's own documentation"
    return ToolDefinitions(tool, tool, unknown, unknown, unknown, unknown, unknown, unknown)
