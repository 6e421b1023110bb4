"""GPU facts for a run: name, count, driver, CUDA version and memory per GPU, from NVML when
nvidia-ml-py is importable, else from nvidia-smi; None on a machine without NVIDIA GPUs.
The parsers are pure functions over nvidia-smi's text so recorded outputs can test them."""

from __future__ import annotations

import importlib
import re
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hardware.gpus import gpu_catalog

QUERY_FIELDS = ("index", "name", "driver_version", "memory.total", "memory.used", "count")
NVIDIA_SMI_QUERY = (
    "nvidia-smi",
    f"--query-gpu={','.join(QUERY_FIELDS)}",
    "--format=csv,noheader,nounits",
)
BYTES_PER_MIB = 1024 * 1024
_MISSING = {"", "[n/a]", "n/a", "[not supported]", "[unknown error]", "[insufficient permissions]"}
_CUDA_RE = re.compile(r"CUDA Version\s*:\s*([0-9]+(?:\.[0-9]+)*)")
_UNIT_RE = re.compile(r"\s*\[[^\]]*\]$")  # "memory.total [MiB]" -> "memory.total"

Runner = Callable[[Sequence[str]], str | None]


@dataclass(frozen=True, slots=True)
class GpuMemory:
    """One GPU: its index, name and memory in MiB (as nvidia-smi counts it)."""

    index: int
    name: str
    memory_total_mib: float | None
    memory_used_mib: float | None


@dataclass(frozen=True, slots=True)
class GpuFacts:
    """The machine's NVIDIA GPUs as the driver reports them."""

    name: str  # the GPUs' name; distinct names joined with " + " on a mixed box
    count: int
    driver_version: str | None
    cuda_version: str | None  # the highest CUDA the driver supports (nvidia-smi's banner)
    gpus: tuple[GpuMemory, ...]

    @property
    def memory_used_gb(self) -> float:
        """Memory in use over all GPUs, decimal GB (10^9 bytes)."""
        return sum(g.memory_used_mib or 0.0 for g in self.gpus) * BYTES_PER_MIB / 1e9

    @property
    def memory_total_gb(self) -> float:
        """Memory over all GPUs, decimal GB (10^9 bytes)."""
        return sum(g.memory_total_mib or 0.0 for g in self.gpus) * BYTES_PER_MIB / 1e9

    @property
    def sku(self) -> str:
        """The GPU catalog's name for the first GPU (e.g. H100-SXM-80GB), else its own name."""
        return gpu_sku(self.gpus[0].name if self.gpus else self.name)


def gpu_sku(name: str) -> str:
    """Map an nvidia-smi GPU name to its name in the GPU catalog; GPUs it lacks stay as named."""
    spec = gpu_catalog().find(name)
    return spec.gpu if spec is not None else name


def parse_query_csv(text: str, fields: Sequence[str] = QUERY_FIELDS) -> list[dict[str, str | None]]:
    """Rows of `nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]` as dicts.

    A header line, when present, names the columns (units in brackets are dropped); without
    one the columns are `fields`. Values lose their unit suffix; N/A-like values become None.
    """
    rows: list[dict[str, str | None]] = []
    columns = list(fields)
    for line in text.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if not line.strip():
            continue
        if any(c.startswith(("name", "index", "driver_version")) for c in cells):
            columns = [_UNIT_RE.sub("", c) for c in cells]
            continue
        if len(cells) != len(columns):
            continue  # an error message or a warning line, not a GPU row
        rows.append({col: _value(cell) for col, cell in zip(columns, cells, strict=True)})
    return rows


def _value(cell: str) -> str | None:
    if cell.lower() in _MISSING:
        return None
    return re.sub(r"\s*(MiB|GiB|MB|W|%|MHz)$", "", cell)


def parse_cuda_version(banner: str) -> str | None:
    """The CUDA version from `nvidia-smi`'s banner or `nvidia-smi -q`; None when absent."""
    match = _CUDA_RE.search(banner)
    return match.group(1) if match else None


def facts_from_smi(query_csv: str, banner: str | None) -> GpuFacts | None:
    """GpuFacts from nvidia-smi's query CSV and (optionally) its banner; None without GPU rows."""
    rows = [r for r in parse_query_csv(query_csv) if r.get("name")]
    if not rows:
        return None
    gpus = tuple(
        GpuMemory(
            index=_int(row.get("index"), default=i),
            name=str(row["name"]),
            memory_total_mib=_float(row.get("memory.total")),
            memory_used_mib=_float(row.get("memory.used")),
        )
        for i, row in enumerate(rows)
    )
    return GpuFacts(
        name=_joined_names(g.name for g in gpus),
        count=len(gpus),
        driver_version=rows[0].get("driver_version"),
        cuda_version=parse_cuda_version(banner) if banner else None,
        gpus=gpus,
    )


def _joined_names(names: Iterable[str]) -> str:
    distinct = list(dict.fromkeys(names))
    return " + ".join(distinct)


def _float(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _int(value: str | None, default: int) -> int:
    return int(value) if value is not None and value.isdigit() else default


def run_command(argv: Sequence[str]) -> str | None:
    """stdout of a command, or None when it is missing, fails or hangs (10 s)."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def nvidia_smi_facts(run: Runner = run_command) -> GpuFacts | None:
    """GpuFacts from the nvidia-smi program; None when it is absent or finds no GPU."""
    query = run(NVIDIA_SMI_QUERY)
    if query is None:
        return None
    return facts_from_smi(query, run(("nvidia-smi",)))


def nvml_facts() -> GpuFacts | None:
    """GpuFacts through NVML (the nvidia-ml-py package); None when it is absent or fails."""
    try:
        nvml: Any = importlib.import_module("pynvml")
    except ImportError:
        return None
    try:
        nvml.nvmlInit()
    except nvml.NVMLError:
        return None
    try:
        return _read_nvml(nvml)
    except nvml.NVMLError:
        return None
    finally:
        nvml.nvmlShutdown()


def _read_nvml(nvml: Any) -> GpuFacts | None:
    gpus = []
    for index in range(int(nvml.nvmlDeviceGetCount())):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        memory = nvml.nvmlDeviceGetMemoryInfo(handle)
        name = _decode(nvml.nvmlDeviceGetName(handle))
        gpus.append(
            GpuMemory(index, name, memory.total / BYTES_PER_MIB, memory.used / BYTES_PER_MIB)
        )
    if not gpus:
        return None
    cuda = int(nvml.nvmlSystemGetCudaDriverVersion())  # e.g. 12040 for CUDA 12.4
    return GpuFacts(
        name=_joined_names(g.name for g in gpus),
        count=len(gpus),
        driver_version=_decode(nvml.nvmlSystemGetDriverVersion()),
        cuda_version=f"{cuda // 1000}.{cuda % 1000 // 10}",
        gpus=tuple(gpus),
    )


def _decode(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def gpu_facts() -> GpuFacts | None:
    """This machine's GPUs: NVML first, then nvidia-smi; None when neither finds any."""
    return nvml_facts() or nvidia_smi_facts()
