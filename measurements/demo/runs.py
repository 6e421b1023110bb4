"""Demo data: the shipped published curves (the seed article and aiconfigurator's silicon samples)
imported through the curve CSV importer, plus the seed article's start-up facts from a sidecar."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from measurements.importers import curve_csv, import_path
from measurements.importers.common import join_notes
from measurements.run_file import Provenance, RunFile, Startup, input_error_from_validation

DATA_DIR = Path(__file__).parent / "data"
SEED_ARTICLE_CSV = "seed_article_h100_llama31_70b_fp8.csv"
SILICON_SAMPLE_CSV = "silicon_sample_h100_h200.csv"
# MoE models and Blackwell GPUs (DeepSeek-R1/V3, Qwen3-235B, gpt-oss-120b; B200, B300, GB200,
# GB300); each serving configuration of a sweep imports as its own run.
BLACKWELL_MOE_CSV = "silicon_sample_2026_blackwell_moe.csv"
SEED_STARTUP_JSON = "seed_article_startup.json"


class EngineFacts(BaseModel):
    """Start-up facts one source states for one engine, and what else it says in words."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    startup: Startup
    notes: str | None = None


class StartupSidecar(BaseModel):
    """Facts a curve CSV cannot hold, keyed by engine, for the runs whose label is `source`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    derived_from: str
    engines: dict[str, EngineFacts]


def demo_file_paths() -> list[Path]:
    """The shipped curve CSVs, seed article first."""
    return [
        DATA_DIR / SEED_ARTICLE_CSV,
        DATA_DIR / SILICON_SAMPLE_CSV,
        DATA_DIR / BLACKWELL_MOE_CSV,
    ]


def demo_runs() -> list[RunFile]:
    """Every run in the shipped CSVs (provenance published); seed-article runs get start-up."""
    sidecar = load_startup_sidecar(DATA_DIR / SEED_STARTUP_JSON)
    runs: list[RunFile] = []
    for path in demo_file_paths():
        imported = import_path(path, format_id=curve_csv.FORMAT_ID, provenance=Provenance.PUBLISHED)
        runs.extend(with_startup(run, sidecar) for run in imported.runs)
    return runs


def load_startup_sidecar(path: Path) -> StartupSidecar:
    """Read and validate a start-up sidecar JSON."""
    try:
        return StartupSidecar.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        raise input_error_from_validation(exc, str(path)) from exc


def with_startup(run: RunFile, sidecar: StartupSidecar) -> RunFile:
    """The run with the sidecar's start-up facts and notes when the sidecar covers it."""
    facts = sidecar.engines.get(run.deployment.engine)
    if run.label != sidecar.source or facts is None:
        return run
    notes = join_notes([run.notes or "", facts.notes or ""], "\n")
    return run.model_copy(update={"startup": facts.startup, "notes": notes})
