"""The GPU catalog (hardware/data/gpus.csv): each GPU's capplan name, the spellings that mean it,
and its datasheet numbers. The planner, the probe and the app all read it; it imports nothing of
capplan but errors, so measurements (which may not import planner) can read it too."""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from errors import InputError

CATALOG_CSV = Path(__file__).with_name("data") / "gpus.csv"
COLUMNS = (
    "gpu",
    "aliases",
    "name_token",
    "other_part_markers",
    "planned_by_default",
    "form_factor",
    "memory_gb",
    "memory_type",
    "mem_bw_tb_s",
    "bf16_dense_tflops",
    "fp8_dense_tflops",
    "fp4_dense_tflops",
    "bf16_sparse_tflops",
    "fp8_sparse_tflops",
    "nvlink_gb_s_bidirectional",
    "nvlink_gb_s_per_direction",
    "tdp_w",
    "source",
    "as_of",
    "notes",
    "memory_mib_total",
    "node_gpus",
    "node_name",
    "nvlink_domain_gpus",
    "architecture",
)
# Columns an older catalog copy may lack (read as blank).
OPTIONAL_COLUMNS = (
    "memory_mib_total", "node_gpus", "node_name", "nvlink_domain_gpus", "architecture",
)  # fmt: skip
DEFAULT_NODE_GPUS = 8
_MIB = 2**20
# Which dense peak a precision's matrix multiplies run at; weight-only formats (int4, AWQ) run
# their math at 16 bits but are left out, so no floor is claimed for them.
_PEAK_COLUMN = {
    "bf16": "bf16_dense_tflops",
    "fp16": "bf16_dense_tflops",
    "fp32": "bf16_dense_tflops",
    "fp8": "fp8_dense_tflops",
    "int8": "fp8_dense_tflops",
    "w8a8": "fp8_dense_tflops",
    "fp4": "fp4_dense_tflops",
    "nvfp4": "fp4_dense_tflops",
    "mxfp4": "fp4_dense_tflops",
}
_YES = {"yes", "true", "1", "y"}
_NO = {"no", "false", "0", "n", ""}


@dataclass(frozen=True, slots=True)
class GpuSpec:
    """One GPU: its capplan name, the spellings that mean it, and its datasheet numbers
    (dense tensor-core peaks; None where the GPU has no such number) with their source."""

    gpu: str  # the name capplan stores and shows, e.g. H100-SXM-80GB
    aliases: tuple[str, ...]  # other spellings, e.g. "NVIDIA H100 80GB HBM3" (nvidia-smi)
    name_token: str | None  # a chip name standing for this GPU in any spelling, e.g. H100
    other_part_markers: tuple[str, ...]  # with the token, these mean another part (PCIe, NVL)
    planned_by_default: bool  # compared when a scenario names no GPUs
    form_factor: str
    memory_gb: float
    memory_type: str
    mem_bw_tb_s: float
    bf16_dense_tflops: float
    fp8_dense_tflops: float | None
    fp4_dense_tflops: float | None
    bf16_sparse_tflops: float | None
    fp8_sparse_tflops: float | None
    nvlink_gb_s_bidirectional: float | None
    nvlink_gb_s_per_direction: float | None
    tdp_w: float
    source: str
    as_of: str
    notes: str
    memory_mib_total: float | None = None  # driver-reported capacity (nvidia-smi); None: unknown
    node_gpus: int = DEFAULT_NODE_GPUS  # GPUs in the unit it is rented or bought as
    node_name: str = ""  # that unit in words ("8-GPU HGX node", "4-GPU NVL72 compute tray")
    nvlink_domain_gpus: int = DEFAULT_NODE_GPUS  # GPUs one replica may span over NVLink
    architecture: str = ""  # the generation (Hopper, Blackwell); "" unknown

    @property
    def node_words(self) -> str:
        """The unit it is rented or bought as, in words."""
        return self.node_name or f"{self.node_gpus}-GPU node"

    @property
    def memory_bytes(self) -> float:
        """Bytes an engine can size itself against: the driver-reported total (81,559 MiB on an
        "80 GB" H100), else the datasheet's decimal GB."""
        if self.memory_mib_total is not None:
            return self.memory_mib_total * _MIB
        return self.memory_gb * 1e9

    def dense_tflops(self, precision: str) -> float | None:
        """Dense peak TFLOPS for a precision's math; None when the GPU or precision has none."""
        column = _PEAK_COLUMN.get(precision.strip().lower())
        value: float | None = getattr(self, column) if column else None
        return value

    def named_by_token(self, spelling: str) -> bool:
        """Whether a normalised spelling names this GPU by its chip token (H100 in NVIDIA-H100)."""
        if not self.name_token:
            return False
        if any(_normal(marker) in spelling for marker in self.other_part_markers):
            return False
        return re.search(rf"(?<![A-Z]){re.escape(_normal(self.name_token))}", spelling) is not None


@dataclass(frozen=True, slots=True, eq=False)
class GpuCatalog:
    """Every GPU of one catalog file, in file order, and the spellings that name each."""

    path: Path
    specs: tuple[GpuSpec, ...]
    by_spelling: Mapping[str, GpuSpec]  # normalised name or alias -> its GPU

    def names(self) -> tuple[str, ...]:
        """Every GPU's capplan name, in file order."""
        return tuple(spec.gpu for spec in self.specs)

    def default_names(self) -> tuple[str, ...]:
        """The GPUs compared when a scenario names none, in file order."""
        return tuple(spec.gpu for spec in self.specs if spec.planned_by_default)

    def find(self, name: str) -> GpuSpec | None:
        """The GPU a spelling names: its name or an alias, else its chip token; None if none."""
        spelling = _normal(name)
        exact = self.by_spelling.get(spelling)
        if exact is not None:
            return exact
        return next((spec for spec in self.specs if spec.named_by_token(spelling)), None)


def gpu_catalog(path: Path | None = None) -> GpuCatalog:
    """The catalog at path (default: CATALOG_CSV as it is when called), read once per path."""
    return _load(path or CATALOG_CSV)


def load_gpu_specs(path: Path | None = None) -> list[GpuSpec]:
    """Every GPU's specs, in file order (default: the shipped hardware/data/gpus.csv)."""
    return list(gpu_catalog(path).specs)


def _normal(name: str) -> str:
    return re.sub(r"[\s_]+", "-", name.strip().upper())


@cache
def _load(path: Path) -> GpuCatalog:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the GPU catalog: {exc}", file=str(path)) from exc
    specs = _parse(text, str(path))
    return GpuCatalog(path, tuple(specs), _spellings(specs, str(path)))


def _parse(text: str, name: str) -> list[GpuSpec]:
    numbered = [
        (number, line)
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    reader = csv.DictReader(io.StringIO("\n".join(line for _, line in numbered)))
    missing = [
        column
        for column in COLUMNS
        if column not in (reader.fieldnames or []) and column not in OPTIONAL_COLUMNS
    ]
    if missing:
        raise InputError(
            f"the GPU catalog lacks columns; expected {', '.join(COLUMNS)}",
            file=name,
            field=missing[0],
            value=missing,
        )
    specs = [_spec(row, f"line {numbered[reader.line_num - 1][0]}", name) for row in reader]
    if not any(spec.planned_by_default for spec in specs):
        raise InputError(
            "no GPU has planned_by_default yes: mark at least one, or scenarios without "
            "candidates.gpus compare nothing",
            file=name,
            field="planned_by_default",
        )
    return specs


def _spec(row: Mapping[str, str | None], line: str, name: str) -> GpuSpec:
    def text(column: str) -> str:
        return (row.get(column) or "").strip()

    def required(column: str) -> float:
        value = optional(column) if text(column) else None
        if value is None:
            raise InputError(f"{line}: expected a number > 0", file=name, field=column, value="")
        return value

    def optional(column: str) -> float | None:
        raw = text(column)
        if not raw:
            return None
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not (value > 0 and math.isfinite(value)):
            raise InputError(f"{line}: expected a number > 0", file=name, field=column, value=raw)
        return value

    if not text("gpu"):
        raise InputError(f"{line}: expected a GPU name", file=name, field="gpu", value="")
    return GpuSpec(
        gpu=text("gpu"),
        aliases=_listed(text("aliases")),
        name_token=text("name_token") or None,
        other_part_markers=_listed(text("other_part_markers")),
        planned_by_default=_yes_no(text("planned_by_default"), line, name),
        form_factor=text("form_factor"),
        memory_gb=required("memory_gb"),
        memory_type=text("memory_type"),
        mem_bw_tb_s=required("mem_bw_tb_s"),
        bf16_dense_tflops=required("bf16_dense_tflops"),
        fp8_dense_tflops=optional("fp8_dense_tflops"),
        fp4_dense_tflops=optional("fp4_dense_tflops"),
        bf16_sparse_tflops=optional("bf16_sparse_tflops"),
        fp8_sparse_tflops=optional("fp8_sparse_tflops"),
        nvlink_gb_s_bidirectional=optional("nvlink_gb_s_bidirectional"),
        nvlink_gb_s_per_direction=optional("nvlink_gb_s_per_direction"),
        tdp_w=required("tdp_w"),
        source=text("source"),
        as_of=text("as_of"),
        notes=text("notes"),
        memory_mib_total=optional("memory_mib_total"),
        node_gpus=round(optional("node_gpus") or DEFAULT_NODE_GPUS),
        node_name=text("node_name"),
        architecture=text("architecture"),
        nvlink_domain_gpus=round(
            optional("nvlink_domain_gpus") or optional("node_gpus") or DEFAULT_NODE_GPUS
        ),
    )


def _listed(raw: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in raw.split(";") if part.strip())


def _yes_no(raw: str, line: str, name: str) -> bool:
    if raw.lower() in _YES:
        return True
    if raw.lower() in _NO:
        return False
    raise InputError(
        f"{line}: expected yes or no", file=name, field="planned_by_default", value=raw
    )


def _spellings(specs: list[GpuSpec], name: str) -> dict[str, GpuSpec]:
    """Each normalised name and alias -> its GPU; InputError when two GPUs share a spelling."""
    found: dict[str, GpuSpec] = {}
    for spec in specs:
        for column, spelling in [("gpu", spec.gpu), *(("aliases", a) for a in spec.aliases)]:
            other = found.setdefault(_normal(spelling), spec)
            if other is not spec:
                raise InputError(
                    f"GPU {spec.gpu!r}: {spelling!r} already names {other.gpu!r}; "
                    "a spelling may name one GPU only",
                    file=name,
                    field=column,
                    value=spelling,
                )
    return found
