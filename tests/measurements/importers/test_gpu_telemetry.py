"""GPU power from AIPerf's DCGM telemetry: the numbers AIPerf wrote into the real export (eight
A100s on one node, one serving), the busiest GPUs as the deployment's, and bad telemetry named."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from errors import InputError
from measurements.importers import aiperf
from measurements.importers.common import DeploymentOverrides
from measurements.run_file import POWER_METRIC, Level, Provenance

FLAT = Path(__file__).parents[2] / "fixtures" / "aiperf" / "k8s-dev__profile_export_aiperf.json"
GPUS = "dcgm-exporter.prometheus.svc.cluster.local:9400"


def level_of(doc: dict[str, Any], **deployment: Any) -> Level:
    overrides = DeploymentOverrides(engine="vllm", **deployment)
    (run,) = aiperf.parse("export.json", doc, b"", overrides, Provenance.IMPORTED)
    (level,) = run.levels
    return level


def boards(doc: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = doc["telemetry_data"]["endpoints"][GPUS]["gpus"]
    return found


def test_the_busiest_gpus_are_the_deployments_as_aiperf_wrote_them() -> None:
    doc = json.loads(FLAT.read_text(encoding="utf-8"))
    watts = sorted(
        (b["metrics"]["gpu_power_usage"]["avg"] for b in boards(doc).values()), reverse=True
    )
    assert len(watts) == 8 and watts[0] == 94.61787741935483  # gpu_0, the one serving
    one = level_of(doc, gpu_count=1)
    assert one.value(POWER_METRIC) == watts[0]
    (metric,) = [m for m in one.metrics if m.name == POWER_METRIC]
    assert metric.source_key is not None and metric.source_key.endswith(
        "gpus.gpu_0.metrics.gpu_power_usage.avg"
    )
    assert "busiest 1 of the 8 GPUs" in (one.notes or "")
    two = level_of(doc, tp=2)
    assert two.value(POWER_METRIC) == pytest.approx((watts[0] + watts[1]) / 2)
    unknown = level_of(doc)
    assert unknown.value(POWER_METRIC) == pytest.approx(sum(watts) / 8)
    assert "GPU count not stated" in (unknown.notes or "")


def test_a_file_without_telemetry_has_no_power() -> None:
    doc = json.loads(FLAT.read_text(encoding="utf-8"))
    del doc["telemetry_data"]
    assert level_of(doc, gpu_count=1).value(POWER_METRIC) is None


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"unit": "kW"}, "gpu_power_usage.unit", "expected W"),
        ({"avg": -3.0}, "gpu_power_usage.avg", "negative"),
        ({"avg": 9000.0}, "gpu_power_usage.avg", "beyond 5000 W per GPU"),
        ({"avg": "hot"}, "gpu_power_usage.avg", "number"),
    ],
)
def test_bad_telemetry_is_refused_naming_the_gpu_and_field(
    change: dict[str, Any], field: str, words: str
) -> None:
    doc = copy.deepcopy(json.loads(FLAT.read_text(encoding="utf-8")))
    boards(doc)["gpu_3"]["metrics"]["gpu_power_usage"].update(change)
    with pytest.raises(InputError) as caught:
        level_of(doc, gpu_count=1)
    assert caught.value.file == "export.json"
    assert caught.value.field is not None and "gpus.gpu_3.metrics." + field in caught.value.field
    assert words in str(caught.value)
