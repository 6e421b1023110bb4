"""Building, filtering and scoring the cases: the whole set or the --quick subset, of one split
or both (held-out cases are never answered unless asked for)."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence

from bench.validation.cases import Case, all_cases
from bench.validation.data import aiconfigurator_estimates, all_curves, gpus, representatives
from bench.validation.score import CaseResult, score_case
from bench.validation.split import DEV, HELD_OUT
from bench.validation.summary import GroupStats, summarise

SPLITS = {"dev": (DEV,), "held-out": (HELD_OUT,), "both": (DEV, HELD_OUT)}
QUICK_PER_GROUP = 6  # cases per (reach, bucket, split) in --quick


def _order(case: Case) -> str:
    """A stable order independent of the planner: a hash of the case's target and levels."""
    text = f"{case.reaches}|{case.target.key}|{case.levels}|{case.store[0].concurrencies()}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def quick_subset(cases: Sequence[Case], per_group: int = QUICK_PER_GROUP) -> list[Case]:
    """The first `per_group` cases of every (reaches, bucket, split) in hash order (a next level
    past the knee is a group of its own, so the knee is never left out)."""
    groups: dict[tuple[tuple[str, ...], str, str], list[Case]] = defaultdict(list)
    for case in cases:
        groups[(case.reaches, case.bucket, case.split)].append(case)
    return [c for group in groups.values() for c in sorted(group, key=_order)[:per_group]]


def selected_cases(splits: Sequence[str], quick: bool, reaches: Sequence[str] = ()) -> list[Case]:
    """Every case of the splits (or the quick subset of them), of these reaches only if named."""
    every = all_curves()
    cases = [c for c in all_cases(representatives(every), every, gpus()) if c.split in splits]
    if reaches:
        cases = [c for c in cases if any(r in c.reaches for r in reaches)]
    return quick_subset(cases) if quick else cases


def evaluate(
    splits: Sequence[str], quick: bool, reaches: Sequence[str] = ()
) -> dict[tuple[str, str, str, str], GroupStats]:
    """Score the cases and summarise them per (reach, bucket, split, method)."""
    return summarise(scored_cases(splits, quick, reaches))


def scored_cases(
    splits: Sequence[str], quick: bool, reaches: Sequence[str] = ()
) -> list[CaseResult]:
    """Every selected case answered and scored (the points behind evaluate's figures)."""
    found = gpus()
    aic = aiconfigurator_estimates()
    return [score_case(c, found, aic) for c in selected_cases(splits, quick, reaches)]
