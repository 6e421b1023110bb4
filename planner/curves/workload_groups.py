"""Workloads that differ only by tokenisation rounding are one workload for curves and plans.

Two tools asked for the same ISL/OSL rarely report the same numbers: `vllm bench serve` states
the ISL it asked for (128), guidellm the mean its tokenizer counted (129, or an OSL of 63.9).
Two token counts are the same workload length when they differ by at most ROUNDING_TOKENS tokens
or ROUNDING_SHARE of the larger one, whichever is more; a workload is the same when both its ISL
and its OSL are. Each run keeps its exact values; only the grouping uses the tolerance.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from planner.curves.load import LoadCurve

# 2 tokens absorb a BOS token or a mean over random prompts; 2% absorbs a tokenizer that splits
# a long synthetic prompt slightly differently. 128 vs 256 (or 1000 vs 1050) stay apart.
ROUNDING_TOKENS = 2
ROUNDING_SHARE = 0.02
TOLERANCE_TEXT = (
    f"ISL and OSL each within {ROUNDING_TOKENS} tokens or {ROUNDING_SHARE:.0%}, "
    "whichever is more (tokenisation rounding)"
)

NOT_STATED = "not stated"
Pair = tuple[int | None, int | None]


@dataclass(frozen=True, slots=True)
class WorkloadGroup:
    """One workload: its name (the first exact ISL/OSL of the group) and every exact pair in it."""

    isl: int | None
    osl: int | None
    members: tuple[Pair, ...]

    def holds(self, isl: int | None, osl: int | None) -> bool:
        """Whether a run measured at exactly isl/osl belongs to this workload."""
        return (isl, osl) in self.members

    def name(self) -> str:
        """'ISL/OSL' of the group, or 'not stated'."""
        return NOT_STATED if self.isl is None or self.osl is None else f"{self.isl}/{self.osl}"


def same_tokens(a: float, b: float) -> bool:
    """Whether two token counts differ only by rounding (ROUNDING_TOKENS or ROUNDING_SHARE)."""
    return abs(a - b) <= max(ROUNDING_TOKENS, ROUNDING_SHARE * max(abs(a), abs(b)))


def same_workload(a: Pair, b: Pair) -> bool:
    """Whether two (ISL, OSL) pairs are one workload; 'not stated' only matches itself."""
    isl_a, osl_a = a
    isl_b, osl_b = b
    if isl_a is None or osl_a is None or isl_b is None or osl_b is None:
        return (isl_a is None or osl_a is None) and (isl_b is None or osl_b is None)
    return same_tokens(isl_a, isl_b) and same_tokens(osl_a, osl_b)


def group_workloads(pairs: Iterable[Pair]) -> list[WorkloadGroup]:
    """The distinct workloads among exact (ISL, OSL) pairs, ascending, 'not stated' last.

    Pairs are taken in ascending order; each joins the first group whose name (its first pair)
    is within the tolerance, else starts a group. Joining is measured against the name, never a
    chain of neighbours, so a group never spans more than one tolerance.
    """
    unique = sorted(set(pairs), key=_order)
    names: list[Pair] = []
    members: dict[Pair, list[Pair]] = {}
    for pair in unique:
        name = next((n for n in names if same_workload(n, pair)), None)
        if name is None:
            names.append(pair)
            members[pair] = [pair]
        else:
            members[name].append(pair)
    return [WorkloadGroup(n[0], n[1], tuple(members[n])) for n in names]


def group_of(groups: Iterable[WorkloadGroup], isl: int | None, osl: int | None) -> WorkloadGroup:
    """The group holding isl/osl, or a group of its own when none does."""
    found = next((group for group in groups if group.holds(isl, osl)), None)
    return found if found is not None else WorkloadGroup(isl, osl, ((isl, osl),))


def curve_workloads(curves: Sequence[LoadCurve]) -> list[str]:
    """Each curve's workload: the name of its group among the curves of its (canonical) model."""
    pairs: dict[str, list[Pair]] = {}
    for curve in curves:
        pairs.setdefault(curve.key.model_id, []).append((curve.key.isl, curve.key.osl))
    groups = {model: group_workloads(found) for model, found in pairs.items()}
    return [group_of(groups[c.key.model_id], c.key.isl, c.key.osl).name() for c in curves]


def _order(pair: Pair) -> tuple[bool, int, bool, int]:
    isl, osl = pair
    unstated = isl is None or osl is None
    return (unstated, isl or 0, unstated, osl or 0)
