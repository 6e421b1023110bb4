"""The one held-out benchmark (bench/bench_holdout.py) in quick mode: every check of issue 15 is
there beside its baseline, and where capplan claims to beat the baseline it does."""

from __future__ import annotations

from typing import Any

import pytest

from bench import bench_holdout

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def checks() -> dict[str, Any]:
    return {c.check: c for c in bench_holdout.report(quick=True)}


def test_every_kind_of_check_is_in_the_one_table(checks: dict[str, Any]) -> None:
    names = " ".join(checks)
    for kind in ("interior", "next level up", "past the knee", "projection", "workload pairs"):
        assert kind in names
    assert all(c.baseline and c.n > 0 for c in checks.values())


def test_the_fits_beat_aiconfigurator_and_the_projection_beats_no_scaling(
    checks: dict[str, Any],
) -> None:
    for metric in ("ttft_ms", "tpot_ms", "output_tok_s"):
        interior = checks[f"interior {metric}"]
        assert interior.ours_pct < interior.baseline_pct
    projected = [c for name, c in checks.items() if name.startswith("projection")]
    assert len(projected) == 6
    assert all(c.ours_pct < c.baseline_pct for c in projected if "output_tok_s" in c.check)


def test_a_verdict_is_given_exactly_where_there_is_a_target(checks: dict[str, Any]) -> None:
    for check in checks.values():
        assert (check.met is None) == (check.target_pct is None or check.ours_pct is None)
