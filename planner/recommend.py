"""The recommendation: the cheapest option that meets the SLA (and budget), said in words."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from planner.sla import MEASURED_RANGE

# Whole-node billing makes many options cost the same; a cost gap below this is within the
# uncertainty of any price quote, so the option using fewer GPUs (more headroom) is preferred.
COST_TIE_PCT = 1.0

if TYPE_CHECKING:  # capacity imports this module; the type is only needed for annotations
    from planner.capacity import Option


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The chosen option, the runner-up, why, and the margin (runner-up cost - choice cost)."""

    choice: Option | None
    runner_up: Option | None
    reason: str
    margin_usd: float | None
    margin_pct: float | None


def recommend(options: Sequence[Option], budget: float | None) -> Recommendation:
    """Cheapest option meeting the SLA (and the monthly budget when given), with the reason."""
    meeting = sorted((o for o in options if _priced(o) and o.meets_sla), key=_cost_key)
    affordable = [o for o in meeting if budget is None or o.within_budget]
    if not affordable:
        return Recommendation(None, None, _nothing_fits(options, meeting, budget), None, None)
    choice = _choose(affordable)
    others = [o for o in affordable if o is not choice]
    runner_up = others[0] if others else None
    if runner_up is None:
        return Recommendation(choice, None, _sentence(choice) + "." + _caveats(choice), None, None)
    margin = _cost(runner_up) - _cost(choice)
    pct = 100.0 * margin / _cost(runner_up) if _cost(runner_up) > 0 else 0.0
    reason = f"{_sentence(choice)}, {_comparison(choice, runner_up, margin, pct)}."
    return Recommendation(choice, runner_up, reason + _caveats(choice), margin, pct)


# Flags that weaken what "meets every SLA target" means; the reason must say them.
_CAVEAT_MARKERS = (
    "did not state",
    "estimated as",
    "checked on the mean",
    "derived from other numbers",
    "workload not stated",
    "not adjusted",
    "SIMULATED",
)


def _caveats(option: Option) -> str:
    caveats = [f for f in option.flags if any(marker in f for marker in _CAVEAT_MARKERS)]
    return f" Caveats: {'; '.join(caveats)}." if caveats else ""


def _choose(affordable: list[Option]) -> Option:
    """Cheapest, except that costs within COST_TIE_PCT count as equal and fewer GPUs win."""
    cheapest = _cost(affordable[0])
    tied = [o for o in affordable if _cost(o) <= cheapest * (1 + COST_TIE_PCT / 100)]
    return min(tied, key=lambda o: (o.gpus or 0, o.replicas or 0, _cost(o)))


def _priced(option: Option) -> bool:
    return option.total_monthly_cost_usd is not None


def _cost(option: Option) -> float:
    return option.total_monthly_cost_usd or 0.0


def _cost_key(option: Option) -> tuple[float, int, int]:
    # Equal cost (whole nodes) -> fewer GPUs and replicas leave more headroom.
    return _cost(option), option.gpus or 0, option.replicas or 0


def _sentence(option: Option) -> str:
    limit = (
        "its highest measured concurrency"
        if option.binding_constraint == MEASURED_RANGE
        else option.binding_constraint
    )
    nodes = f"{option.nodes} node" + ("" if option.nodes == 1 else "s")
    return (
        f"{option.title()} meets every SLA target at up to "
        f"{option.concurrency_per_replica:g} streams per replica (limited by {limit}); "
        f"{option.replicas} replicas on {nodes} cost ${_cost(option):,.0f}/month"
    )


def _comparison(choice: Option, runner_up: Option, margin: float, pct: float) -> str:
    other = f"{runner_up.title()} ({runner_up.replicas} replicas, {runner_up.gpus} GPUs)"
    if margin > 0.005:
        return f"${margin:,.0f} ({pct:.1f}%) less than the runner-up {other}"
    if margin < -0.005:
        return (
            f"${-margin:,.2f} ({-pct:.2f}%) more than the runner-up {other}: within "
            f"{COST_TIE_PCT:g}%, and it needs {choice.gpus} GPUs in use, leaving more headroom"
        )
    return (
        f"the same cost as the runner-up {other} with {choice.gpus} GPUs in use, "
        "leaving more headroom"
    )


def _nothing_fits(options: Sequence[Option], meeting: list[Option], budget: float | None) -> str:
    if meeting and budget is not None:
        cheapest = meeting[0]
        return (
            f"no option meets the SLA within the budget of ${budget:,.0f}/month; the cheapest "
            f"that meets the SLA is {cheapest.title()} at ${_cost(cheapest):,.0f}/month"
        )
    if not options:
        return "no option to compare: no curve matched the scenario"
    parts = [f"{o.title()}: {o.rejected_reason or 'does not meet the SLA'}" for o in options]
    return "no option meets the SLA. " + "; ".join(parts)
