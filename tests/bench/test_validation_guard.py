"""The validation bench's quick dev subset stays within the recorded ceilings
(bench/validation/ceilings.json): no reach's MAPE above its ceiling, no more invariant breaks,
no reach that stops answering. Timing is never asserted."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.validation.ceilings import current, load  # noqa: E402
from bench.validation.run import evaluate  # noqa: E402
from bench.validation.split import DEV  # noqa: E402


@pytest.fixture(scope="module")
def figures() -> dict[str, dict[str, dict[str, float]]]:
    return current(evaluate((DEV,), quick=True))


def test_every_reach_stays_within_its_recorded_dev_mape(
    figures: dict[str, dict[str, dict[str, float]]],
) -> None:
    over = [
        f"{reach} {method} {metric}: {figures.get(reach, {}).get(method, {}).get(metric)} "
        f"(ceiling {ceiling})"
        for reach, methods in load().items()
        for method, row in methods.items()
        for metric, ceiling in row.items()
        if metric != "breaks"
        and not figures.get(reach, {}).get(method, {}).get(metric, float("inf")) <= ceiling
    ]
    assert not over, "dev MAPE above its ceiling (or no longer answered):\n" + "\n".join(over)


def test_invariant_breaks_do_not_grow(figures: dict[str, dict[str, dict[str, float]]]) -> None:
    grown = [
        f"{reach} {method}: {found} breaks (recorded {row['breaks']})"
        for reach, methods in load().items()
        for method, row in methods.items()
        if (found := figures.get(reach, {}).get(method, {}).get("breaks", 0.0)) > row["breaks"]
    ]
    assert not grown, "more invariant breaks than recorded:\n" + "\n".join(grown)
