"""The recommendation: the cheapest option that meets the SLA (and budget), said in words, and
what the user's qualitative factors (the seed article's; planner/analysis/factors.py) change or add
to it, never silently. A preference switches the choice from TensorRT-LLM to the cheapest feasible
vLLM option only when vLLM's cost premium is within `preference_tolerance_pct`; beyond it the
cheapest stays and the trade-off is stated in numbers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from planner.analysis.factors import (
    NEEDS,
    SEED,
    TRTLLM,
    VLLM,
    factor_notes,
    factor_suffix,
    preferring,
)
from planner.inputs.scenario import FactorsSpec
from planner.inputs.sla_targets import SLA_TARGETS
from planner.sizing.options import Option, RejectedOption, SizedOption
from planner.sizing.sla import MEASURED_RANGE

# Whole-node billing makes many options cost the same; a cost gap below this is within the
# uncertainty of any price quote, so the option using fewer GPUs (more headroom) is preferred.
COST_TIE_PCT = 1.0
# How much more a factor-preferred engine may cost and still be recommended over the cheapest.
DEFAULT_PREFERENCE_TOLERANCE_PCT = 15.0


class Verdict(StrEnum):
    """Why the plan does or does not recommend something, checked in this order: no data to
    plan on; only data with concerns meets the SLA; nothing meets the SLA at any size; what
    meets it costs more than the budget; what meets it within the budget needs more power than
    the site's limit (planner.analysis.site_power)."""

    RECOMMENDED = "recommended"
    NO_DATA = "no data"
    NOT_SOUND = "data not sound"
    SLA_NOT_MET = "SLA not met"
    OVER_BUDGET = "over budget"
    OVER_POWER = "over the power limit"


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The chosen option, the runner-up, why, and the margin (runner-up cost - choice cost).

    `binding_text` says in plain words what limits the choice (an SLA target, memory, the
    measured range, the budget); `factors_applied` holds one sentence per user-set factor;
    `overridden_cheapest` is the option that would have won on cost alone when a factor
    preference changed the choice (then the margin is negative).
    """

    choice: SizedOption | None
    runner_up: SizedOption | None
    reason: str
    margin_usd: float | None
    margin_pct: float | None
    binding_text: str | None = None
    factors_applied: tuple[str, ...] = ()
    overridden_cheapest: SizedOption | None = None
    preference_tolerance_pct: float = DEFAULT_PREFERENCE_TOLERANCE_PCT
    # Nothing sound meets the SLA (and budget): the cheapest option that would, on data with
    # concerns (SizedOption.concerns); never the choice.
    flagged: SizedOption | None = None
    verdict: Verdict = Verdict.RECOMMENDED
    # Over budget: the cheapest option that meets the SLA on sound data (never the choice).
    over_budget: SizedOption | None = None
    # Over the site's power limit: of the sound options meeting the SLA (within the budget),
    # the one needing the least power (never the choice).
    over_power: SizedOption | None = None


def recommend(
    options: Sequence[Option],
    budget: float | None,
    *,
    factors: FactorsSpec | None = None,
    preference_tolerance_pct: float = DEFAULT_PREFERENCE_TOLERANCE_PCT,
) -> Recommendation:
    """Cheapest option meeting the SLA (and the monthly budget when given), changed only by a
    factor preference within the tolerance, with the reason."""
    tolerance = preference_tolerance_pct
    meeting = sorted((o for o in options if isinstance(o, SizedOption)), key=_cost_key)
    in_budget = [o for o in meeting if budget is None or o.within_budget]
    affordable = [o for o in in_budget if o.fits_power]
    sound = [o for o in affordable if not o.concerns]
    if not sound:
        return _no_choice(options, meeting, budget, tolerance)
    cheapest = _choose(sound)
    choice, decision = _apply_preference(sound, cheapest, factors, tolerance)
    passed = [o for o in affordable if o.concerns and _cost(o) < _cost(choice)]
    if passed:
        note = (
            f"passed over {passed[0].title()} (${_cost(passed[0]):,.0f}/month): "
            f"{'; '.join(passed[0].concerns)}"
        )
        decision = f"{decision}; {note}" if decision else note
    unhosted = [o for o in in_budget if not o.fits_power and _cost(o) < _cost(choice)]
    if unhosted:
        note = f"passed over {unhosted[0].title()} (${_cost(unhosted[0]):,.0f}/month): " + (
            _power_words(unhosted[0])
        )
        decision = f"{decision}; {note}" if decision else note
    overridden = cheapest if choice is not cheapest else None
    others = [o for o in sound if o is not choice]
    runner_up = overridden or (others[0] if others else None)
    notes = (*([decision] if decision else []), *factor_notes(choice, factors))
    margin = pct = None
    if runner_up is None:
        reason = _sentence(choice) + "."
    else:
        margin = _cost(runner_up) - _cost(choice)
        pct = 100.0 * margin / _cost(runner_up) if _cost(runner_up) > 0 else 0.0
        compared = "" if overridden else ", " + _comparison(choice, runner_up, margin, pct)
        reason = f"{_sentence(choice)}{compared}."
    if decision:
        reason += f" {decision[0].upper()}{decision[1:]}."
    reason += _budget_use(choice, budget) + _caveats(choice)
    reason += factor_suffix(choice, factors, decision)
    binding = binding_in_words(choice)
    return Recommendation(
        choice, runner_up, reason, margin, pct, binding, notes, overridden, tolerance
    )


def _no_choice(
    options: Sequence[Option], meeting: list[SizedOption], budget: float | None, tolerance: float
) -> Recommendation:
    """Nothing to recommend, and the binding reason (Verdict) in its order: no option at all;
    only flagged data meets the SLA; nothing meets it; what meets it soundly is over budget."""
    sound = [o for o in meeting if not o.concerns]
    in_budget = [o for o in sound if budget is None or o.within_budget]
    if in_budget:  # each needs more power than the site has
        least = min(in_budget, key=lambda o: (o.facility_kw or 0.0, _cost(o)))
        reason = (
            f"no option that meets the SLA{'' if budget is None else ' within the budget'} fits "
            f"the site's power limit; the one needing least is {least.title()} at "
            f"${_cost(least):,.0f}/month: {_power_words(least)}"
        )
        return Recommendation(
            None, None, reason, None, None, reason, (), None, tolerance,
            verdict=Verdict.OVER_POWER, over_power=least,
        )  # fmt: skip
    if sound:
        cheapest = _choose(sound)
        reason = _nothing_fits(options, [cheapest], budget)
        binding = _budget_binding([cheapest], budget)
        return Recommendation(
            None, None, reason, None, None, binding, (), None, tolerance,
            verdict=Verdict.OVER_BUDGET, over_budget=cheapest,
        )  # fmt: skip
    if meeting:
        affordable = [o for o in meeting if budget is None or o.within_budget]
        return _only_flagged(affordable or meeting, budget, tolerance)
    verdict = Verdict.SLA_NOT_MET if options else Verdict.NO_DATA
    reason = _nothing_fits(options, meeting, budget)
    return Recommendation(None, None, reason, None, None, None, (), None, tolerance, None, verdict)


def _only_flagged(
    candidates: list[SizedOption], budget: float | None, tolerance: float
) -> Recommendation:
    """Nothing sound meets the SLA: no choice; the cheapest flagged option (within the budget
    when one is) is named, with why."""
    flagged = _choose(candidates)
    others = [o.title() for o in candidates if o is not flagged]
    also = f" (also {', '.join(others[:3])}{', ...' if len(others) > 3 else ''})" if others else ""
    over = "" if budget is None or flagged.within_budget else f", over the ${budget:,.0f} budget"
    reason = (
        "Nothing measured soundly meets the SLA. "
        f"Only on data with concerns would {flagged.title()} meet it, {flagged.replicas} "
        f"replicas at ${_cost(flagged):,.0f}/month{over}{also}: {'; '.join(flagged.concerns)}. "
        "Measure this deployment (capplan probe) before buying on it."
    )
    return Recommendation(
        None, None, reason, None, None, None, (), None, tolerance, flagged, Verdict.NOT_SOUND
    )


# --- binding constraint in plain words --------------------------------------------------------

_PLAIN_TARGETS = {target.label: target.plain for target in SLA_TARGETS}
_LABELS = "|".join(re.escape(label) for label in _PLAIN_TARGETS)
_TARGET = re.compile(rf"^({_LABELS}) (<=|>=) (\S+) (ms|tok/s)$")
_UNMEASURED = re.compile(rf"^({_LABELS}) not measured above this concurrency$")
_CAP = re.compile(r"^max (\S+) streams per replica$")


def _limit_phrase(binding: str | None) -> str:
    """What stops more streams per replica, in words, e.g. 'the p99 time to first token target
    (TTFT p99 <= 300 ms)'."""
    if binding is None or binding == MEASURED_RANGE:
        return "its highest measured concurrency"
    return " and ".join(_part_phrase(part) for part in binding.split(" and "))


def _part_phrase(part: str) -> str:
    if match := _TARGET.match(part):
        return f"the {_PLAIN_TARGETS[match[1]]} target ({part})"
    if match := _UNMEASURED.match(part):
        return f"the end of the {_PLAIN_TARGETS[match[1]]} measurements"
    if match := _CAP.match(part):
        return f"the scenario's cap of {match[1]} streams per replica"
    if part.startswith("memory"):
        return f"the GPU memory estimate {part.removeprefix('memory').strip()}".strip()
    return part


def binding_in_words(option: Option) -> str | None:
    """One plain sentence on what limits an option's streams per replica, e.g. 'The p99 time to
    first token target (TTFT p99 <= 300 ms) is reached at 24 streams per replica.' (None for a
    rejected option)."""
    if not isinstance(option, SizedOption):
        return None
    c = option.concurrency_per_replica
    if option.binding_constraint == MEASURED_RANGE:
        return (
            f"No data exists above {c:g} streams per replica, its highest measured "
            "concurrency, so the plan goes no further."
        )
    phrase = _limit_phrase(option.binding_constraint)
    return f"{phrase[0].upper()}{phrase[1:]} is reached at {c:g} streams per replica."


def _budget_binding(meeting: list[SizedOption], budget: float | None) -> str | None:
    if not meeting or budget is None:
        return None
    cheapest = meeting[0]
    return (
        f"The monthly budget (${budget:,.0f}) is below the cheapest option that meets the SLA "
        f"({cheapest.title()}, ${_cost(cheapest):,.0f}/month)."
    )


def _budget_use(choice: SizedOption, budget: float | None) -> str:
    if budget is None or budget <= 0:
        return ""
    return (
        f" It uses ${_cost(choice):,.0f} of the ${budget:,.0f}/month budget "
        f"({100.0 * _cost(choice) / budget:.0f}%)."
    )


def _apply_preference(
    affordable: list[SizedOption],
    cheapest: SizedOption,
    factors: FactorsSpec | None,
    tolerance: float,
) -> tuple[SizedOption, str | None]:
    """The choice after vLLM preferences, and the sentence saying what they did (None: nothing
    to say because no preference is set or the cheapest is not TensorRT-LLM)."""
    wanted = preferring(factors)
    if not wanted or cheapest.engine != TRTLLM:
        return cheapest, None
    needs = " and ".join(NEEDS[name] for name in wanted)
    sources = "; ".join(SEED[name] for name in wanted)
    preferred = [o for o in affordable if o.engine == VLLM]
    if not preferred:
        return cheapest, (
            f"{needs}, which favours vLLM ({sources}), but no vLLM option meets the SLA and "
            f"budget, so {cheapest.title()} stays the choice"
        )
    alt = _choose(preferred)
    premium = _cost(alt) - _cost(cheapest)
    pct = 100.0 * premium / max(_cost(cheapest), 1e-9)
    if pct <= tolerance:
        return alt, (
            f"recommended {alt.title()} although {cheapest.title()} is ${premium:,.0f}/month "
            f"cheaper (vLLM costs {pct:.1f}% more, within the {tolerance:g}% tolerance for a "
            f"preferred engine), because {needs} ({sources})"
        )
    return cheapest, (
        f"{needs}, which favours vLLM ({sources}), but the cheapest vLLM option, {alt.title()}, "
        f"costs ${premium:,.0f}/month ({pct:.1f}%) more, beyond the {tolerance:g}% tolerance, so "
        f"{cheapest.title()} stays the choice; a tolerance of {math.ceil(pct):d}% would switch"
    )


_CAVEAT_MARKERS = (
    "above the single-stream decode ceiling",
    "above the aggregate ceiling",
    "below the prefill floor",
    "PROJECTED",
    "projected from",
    "ADJUSTED",
    "adjusted from",
    "assumed",
    "did not state",
    "estimated as",
    "checked on the mean",
    "derived from other numbers",
    "workload not stated",
    "not adjusted",
    "SIMULATED",
)


def _caveats(option: SizedOption) -> str:
    caveats = [f for f in option.flags if any(marker in f for marker in _CAVEAT_MARKERS)]
    return f" Caveats: {'; '.join(caveats)}." if caveats else ""


def _choose(affordable: list[SizedOption]) -> SizedOption:
    """Cheapest, except that costs within COST_TIE_PCT count as equal and fewer GPUs win."""
    cheapest = _cost(affordable[0])
    tied = [o for o in affordable if _cost(o) <= cheapest * (1 + COST_TIE_PCT / 100)]
    return min(tied, key=lambda o: (o.gpus, o.replicas, _cost(o)))


def _cost(option: SizedOption) -> float:
    return option.total_monthly_cost_usd


def _cost_key(option: SizedOption) -> tuple[float, int, int]:
    # Equal cost (whole nodes) -> fewer GPUs and replicas leave more headroom.
    return _cost(option), option.gpus, option.replicas


def _sentence(option: SizedOption) -> str:
    nodes = f"{option.nodes} node" + ("" if option.nodes == 1 else "s")
    return (
        f"{option.title()} meets every SLA target at up to "
        f"{option.concurrency_per_replica:g} streams per replica (limited by "
        f"{_limit_phrase(option.binding_constraint)}); "
        f"{option.replicas} replicas on {nodes} cost ${_cost(option):,.0f}/month, enough "
        f"with {option.confidence:.0%} confidence (expected "
        f"${option.expected_monthly_cost_usd:,.0f}/month)"
    )


def _comparison(choice: SizedOption, runner_up: SizedOption, margin: float, pct: float) -> str:
    other = f"{runner_up.title()} ({runner_up.replicas} replicas, {runner_up.gpus} GPUs)"
    if margin > 0.005:
        return f"${margin:,.0f} ({pct:.1f}%) less than the runner-up {other}"
    fewer = choice.gpus < runner_up.gpus
    why = (
        f"it needs fewer GPUs ({choice.gpus} vs {runner_up.gpus})"
        if fewer
        else "a tie, listed first"
    )
    if margin < -0.005:
        return (
            f"${-margin:,.{2 if -margin < 100 else 0}f} ({-pct:.{2 if -pct < 1 else 1}f}%) "
            f"more than the runner-up {other}: within "
            f"{COST_TIE_PCT:g}% counts as the same cost, and {why}"
        )
    return f"the same cost as the runner-up {other}; {why}"


def _power_words(option: SizedOption) -> str:
    """'its 6 nodes need 74 kW, over the site's 60 kW limit (4 fit)'."""
    kw, limit = option.facility_kw or 0.0, option.power_limit_kw or 0.0
    fit = int(limit / (kw / option.nodes) + 1e-9) if kw > 0 and option.nodes else 0
    nodes = f"{option.nodes} node" + ("" if option.nodes == 1 else "s")
    return f"its {nodes} need {kw:,.1f} kW, over the site's {limit:,.0f} kW limit ({fit} fit)"


def _rejection(option: Option) -> str:
    return option.reason if isinstance(option, RejectedOption) else "does not meet the SLA"


def _nothing_fits(
    options: Sequence[Option], meeting: list[SizedOption], budget: float | None
) -> str:
    if meeting and budget is not None:
        cheapest = meeting[0]
        return (
            f"no option meets the SLA within the budget of ${budget:,.0f}/month; the cheapest "
            f"that meets the SLA is {cheapest.title()} at ${_cost(cheapest):,.0f}/month"
        )
    if not options:
        return "no option to compare: no curve matched the scenario"
    parts = [f"{o.title()}: {_rejection(o)}" for o in options]
    return "no option meets the SLA. " + "; ".join(parts)
