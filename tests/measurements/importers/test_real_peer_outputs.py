"""Real outputs of the peer tools' current releases (tests/fixtures/<tool>/real-<version>/, made
by scripts/record_peer_outputs.py against the vLLM CPU server): every result file each tool
wrote imports, and what capplan stores equals what the tool itself printed on stdout."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from db import run_reads
from db.engine import Engine, make_engine
from errors import InputError
from measurements.importers import import_bytes
from measurements.importers.common import DeploymentOverrides
from measurements.run_file import Level, LoadKind
from team.roles import SYSTEM
from tests.interop import compare
from tests.interop.peer_tools import printed_numbers
from tests.stores import Stores
from workflows.ingest import IngestOptions, Upload, ingest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
REAL = {
    "vllm-bench": FIXTURES / "vllm-bench-serve" / "real-0.32.0",
    "aiperf": FIXTURES / "aiperf" / "real-0.13.0",
    "guidellm": FIXTURES / "guidellm" / "real-0.8.1",
    "inference-perf": FIXTURES / "inference-perf" / "real-0.7.0",
}
LEVELS = ("c1", "c4", "rate2")
AGGREGATES, PER_REQUEST = compare.AGGREGATES, compare.PER_REQUEST
FACTS = {"engine": "vllm", "model": "tiny-random-llama", "gpu": "H100-SXM-80GB", "tp": 1}
CASES = [
    (tool, level, name.format(level=level))
    for tool, names in AGGREGATES.items()
    for level in LEVELS
    for name in names
]


def record(tool: str, level: str) -> dict[str, object]:
    """The recorder's record.json of one run: version, command, load, printed numbers."""
    loaded: dict[str, object] = json.loads((REAL[tool] / level / "record.json").read_text())
    return loaded


def printed(tool: str, level: str) -> dict[str, float]:
    """The numbers the tool printed, as recorded."""
    numbers = record(tool, level)["printed"]
    assert isinstance(numbers, dict)
    return numbers


def user_load(tool: str, level: str) -> dict[str, object]:
    """The load the recorder ran, as the --concurrency / --request-rate a user would give."""
    load = record(tool, level)["load"]
    assert isinstance(load, dict)
    if load["kind"] == "concurrency":
        return {"concurrency": int(load["value"])}
    return {"request_rate": load["value"]}


@pytest.fixture(scope="module")
def engine(stores: Stores) -> Iterator[Engine]:
    made = make_engine(stores.migrated("real-peer-outputs"))
    yield made
    made.dispose()


def stored_level(engine: Engine, path: Path, facts: dict[str, object]) -> Level:
    """Import `path` into the store the way `capplan import` does, and read its level back."""
    options = IngestOptions(DeploymentOverrides.model_validate(facts), atomic=True)
    (outcome,) = ingest(engine, [Upload(path.name, path.read_bytes())], options, actor=SYSTEM)
    assert outcome.run_id is not None, outcome.message
    (level,) = run_reads.get_run(engine, outcome.run_id).run.levels
    return level


@pytest.mark.parametrize(("tool", "level", "name"), CASES)
def test_the_stored_numbers_equal_the_numbers_the_tool_printed(
    engine: Engine, tool: str, level: str, name: str
) -> None:
    path = REAL[tool] / level / name
    stored = stored_level(engine, path, FACTS | user_load(tool, level))
    pairs = compare.pairs(tool, printed(tool, level), stored)
    assert len(pairs) >= 10, [p.label for p in pairs]  # the comparison covers the summary
    assert compare.mismatches(tool, printed(tool, level), stored) == []
    load = record(tool, level)["load"]
    assert isinstance(load, dict)
    assert (stored.load_kind.value, stored.load_value) == (load["kind"], load["value"])
    assert stored.load_stated


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("tool", sorted(PER_REQUEST))
def test_per_request_files_reproduce_the_printed_latencies_and_counts(
    engine: Engine, tool: str, level: str
) -> None:
    stored = stored_level(
        engine, REAL[tool] / level / PER_REQUEST[tool], FACTS | user_load(tool, level)
    )
    assert compare.per_request_mismatches(tool, printed(tool, level), stored) == []


def test_the_recorded_stdout_parses_to_the_recorded_numbers() -> None:
    for tool, folder in REAL.items():
        for level in LEVELS:
            stdout = (folder / level / "stdout.txt").read_text()
            assert printed_numbers(tool, stdout) == printed(tool, level), (tool, level)


def test_every_recorded_run_names_its_tool_version_and_exact_command() -> None:
    versions = {"vllm-bench": "0.32.0", "aiperf": "0.13.0", "guidellm": "0.8.1"}
    for tool in REAL:
        for level in LEVELS:
            rec = record(tool, level)
            assert rec["returncode"] == 0
            assert rec["version"] == versions.get(tool, "0.7.0")
            command = rec["command"]
            assert isinstance(command, list) and len(command) > 2


def test_aiperf_013_json_without_a_stated_load_names_version_and_key() -> None:
    doc = json.loads((REAL["aiperf"] / "c4" / "profile_export_aiperf.json").read_text())
    for phase in doc["input_config"]["phases"]:
        phase["type"] = "fixed_schedule"
    data = json.dumps(doc).encode()
    with pytest.raises(InputError) as caught:
        import_bytes("p.json", data, overrides=DeploymentOverrides(engine="vllm"))
    message = str(caught.value)
    assert "aiperf 0.13.0" in message and "input_config.phases" in message
    assert "--concurrency" in message
    given = DeploymentOverrides(engine="vllm", concurrency=4)
    (level,) = import_bytes("p.json", data, overrides=given).runs[0].levels
    assert (level.load_kind, level.load_value, level.load_stated) == (LoadKind.CONCURRENCY, 4, True)
    assert "load stated by the user: concurrency 4" in (level.notes or "")


def test_a_newer_aiperf_that_still_parses_imports_with_a_note_naming_its_version() -> None:
    doc = json.loads((REAL["aiperf"] / "c1" / "profile_export_aiperf.json").read_text())
    doc["aiperf_version"] = "0.14.2"
    imported = import_bytes(
        "p.json", json.dumps(doc).encode(), overrides=DeploymentOverrides(engine="vllm")
    )
    notes = imported.runs[0].notes or ""
    assert (
        "aiperf 0.14.2, newer than the releases this importer was verified on (aiperf 0.13.0)"
        in notes
    )
