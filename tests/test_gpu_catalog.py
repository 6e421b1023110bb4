"""One GPU catalog for everything: the planner's and the probe's names agree on every spelling,
and a GPU added as a catalog row (plus a price row) is named, validated, bounded by the
physics, projected to and priced, with no code file touched. (The app's lists: tests/ui.)"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from errors import PlanningError
from hardware.gpus import gpu_catalog, load_gpu_specs
from measurements.gpu_info import gpu_sku
from planner.analysis.capacity import make_plan
from planner.curves.load import H100, H200
from planner.curves.names import canonical_gpu
from planner.inputs.prices import default_price, load_catalog_csv, scenario_price
from planner.inputs.scenario import scenario_from_dict
from planner.physics.projection import PROJECTED, project_curve
from planner.physics.roofline import Ceilings, ceilings, curve_ceilings
from tests.gpu_catalogs import MI300X, MI300X_PRICE_ROW, add_gpu
from tests.planner.builders import scenario, silicon_curves

# Names no catalog row claims: both paths must leave each one alone, the same way.
NOT_IN_CATALOG = ("H100 PCIe", "NVIDIA H200 NVL", "NVIDIA GH200 480GB", "GH200", "NVIDIA GB10")


def _spellings(gpu: str, aliases: tuple[str, ...]) -> list[str]:
    written = [gpu, *aliases]
    return [*written, *(s.lower() for s in written), *(f" {s.upper()} " for s in written)]


def _assert_both_paths_agree() -> None:
    for spec in load_gpu_specs():
        for spelling in _spellings(spec.gpu, spec.aliases):
            assert canonical_gpu(spelling) == spec.gpu, (spelling, "planner")
            assert gpu_sku(spelling) == spec.gpu, (spelling, "probe")
    for name in NOT_IN_CATALOG:
        assert canonical_gpu(name) == gpu_sku(name) == name


def test_every_catalog_spelling_means_its_gpu_to_the_planner_and_the_probe() -> None:
    _assert_both_paths_agree()


def test_an_added_gpus_spellings_mean_it_to_the_planner_and_the_probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_gpu(tmp_path, monkeypatch)
    assert MI300X in gpu_catalog().names()
    _assert_both_paths_agree()
    # By the chip token too: the driver's name needs no alias; MI300A is another chip.
    assert canonical_gpu("AMD MI300X (192GB)") == gpu_sku("AMD MI300X (192GB)") == MI300X
    assert canonical_gpu("AMD MI300A") == gpu_sku("AMD MI300A") == "AMD MI300A"


def test_an_added_gpu_is_a_scenario_candidate_and_a_default_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_gpu(tmp_path, monkeypatch)
    chosen = scenario(candidates={"engines": ["vllm"], "gpus": ["mi300x_oam", "NVIDIA H100"]})
    assert chosen.candidates.gpus == (MI300X, H100)
    unnamed = scenario_from_dict(
        {
            "name": "any GPU",
            "model": "m",
            "workload": {"isl": 1, "osl": 1},
            "demand": {"peak_requests_per_s": 1},
        },
        "test-scenario",
    )
    assert unnamed.candidates.gpus[:2] == (H100, H200)
    assert unnamed.candidates.gpus[-1] == MI300X  # planned_by_default yes


def test_an_added_gpus_numbers_set_the_physics_ceilings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_gpu(tmp_path, monkeypatch)
    mi300x = gpu_catalog().find(MI300X)
    assert mi300x is not None
    found = ceilings("meta-llama/Llama-3.1-70B", "fp8", mi300x, 2)
    assert isinstance(found, Ceilings)
    assert found.mem_bw_bytes_s == pytest.approx(2 * 5.3e12)
    assert found.peak_flops == pytest.approx(2 * 2615e12)
    assert found.memory_bytes == pytest.approx(2 * 192e9)
    fp4 = ceilings("meta-llama/Llama-3.1-70B", "nvfp4", mi300x, 1)
    assert isinstance(fp4, Ceilings) and fp4.peak_flops is None  # no FP4 peak: no floor claimed
    measured = next(c for c in silicon_curves() if c.key.gpu == H100)
    stated = replace(measured, key=replace(measured.key, gpu="AMD Instinct MI300X"))
    on_mi300x = curve_ceilings(stated)
    assert isinstance(on_mi300x, Ceilings) and on_mi300x.gpu == MI300X
    assert on_mi300x.mem_bw_bytes_s == pytest.approx(on_mi300x.tp * 5.3e12)


def test_an_added_gpu_is_projected_to_planned_and_priced_from_its_price_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_gpu(tmp_path, monkeypatch, price_row=MI300X_PRICE_ROW)
    measured = next(c for c in silicon_curves() if c.key.gpu == H100 and c.key.engine == "vllm")
    projected = project_curve(measured, "AMD Instinct MI300X")
    assert not isinstance(projected, str), projected
    assert projected.key.gpu == MI300X and projected.provenance == PROJECTED
    prices = load_catalog_csv()
    sc = scenario(
        workload={"isl": 1024, "osl": 1024},
        sla={"ttft_p99_ms": 2000, "tpot_p99_ms": 50},
        candidates={"engines": ["vllm"], "gpus": ["AMD Instinct MI300X"]},
    )
    assert scenario_price(sc, prices, MI300X).usd_per_gpu_hour == 3.50
    plan = make_plan(sc, silicon_curves(), prices)
    assert plan.options and {o.gpu for o in plan.options} == {MI300X}
    assert all(o.curve.provenance == PROJECTED and o.usd_per_gpu_hour == 3.50 for o in plan.options)


def test_an_added_gpu_without_a_price_gets_the_no_price_error_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_gpu(tmp_path, monkeypatch)
    prices = load_catalog_csv()
    with pytest.raises(PlanningError, match=f"no default price for GPU '{MI300X}'"):
        default_price(prices, "AMD Instinct MI300X")
    sc = scenario(
        workload={"isl": 1024, "osl": 1024},
        sla={"ttft_p99_ms": 2000, "tpot_p99_ms": 50},
        candidates={"engines": ["vllm"], "gpus": [MI300X]},
    )
    with pytest.raises(PlanningError, match=r"set pricing: \{MI300X-OAM-192GB: USD_PER_GPU_HOUR\}"):
        make_plan(sc, silicon_curves(), prices)
    typed = scenario(**{**sc.model_dump(), "pricing": {"AMD Instinct MI300X": 6.0}})
    assert make_plan(typed, silicon_curves(), prices).options[0].usd_per_gpu_hour == 6.0
