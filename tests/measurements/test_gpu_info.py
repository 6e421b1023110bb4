"""GPU facts parsed from recorded nvidia-smi outputs (tests/fixtures/nvidia-smi) and from NVML."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import pytest

from measurements import gpu_info
from measurements.gpu_info import (
    NVIDIA_SMI_QUERY,
    facts_from_smi,
    gpu_sku,
    nvidia_smi_facts,
    nvml_facts,
    parse_cuda_version,
    parse_query_csv,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi"


def _read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_query_asks_for_the_fields_the_parser_reads() -> None:
    assert NVIDIA_SMI_QUERY == (
        "nvidia-smi",
        "--query-gpu=index,name,driver_version,memory.total,memory.used,count",
        "--format=csv,noheader,nounits",
    )


def test_eight_h100s_without_header_or_units() -> None:
    facts = facts_from_smi(_read("h100x8-query-noheader-nounits.csv"), _read("h100x8-banner.txt"))
    assert facts is not None
    assert facts.name == "NVIDIA H100 80GB HBM3"
    assert facts.count == 8
    assert facts.driver_version == "550.54.15"
    assert facts.cuda_version == "12.4"
    assert [g.index for g in facts.gpus] == list(range(8))
    assert [g.memory_used_mib for g in facts.gpus[:3]] == [72913, 72913, 4]
    assert facts.sku == "H100-SXM-80GB"


def test_count_column_agrees_with_the_rows() -> None:
    rows = parse_query_csv(_read("h100x8-query-noheader-nounits.csv"))
    assert {row["count"] for row in rows} == {str(len(rows))}


def test_query_memory_matches_the_banner_of_the_same_box() -> None:
    # Two outputs of one machine: the banner's "used / total" cells must agree with the CSV.
    facts = facts_from_smi(_read("h100x8-query-noheader-nounits.csv"), None)
    assert facts is not None
    cells = re.findall(r"(\d+)MiB /\s+(\d+)MiB", _read("h100x8-banner.txt"))
    assert [(float(u), float(t)) for u, t in cells] == [
        (g.memory_used_mib, g.memory_total_mib) for g in facts.gpus
    ]


def test_memory_totals_in_decimal_gb() -> None:
    facts = facts_from_smi(_read("h100x8-query-noheader-nounits.csv"), None)
    assert facts is not None
    expected_used = (2 * 72913 + 6 * 4) * 1024 * 1024 / 1e9
    assert facts.memory_used_gb == pytest.approx(expected_used)
    assert facts.memory_total_gb == pytest.approx(8 * 81559 * 1024 * 1024 / 1e9)


def test_h200_with_header_and_units_and_cuda_from_smi_q() -> None:
    facts = facts_from_smi(_read("h200x1-query-header-units.csv"), _read("h200x1-smi-q.txt"))
    assert facts is not None
    assert (facts.name, facts.count, facts.driver_version) == ("NVIDIA H200", 1, "570.124.06")
    assert facts.cuda_version == "12.8"
    assert facts.gpus[0].memory_total_mib == 143771
    assert facts.gpus[0].memory_used_mib == 1
    assert facts.sku == "H200-SXM-141GB"


def test_header_order_is_read_from_the_header() -> None:
    text = "name, memory.used [MiB], driver_version\nNVIDIA H200, 10 MiB, 570.1\n"
    facts = facts_from_smi(text, None)
    assert facts is not None
    assert facts.gpus[0].memory_used_mib == 10
    assert facts.gpus[0].memory_total_mib is None
    assert facts.driver_version == "570.1"


def test_not_available_memory_becomes_none_not_zero() -> None:
    facts = facts_from_smi(_read("gb10-query-unified-memory.csv"), None)
    assert facts is not None
    assert facts.gpus[0].memory_total_mib is None
    assert facts.gpus[0].memory_used_mib is None
    assert facts.sku == "NVIDIA GB10"


def test_driver_failure_text_gives_no_facts() -> None:
    assert facts_from_smi(_read("no-driver.txt"), None) is None
    assert parse_cuda_version(_read("no-driver.txt")) is None


@pytest.mark.parametrize(
    ("name", "sku"),
    [
        ("NVIDIA H100 80GB HBM3", "H100-SXM-80GB"),
        ("NVIDIA H200", "H200-SXM-141GB"),
        ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe"),
        ("NVIDIA H200 NVL", "NVIDIA H200 NVL"),
        ("NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB"),
    ],
)
def test_gpu_sku(name: str, sku: str) -> None:
    assert gpu_sku(name) == sku


def test_nvidia_smi_facts_runs_the_query_then_the_banner() -> None:
    calls: list[tuple[str, ...]] = []

    def run(argv: Sequence[str]) -> str | None:
        calls.append(tuple(argv))
        if tuple(argv) == NVIDIA_SMI_QUERY:
            return _read("h100x8-query-noheader-nounits.csv")
        return _read("h100x8-banner.txt")

    facts = nvidia_smi_facts(run)
    assert facts is not None
    assert facts.cuda_version == "12.4"
    assert calls == [NVIDIA_SMI_QUERY, ("nvidia-smi",)]


def test_missing_nvidia_smi_gives_none() -> None:
    assert nvidia_smi_facts(lambda _argv: None) is None
    # The real runner on this CPU-only machine: no nvidia-smi, no crash.
    assert gpu_info.run_command(("definitely-not-a-program-capplan",)) is None


class _FakeNvmlError(Exception):
    pass


def _fake_nvml(fail_init: bool = False) -> SimpleNamespace:
    mib = 1024 * 1024
    state = {"shutdown": False}

    def init() -> None:
        if fail_init:
            raise _FakeNvmlError("Driver Not Loaded")

    return SimpleNamespace(
        NVMLError=_FakeNvmlError,
        state=state,
        nvmlInit=init,
        nvmlShutdown=lambda: state.update(shutdown=True),
        nvmlDeviceGetCount=lambda: 2,
        nvmlDeviceGetHandleByIndex=lambda i: i,
        nvmlDeviceGetName=lambda _h: b"NVIDIA H200",
        nvmlDeviceGetMemoryInfo=lambda h: SimpleNamespace(
            total=143771 * mib, used=(70000 if h == 0 else 1) * mib
        ),
        nvmlSystemGetDriverVersion=lambda: "570.124.06",
        nvmlSystemGetCudaDriverVersion=lambda: 12080,
    )


def test_nvml_path_reads_names_memory_and_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _fake_nvml()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    facts = nvml_facts()
    assert facts is not None
    assert (facts.name, facts.count, facts.cuda_version) == ("NVIDIA H200", 2, "12.8")
    assert [g.memory_used_mib for g in facts.gpus] == [70000, 1]
    assert fake.state["shutdown"] is True


def test_nvml_init_failure_gives_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml(fail_init=True))
    assert nvml_facts() is None


def test_gpu_facts_falls_back_to_nvidia_smi(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails like a missing package
    smi = facts_from_smi(_read("h200x1-query-header-units.csv"), None)
    monkeypatch.setattr(gpu_info, "nvidia_smi_facts", lambda: smi)
    assert gpu_info.gpu_facts() is smi
