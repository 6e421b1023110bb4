"""The real `vllm bench serve` and guidellm 0.8.1 runs of one vLLM CPU server
(tests/fixtures/vllm-cpu-clients) as uploads and stored runs, for the compare-the-clients tests.
"""

from __future__ import annotations

import json
from pathlib import Path

from db.engine import make_engine
from measurements.importers import import_bytes
from measurements.importers.common import DeploymentOverrides
from measurements.importers.sweeps import merge_sweeps
from planner.curves.load import LoadCurve, curve_from_run
from team.roles import SYSTEM
from workflows.ingest import IngestOptions, IngestStatus, Upload, ingest

FOLDER = Path(__file__).resolve().parent / "fixtures" / "vllm-cpu-clients"
MODEL = "tiny-random-llama"
VLLM_FILES = ("vllm-bench-c1.json", "vllm-bench-c4.json", "vllm-bench-c16.json")
GUIDELLM_FILE = "guidellm-benchmarks.json"
# What the files do not state. The server ran on a CPU; the tests label it one H100 at TP1 so
# the planner can size it (the label is the tests', not a measurement of an H100).
GPU = "H100-SXM-80GB"
FACTS = DeploymentOverrides(engine="vllm", engine_version="0.32.0", gpu=GPU, tp=1)
# Only what is true of the recording (no GPU, TP unset): for the README's screenshot.
RECORDED_FACTS = DeploymentOverrides(engine="vllm", engine_version="0.32.0")
# The case: guidellm counting a mean ISL of 129 and OSL of 63.9 where vllm bench serve
# states the 128 / 64 it asked for.
ROUNDED_ISL = 129.0
ROUNDED_OSL = 63.9


def guidellm_bytes(*, isl_mean: float | None = None, osl_mean: float | None = None) -> bytes:
    """The guidellm report; with means given, every benchmark's successful prompt / output token
    means are set to them (every other number as guidellm wrote it)."""
    data = (FOLDER / GUIDELLM_FILE).read_bytes()
    if isl_mean is None and osl_mean is None:
        return data
    doc = json.loads(data)
    for benchmark in doc["benchmarks"]:
        metrics = benchmark["metrics"]
        for name, mean in (("prompt_token_count", isl_mean), ("output_token_count", osl_mean)):
            if mean is not None:
                metrics[name]["successful"]["mean"] = mean
    return json.dumps(doc).encode()


def client_uploads(*, rounded: bool = False) -> tuple[list[Upload], Upload]:
    """The vllm bench serve files (one sweep) and the guidellm report, rounded or as written."""
    vllm = [Upload(name, (FOLDER / name).read_bytes()) for name in VLLM_FILES]
    means = {"isl_mean": ROUNDED_ISL, "osl_mean": ROUNDED_OSL} if rounded else {}
    return vllm, Upload(GUIDELLM_FILE, guidellm_bytes(**means))


def client_curves(
    *, isl_mean: float | None = None, osl_mean: float | None = None
) -> dict[str, LoadCurve]:
    """Each tool's curve (vllm bench serve run 1, guidellm run 2), built without a store."""
    vllm = [import_bytes(n, (FOLDER / n).read_bytes(), overrides=FACTS) for n in VLLM_FILES]
    (sweep,) = merge_sweeps([run for imported in vllm for run in imported.runs])
    data = guidellm_bytes(isl_mean=isl_mean, osl_mean=osl_mean)
    (guidellm,) = import_bytes(GUIDELLM_FILE, data, overrides=FACTS).runs
    curves = {"vllm-bench": curve_from_run(sweep, 1), "guidellm": curve_from_run(guidellm, 2)}
    return {tool: curve for tool, curve in curves.items() if curve is not None}


def store_client_runs(
    url: str, *, rounded: bool = False, facts: DeploymentOverrides = FACTS
) -> dict[str, int]:
    """Store both tools' runs in the store at url (with facts); the run id of each source."""
    engine = make_engine(url)
    vllm, guidellm = client_uploads(rounded=rounded)
    ids: dict[str, int] = {}
    try:
        for source, uploads in (("vllm-bench", vllm), ("guidellm", [guidellm])):
            (outcome,) = ingest(engine, uploads, IngestOptions(facts, atomic=True), actor=SYSTEM)
            assert outcome.status is IngestStatus.STORED and outcome.run_id is not None, outcome
            ids[source] = outcome.run_id
    finally:
        engine.dispose()
    return ids
