"""One concurrency sweep of one deployment written as the shell lines that measure it: the
engine server, `capplan probe --launch`, and for teams with their own client `vllm bench serve`
and `aiperf profile` loops, each with the `capplan import` line that stores its results.

The flags are those of capplan's own CLI, vLLM 0.32's `vllm bench serve` and AIPerf 0.13's
`aiperf profile` (tests/measurements/probe/test_sweep_commands.py parses them).
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass

from measurements.probe.launch_spec import LaunchSpec, server_command

LAUNCHED_ENGINES = ("vllm", "tensorrt-llm")
PORT = 8000
# The probe's own default request count per level: max(32, 8 x concurrency).
MIN_REQUESTS_PER_LEVEL = 32
REQUESTS_PER_STREAM = 8


@dataclass(frozen=True, slots=True)
class SweepSpec:
    """One deployment (engine, model, precision, GPU, TP) swept over concurrency levels at
    one ISL/OSL."""

    engine: str
    model: str
    precision: str | None
    gpu: str
    tp: int
    isl: int
    osl: int
    concurrencies: tuple[int, ...]

    @property
    def stem(self) -> str:
        """A file-name stem naming the sweep, e.g. vllm-H100-SXM-80GB-tp2-3000x300."""
        return f"{self.engine}-{self.gpu}-tp{self.tp}-{self.isl}x{self.osl}"

    @property
    def base_url(self) -> str:
        """Where the server the sweep starts listens."""
        return f"http://127.0.0.1:{PORT}"


def requests_per_level(concurrency: int) -> int:
    """The probe's default measured requests at a concurrency: max(32, 8 x concurrency)."""
    return max(MIN_REQUESTS_PER_LEVEL, REQUESTS_PER_STREAM * concurrency)


def server_line(spec: SweepSpec) -> str | None:
    """The `vllm serve` / `trtllm-serve` line that starts the deployment (None: an engine
    capplan does not launch; start it yourself)."""
    if spec.engine not in LAUNCHED_ENGINES:
        return None
    launch = LaunchSpec(
        engine="vllm" if spec.engine == "vllm" else "tensorrt-llm",
        model=spec.model,
        port=PORT,
        tp=spec.tp,
        max_model_len=_max_model_len(spec),
        extra_args=_quantization_args(spec),
    )
    return shlex.join(server_command(launch))


def probe_line(spec: SweepSpec) -> str:
    """`capplan probe` that starts the server (or attaches to one already up) and sweeps it."""
    server = server_line(spec)
    where = ["--launch", server] if server is not None else ["--base-url", spec.base_url]
    argv = ["capplan", "probe", *where, "--engine", _probe_engine(spec.engine)]
    argv += ["--model", spec.model, "--isl", str(spec.isl), "--osl", str(spec.osl)]
    argv += ["--concurrency", ",".join(str(c) for c in spec.concurrencies)]
    argv += ["--gpu", spec.gpu, "--tp", str(spec.tp)]
    if spec.precision:
        argv += ["--precision", spec.precision]
    argv += ["--out", f"runs/{spec.stem}.json"]
    return shlex.join(argv)


def vllm_bench_line(spec: SweepSpec) -> str:
    """A shell loop of `vllm bench serve`, one result file per level, against the server."""
    backend = "vllm" if spec.engine == "vllm" else "openai"
    argv = ["vllm", "bench", "serve", "--backend", backend, "--base-url", spec.base_url]
    argv += ["--model", spec.model, "--dataset-name", "random"]
    argv += ["--random-input-len", str(spec.isl), "--random-output-len", str(spec.osl)]
    argv += ["--random-range-ratio", "0", "--ignore-eos"]
    argv += ["--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "50,90,95,99"]
    argv += ["--save-result", "--result-dir", f"results/{spec.stem}"]
    fixed = shlex.join(argv)
    per_level = '--max-concurrency "$c" --num-prompts "$n" --result-filename "vllm-bench-c$c.json"'
    return _loop(spec, f"{fixed} {per_level}")


def aiperf_line(spec: SweepSpec) -> str:
    """A shell loop of `aiperf profile`, one artifact directory per level, against the server."""
    argv = ["aiperf", "profile", "--model", spec.model, "--url", spec.base_url]
    argv += ["--endpoint-type", "completions", "--streaming", "--tokenizer", spec.model]
    argv += ["--isl", str(spec.isl), "--isl-stddev", "0", "--osl", str(spec.osl)]
    argv += ["--osl-stddev", "0", "--extra-inputs", "ignore_eos:true"]
    fixed = shlex.join(argv)
    per_level = (
        f'--concurrency "$c" --request-count "$n" --artifact-dir "results/{spec.stem}/aiperf-c$c"'
    )
    return _loop(spec, f"{fixed} {per_level}")


def import_line(spec: SweepSpec, pattern: str) -> str:
    """`capplan import` of the sweep's result files, stating what the files do not say."""
    argv = ["capplan", "import", "--engine", spec.engine, "--gpu", spec.gpu, "--tp", str(spec.tp)]
    if spec.precision:
        argv += ["--precision", spec.precision]
    # The glob stays unquoted so the shell expands it.
    return f"{shlex.join(argv)} results/{shlex.quote(spec.stem)}/{pattern}"


def _loop(spec: SweepSpec, body: str) -> str:
    levels = " ".join(str(c) for c in spec.concurrencies)
    count = (
        f"n=$(( c * {REQUESTS_PER_STREAM} > {MIN_REQUESTS_PER_LEVEL} ? "
        f"c * {REQUESTS_PER_STREAM} : {MIN_REQUESTS_PER_LEVEL} ))"
    )
    return f"for c in {levels}; do {count}; {body}; done"


def _probe_engine(engine: str) -> str:
    return engine if engine in LAUNCHED_ENGINES else "other"


def _max_model_len(spec: SweepSpec) -> int:
    """Room for the prompt, the output and chat-template tokens, in whole 1,024-token blocks."""
    return 1024 * math.ceil((spec.isl + spec.osl + 64) / 1024)


def _quantization_args(spec: SweepSpec) -> tuple[str, ...]:
    """vLLM quantizes a 16-bit checkpoint to FP8 on load; TensorRT-LLM needs an FP8 checkpoint."""
    wants_fp8 = (spec.precision or "").lower() == "fp8" and "fp8" not in spec.model.lower()
    return ("--quantization", "fp8") if wants_fp8 and spec.engine == "vllm" else ()
