"""The cheapest commitment schedule for a fleet over the months: how many nodes to commit, when,
and for how long (1- or 3-year terms), the rest on-demand (or partly spot), as a small integer
program (scipy's HiGHS through `milp`).

A commitment is paid for its whole term, months past the horizon included: a schedule never wins
by signing a 3-year term in its last month and leaving the bill off the page. What is owed after
the horizon is reported apart from the horizon's total. The program prices uncovered nodes as if
they ran all month (a static fleet); an autoscaled fleet's on-demand hours are then billed hour
by hour, so the schedule is a little more committed than its exact optimum, never less covered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Commitment", "Schedule", "Term", "cheapest_schedule"]


@dataclass(frozen=True, slots=True)
class Term:
    """A way to commit: its length and price, and where that price comes from."""

    name: str  # "1-year", "3-year"
    months: int
    usd_per_gpu_hour: float
    source: str


@dataclass(frozen=True, slots=True)
class Commitment:
    """`nodes` committed on `term` from month `start` (1-based) for the term's months."""

    term: Term
    start: int
    nodes: int

    def covers(self, month: int) -> bool:
        """True in the months (1-based) this commitment runs."""
        return self.start <= month < self.start + self.term.months


@dataclass(frozen=True, slots=True)
class Schedule:
    """Commitments over a horizon of `months` months."""

    commitments: tuple[Commitment, ...]
    months: int

    def covered(self, month: int) -> int:
        """Nodes committed in `month` (1-based)."""
        return sum(c.nodes for c in self.commitments if c.covers(month))

    def committed_usd(self, month: int, gpus_per_node: int, hours: float) -> float:
        """What the commitments running in `month` cost that month."""
        return sum(
            c.nodes * gpus_per_node * hours * c.term.usd_per_gpu_hour
            for c in self.commitments
            if c.covers(month)
        )

    def owed_after(self, gpus_per_node: int, hours: float) -> float:
        """What the commitments still cost after the horizon's last month."""
        owed = 0.0
        for c in self.commitments:
            left = max(0, c.start + c.term.months - 1 - self.months)
            owed += left * c.nodes * gpus_per_node * hours * c.term.usd_per_gpu_hour
        return owed

    def text(self) -> str:
        """'4 nodes on 3-year terms from month 1; 2 on 1-year from month 7' (or none)."""
        if not self.commitments:
            return "no commitment: on-demand throughout"
        parts = [
            f"{c.nodes} node(s) on a {c.term.name} term from month {c.start}"
            for c in sorted(self.commitments, key=lambda c: (c.start, c.term.months))
        ]
        return "; ".join(parts)


def cheapest_schedule(
    needs: Sequence[int], terms: Sequence[Term], uncovered_node_month_usd: float, node_hours: float
) -> Schedule:
    """The commitments that cover `needs` (nodes per month, 1-based order) at the least total,
    each uncovered node-month at `uncovered_node_month_usd`, a node-month of term t at
    node_hours x its price (node_hours: GPUs per node x hours per month)."""
    months = len(needs)
    if not terms or months == 0 or max(needs, default=0) <= 0:
        return Schedule((), months)
    from scipy.optimize import Bounds, LinearConstraint, milp  # noqa: PLC0415 (only here)

    starts = [(t, s) for t in terms for s in range(months)]
    n_x, n_y = len(starts), months
    cost = np.zeros(n_x + n_y)
    cover = np.zeros((months, n_x + n_y))
    for j, (term, start) in enumerate(starts):
        cost[j] = term.months * node_hours * term.usd_per_gpu_hour
        for month in range(start, min(start + term.months, months)):
            cover[month, j] = 1.0
    for month in range(months):
        cost[n_x + month] = uncovered_node_month_usd
        cover[month, n_x + month] = 1.0
    most = float(max(needs))
    found = milp(
        cost,
        constraints=LinearConstraint(cover, lb=np.asarray(needs, dtype=np.float64), ub=np.inf),
        integrality=np.concatenate([np.ones(n_x), np.zeros(n_y)]),
        bounds=Bounds(0.0, np.concatenate([np.full(n_x, most), np.full(n_y, most)])),
        options={"time_limit": 10.0},
    )
    if found.x is None:  # HiGHS found nothing in time (never seen): on-demand throughout
        return Schedule((), months)
    chosen = tuple(
        Commitment(term, start + 1, round(found.x[j]))
        for j, (term, start) in enumerate(starts)
        if round(found.x[j]) >= 1
    )
    return Schedule(chosen, months)
