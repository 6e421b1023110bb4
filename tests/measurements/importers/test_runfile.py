"""Re-importing a capplan RunFile JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from errors import SchemaVersionError
from measurements.importers import DeploymentOverrides, import_bytes
from measurements.run_file import Provenance

C8 = (Path(__file__).parents[2] / "fixtures/vllm-cpu-real/c8.json").read_bytes()


def measured_run_json() -> bytes:
    (run,) = import_bytes("c8.json", C8).runs
    return run.model_copy(update={"provenance": Provenance.MEASURED}).model_dump_json().encode()


def test_run_file_round_trips_and_keeps_its_provenance() -> None:
    data = measured_run_json()
    imported = import_bytes("run.json", data)
    (run,) = imported.runs
    assert imported.format_id == "runfile"
    assert run.provenance == Provenance.MEASURED
    assert run.levels[0].value("output_tok_s") == 4958.706048513109
    assert run.levels[0].samples == import_bytes("c8.json", C8).runs[0].levels[0].samples
    assert run.origin_file == "run.json"


def test_overrides_apply_to_a_run_file_and_are_noted() -> None:
    overrides = DeploymentOverrides(gpu="H200-SXM-141GB", model="tiny")
    (run,) = import_bytes("run.json", measured_run_json(), overrides=overrides).runs
    assert (run.deployment.gpu, run.deployment.model) == ("H200-SXM-141GB", "tiny")
    assert "model: file said tiny-random-llama, user set tiny" in (run.notes or "")


def test_newer_schema_version_is_refused() -> None:
    doc = json.loads(measured_run_json())
    doc["schema_version"] = 2
    with pytest.raises(SchemaVersionError, match="newer capplan"):
        import_bytes("run.json", json.dumps(doc).encode())
