"""The numbers a peer tool printed, against what capplan stored from that tool's files.

Each tool's printed labels (tests/interop/peer_tools.printed_numbers) map to one canonical
metric or count of capplan's Level; a printed number is rounded to the tool's decimals, so it
matches when it is within half a unit of its last printed digit. Definitions follow
reference/benchmark-formats.md: AIPerf's and guidellm's ITL is our TPOT, vLLM's ITL is our ICL,
guidellm's TPOT is e2e / output tokens (our e2e_per_token), inference-perf's TPOT is ours.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from measurements.run_file import Level

# Decimals each tool prints its summary numbers with.
DECIMALS = {"vllm-bench": 2, "aiperf": 2, "guidellm": 1, "inference-perf": 1}
Getter = Callable[[Level], float | None]


def _metric(name: str, scale: float = 1.0) -> Getter:
    def read(level: Level) -> float | None:
        value = level.value(name)
        return None if value is None else value * scale

    return read


def _count(field: str) -> Getter:
    def read(level: Level) -> float | None:
        value = getattr(level, field)
        return None if value is None else float(value)

    return read


_VLLM = {
    "Successful requests": _count("completed"),
    "Failed requests": _count("failed"),
    "Request throughput (req/s)": _metric("request_s"),
    "Output token throughput (tok/s)": _metric("output_tok_s"),
    "Total token throughput (tok/s)": _metric("total_tok_s"),
    **{
        f"{stat} {label} (ms)": _metric(f"{ours}_{metric}_ms")
        for stat, ours in (("Mean", "mean"), ("Median", "p50"), ("P99", "p99"))
        for label, metric in (("TTFT", "ttft"), ("TPOT", "tpot"), ("ITL", "icl"))
    },
}
_AIPERF = {
    "Request Count (requests) / avg": _count("completed"),
    "Request Throughput (requests/sec) / avg": _metric("request_s"),
    "Output Token Throughput (tokens/sec) / avg": _metric("output_tok_s"),
    **{
        f"{label} (ms) / {stat}": _metric(f"{'mean' if stat == 'avg' else stat}_{metric}_ms")
        for stat in ("avg", "p50", "p90", "p99", "min", "max")
        for label, metric in (
            ("Time to First Token", "ttft"),
            ("Inter Token Latency", "tpot"),
            ("Request Latency", "e2e"),
        )
    },
}
_GUIDELLM = {
    "Requests Comp Tot": _count("completed"),
    "Requests Per Sec Mean": _metric("request_s"),
    "Output Tokens Per Sec Mean": _metric("output_tok_s"),
    "Total Tokens Per Sec Mean": _metric("total_tok_s"),
    "Request Latency Sec Mean": _metric("mean_e2e_ms", 1e-3),
    **{
        f"{label} ms {stat}": _metric(f"{ours}_{metric}_ms")
        for stat, ours in (("Mean", "mean"), ("Mdn", "p50"), ("p95", "p95"))
        for label, metric in (("TTFT", "ttft"), ("ITL", "tpot"), ("TPOT", "e2e_per_token"))
    },
}
_INFERENCE_PERF = {
    "Successes": _count("completed"),
    "Req/s": _metric("request_s"),
    "Out Tokens/s": _metric("output_tok_s"),
    **{
        f"{label} {stat}": _metric(f"{ours}_{metric}_ms")
        for stat, ours in (("Mean", "mean"), ("Med", "p50"), ("P90", "p90"))
        for label, metric in (
            ("TTFT", "ttft"),
            ("TPOT", "tpot"),
            ("ITL", "itl"),
            ("Req Lat", "e2e"),
        )
    },
}
EXPECTED: dict[str, dict[str, Getter]] = {
    "vllm-bench": _VLLM,
    "aiperf": _AIPERF,
    "guidellm": _GUIDELLM,
    "inference-perf": _INFERENCE_PERF,
}


@dataclass(frozen=True, slots=True)
class Pair:
    """One printed number beside capplan's stored one."""

    label: str
    printed: float
    stored: float | None
    tolerance: float

    @property
    def matches(self) -> bool:
        """True when the stored value rounds to the printed one."""
        return self.stored is not None and abs(self.stored - self.printed) <= self.tolerance

    @property
    def difference(self) -> float:
        """|stored - printed| (infinite when nothing was stored)."""
        return float("inf") if self.stored is None else abs(self.stored - self.printed)


def pairs(tool: str, printed: Mapping[str, float], level: Level) -> list[Pair]:
    """Every printed number capplan has a name for, beside the stored value."""
    tolerance = 0.5 * 10 ** -DECIMALS[tool] + 1e-9
    found = []
    for key, value in printed.items():
        label = key.split(" / ", 1)[1] if tool in ("guidellm", "inference-perf") else key
        getter = EXPECTED[tool].get(label)
        if getter is not None:
            found.append(Pair(key, value, getter(level), tolerance))
    return found


def mismatches(tool: str, printed: Mapping[str, float], level: Level) -> list[str]:
    """Each printed number the stored level does not reproduce, in words."""
    return [
        f"{p.label}: {tool} printed {p.printed:g}, capplan stored {p.stored}"
        for p in pairs(tool, printed, level)
        if not p.matches
    ]


# The files of one run that carry the tool's own aggregates (relative to its output folder;
# {level} is the Load's name), and its per-request file, from which capplan recomputes them.
AGGREGATES = {
    "vllm-bench": ("vllm-bench-{level}.json",),
    "aiperf": (
        "profile_export_aiperf.json",
        "profile_export_aiperf.csv",
        "phases/profiling/profile_export_aiperf.json",
        "phases/profiling/profile_export_aiperf.csv",
    ),
    "guidellm": ("benchmarks.json", "benchmarks.yaml", "benchmarks.csv"),
    "inference-perf": ("stage_0_lifecycle_metrics.json", "summary_lifecycle_metrics.json"),
}
PER_REQUEST = {
    "aiperf": "profile_export.jsonl",
    "inference-perf": "per_request_lifecycle_metrics.json",
}
# Recomputed from the requests, TTFT, e2e and counts match the tool's own summary (TTFT and e2e
# are the same timestamps). TPOT does not, by definition: capplan's is (e2e - ttft)/(tokens - 1)
# per request, inference-perf's runs to the last token and counts the client's re-tokenized
# output (36 tokens where the server's usage says 32; its TPOT mean 0.3 ms was 0.5 ms here);
# throughputs use capplan's steady-state window. Those are reported, not asserted.
PER_REQUEST_SLACK_MS = 0.1
_SAME_TIMESTAMPS = ("TTFT", "Time to First Token", "Req Lat", "Request Latency", "Successes")
_SAME_TIMESTAMPS += ("Request Count",)


def per_request_mismatches(tool: str, printed: Mapping[str, float], level: Level) -> list[str]:
    """The printed latencies and counts a per-request file does not reproduce (within slack)."""
    found = [p for p in pairs(tool, printed, level) if p.stored is not None]
    latencies = [p for p in found if any(word in p.label for word in _SAME_TIMESTAMPS)]
    if len(latencies) < 6:
        return [f"only {len(latencies)} printed latencies or counts to compare"]
    return [
        f"{p.label}: {tool} printed {p.printed:g}, capplan stored {p.stored}"
        for p in latencies
        if p.difference > max(p.tolerance, PER_REQUEST_SLACK_MS)
    ]
