"""Which curve backs each candidate: exact workload first, then provenance, then most levels."""

from __future__ import annotations

from dataclasses import replace

from planner.curves.load import CurveKey, CurvePoint, LoadCurve
from planner.engine.curves import distance_error
from planner.physics.workload_adjust import ADJUSTED
from planner.sizing.selection import select_curves
from tests.planner.builders import scenario


def _curve(
    run_id: int, isl: int | None, osl: int | None, provenance: str = "measured", levels: int = 4
) -> LoadCurve:
    key = CurveKey(
        "vllm", "0.8", "meta-llama/Llama-3.1-70B", "fp8", "H100-SXM-80GB", 2, 2, isl, osl
    )
    points = tuple(CurvePoint(float(2**i), output_tok_s=100.0 * 2**i) for i in range(levels))
    return LoadCurve(key, points, run_id, provenance, None, None, None, 2, ())


def _pick(*curves: LoadCurve) -> tuple[LoadCurve | None, tuple[str, ...], list[str]]:
    sc = scenario(
        workload={"isl": 1000, "osl": 500},
        candidates={"engines": ["vllm"], "gpus": ["H100-SXM-80GB"]},
    )
    candidates, warnings = select_curves(sc, list(curves))
    if not candidates:
        return None, (), warnings
    (only,) = candidates
    return only.curve, only.flags, warnings


def test_exact_workload_beats_better_provenance_and_more_levels() -> None:
    chosen, flags, _ = _pick(_curve(1, 1050, 480, "measured", 8), _curve(2, 1000, 500, "published"))
    assert chosen is not None and chosen.run_id == 2
    assert any("chosen from 2 runs" in f for f in flags)


def test_measured_beats_imported_beats_published_then_most_levels() -> None:
    chosen, _, _ = _pick(_curve(1, 1000, 500, "published", 9), _curve(2, 1000, 500, "imported"))
    assert chosen is not None and chosen.run_id == 2
    chosen, _, _ = _pick(_curve(3, 1000, 500, "measured", 4), _curve(4, 1000, 500, "measured", 6))
    assert chosen is not None and chosen.run_id == 4


def test_very_near_workload_is_used_as_is_with_a_flag() -> None:
    chosen, flags, _ = _pick(_curve(1, 1050, 480))
    assert chosen is not None and chosen.run_id == 1
    assert "measured at ISL/OSL 1050/480, scenario 1000/500: within 1.1x, not adjusted" in flags


def test_nearby_workload_without_latencies_is_adjusted_from_throughput_alone_and_says_so() -> None:
    # Issue 15 item 6: adjustment used to refuse every curve lacking TTFT and TPOT.
    chosen, _, _ = _pick(_curve(1, 1500, 300))
    assert chosen is not None and chosen.provenance == ADJUSTED
    assert (chosen.key.isl, chosen.key.osl) == (1000, 500)
    assert any("ADJUSTED from output tok/s alone" in flag for flag in chosen.flags)
    assert all(p.ttft_ms is None and p.tpot_ms is None for p in chosen.points)
    assert all(p.output_tok_s is not None for p in chosen.points)


def test_a_workload_just_past_the_limit_is_adjusted_and_marked_beyond_the_validated_range() -> None:
    # Issue 15 item 6: 4000/500 against 8192/1024 is 2.048x away; it was refused and the plan's
    # headline was "no option meets the SLA". Here 1000/500 against 2048/1024, the same 2.048x.
    chosen, flags, _ = _pick(_curve(5, 2048, 1024))
    assert chosen is not None and chosen.provenance == ADJUSTED
    assert any("BEYOND THE VALIDATED RANGE" in f and "2.05x away" in f for f in flags)


def test_workload_beyond_the_adjustment_limit_is_read_from_the_serving_model() -> None:
    # Issue 21: a brief between the measurements gets an answer, its distance and error said.
    chosen, _, _ = _pick(_curve(2, 1000, 2000), _curve(3, 1000, 4000))
    assert chosen is not None and chosen.provenance == ADJUSTED
    assert (chosen.key.isl, chosen.key.osl) == (1000, 500)
    assert any("adjusted by the serving model from 1000/2000, 4.0x away" in f for f in chosen.flags)
    assert chosen.basis_error == distance_error(4.0)  # the dev split's 2-4x figure
    assert all(p.output_tok_s is not None and p.ttft_ms is None for p in chosen.points)


def test_workload_beyond_the_limit_of_a_model_without_facts_is_refused_naming_the_nearest() -> None:
    def unknown(curve: LoadCurve) -> LoadCurve:
        return replace(curve, key=replace(curve.key, model="acme/unknown-70b"))

    sc = scenario(
        model="acme/unknown-70b",
        workload={"isl": 1000, "osl": 500},
        candidates={"engines": ["vllm"], "gpus": ["H100-SXM-80GB"]},
    )
    candidates, warnings = select_curves(sc, [unknown(_curve(2, 1000, 2000))])
    assert candidates == []
    assert any(
        "nearest measured at ISL/OSL 1000/2000" in w
        and "more than 2.5x away, too far to adjust" in w
        for w in warnings
    )


def test_unknown_workload_is_usable_with_a_flag() -> None:
    chosen, flags, _ = _pick(_curve(1, None, None))
    assert chosen is not None and "workload not stated by source" in flags


def test_other_precision_engine_and_tp_are_left_out_with_reasons() -> None:
    base = _curve(1, 1000, 500)
    bf16 = replace(base, key=replace(base.key, precision="bf16"))
    sglang = replace(base, key=replace(base.key, engine="sglang"))
    sc = scenario(workload={"isl": 1000, "osl": 500}, candidates={"tp": [4, 8]})
    candidates, warnings = select_curves(sc, [bf16, sglang, base])
    assert candidates == []
    text = " | ".join(warnings)
    assert "precision bf16 (scenario fp8)" in text
    assert "engine sglang not among the candidates" in text
    assert "TP 2 not among the candidate TP sizes" in text


def test_an_offline_only_run_is_a_ceiling_for_the_sweep_of_the_same_deployment() -> None:
    sweep = _curve(1, 1000, 500)  # 100-800 tok/s at 1-8 streams
    offline = replace(sweep, points=(), run_id=2, ceiling_output_tok_s=650.0)
    other_workload = replace(offline, key=replace(offline.key, isl=2000), run_id=3)
    candidates, warnings = select_curves(
        scenario(
            workload={"isl": 1000, "osl": 500},
            candidates={"engines": ["vllm"], "gpus": ["H100-SXM-80GB"]},
        ),
        [sweep, offline, other_workload],
    )
    (only,) = candidates
    assert only.curve.run_id == 1 and only.curve.ceiling_output_tok_s == 650.0
    assert any("offline (max-throughput) output 650 tok/s" in f for f in only.curve.flags)
    assert any("offline (max-throughput) only" in w for w in warnings)
