"""planner.curves.plannable: what a run lacks for the planner, named as the field to fill in, by the
same rules the planner applies (a curve from the run, then selection's GPU and GPU count)."""

from __future__ import annotations

from pathlib import Path

from measurements.importers import import_bytes
from measurements.importers.common import NO_OVERRIDES, DeploymentOverrides
from measurements.run_file import RunFile
from planner.curves.load import LoadCurve, curve_from_run
from planner.curves.plannable import missing_for_planning
from planner.inputs.scenario import Scenario, scenario_from_dict
from planner.sizing.selection import select_curves

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "vllm-cpu-real"


def _run(name: str, overrides: DeploymentOverrides = NO_OVERRIDES) -> RunFile:
    (run,) = import_bytes(name, (REAL / name).read_bytes(), overrides=overrides).runs
    return run


def test_a_vllm_bench_file_names_no_gpu_and_no_tp() -> None:
    missing = missing_for_planning(_run("c8.json"))
    assert [fact.field for fact in missing] == ["gpu", "gpus_per_replica"]
    gpu, count = missing
    assert "(from file)" in gpu.message and "--gpu" in gpu.message
    assert "Tensor parallel (TP)" in count.message and "--tp / --gpu-count" in count.message


def _tiny(run: RunFile, curve: LoadCurve) -> Scenario:
    """A one-GPU vLLM scenario at the run's own model and workload."""
    return scenario_from_dict(
        {
            "name": "tiny",
            "model": run.deployment.model,
            "workload": {"isl": curve.key.isl, "osl": curve.key.osl},
            "demand": {"peak_requests_per_s": 1},
            "candidates": {"engines": ["vllm"], "gpus": ["H100-SXM-80GB"]},
        },
        "test",
    )


def test_with_the_gpu_and_tp_the_run_is_plannable_and_selection_uses_it() -> None:
    run = _run("c8.json", DeploymentOverrides(gpu="H100-SXM-80GB", tp=1))
    assert missing_for_planning(run) == ()
    curve = curve_from_run(run, 1)
    assert curve is not None
    sc = _tiny(run, curve)
    candidates, _ = select_curves(sc, [curve])
    assert [c.curve.run_id for c in candidates] == [1]


def test_without_the_gpu_selection_leaves_the_run_out_as_the_check_says() -> None:
    run = _run("c8.json", DeploymentOverrides(tp=1))
    assert [fact.field for fact in missing_for_planning(run)] == ["gpu"]
    curve = curve_from_run(run, 1)
    assert curve is not None
    sc = _tiny(run, curve)
    candidates, warnings = select_curves(sc, [curve])
    assert candidates == [] and any("GPU not stated" in w for w in warnings)


def test_a_rate_sweep_lacks_nothing_for_the_planner() -> None:
    # Issue 21 item 3: a request-rate run is planned through the serving model.
    run = _run("poisson-rate40-detailed.json", DeploymentOverrides(gpu="H100-SXM-80GB", tp=1))
    assert missing_for_planning(run) == ()
    curve = curve_from_run(run)
    assert curve is not None and [p.concurrency for p in curve.rate_points] == [40.0]


def test_a_trtllm_bench_throughput_report_is_an_offline_ceiling_not_a_concurrency() -> None:
    # The recorded trtllm-bench throughput report (no concurrency setting, 512 requests): it
    # used to be asked for a concurrency to invent; now it is stored, as a throughput ceiling.
    path = REAL.parent / "trtllm-bench" / "report.json"
    (run,) = import_bytes(path.name, path.read_bytes()).runs
    curve = curve_from_run(run)
    assert curve is not None and curve.points == ()
    assert curve.ceiling_output_tok_s == run.levels[0].value("output_tok_s")
    assert any("offline (max-throughput) only" in flag for flag in curve.flags)
    assert missing_for_planning(run) == ()  # nothing to fill in: a refusing ingest keeps it
