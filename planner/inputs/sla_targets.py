"""The SLA targets a scenario can set: one row per target with its scenario key, metric,
statistic, unit, direction, how it is checked against a fit, and every label it is shown with.

The scenario model, the SLA checks (planner.sizing.sla), the recommendation's words, the report, the
sensitivity view and the Plan page form all read SLA_TARGETS; a new target is one row here
(plus, for a new kind of check, one branch in planner.sizing.sla).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Direction(StrEnum):
    """Which side of the limit a target holds on (the value is the operator as written)."""

    AT_MOST = "<="
    AT_LEAST = ">="


class CheckKind(StrEnum):
    """How a target is evaluated against a fit (planner.sizing.sla)."""

    LATENCY = "latency"  # one measured latency series at the target's statistic (or above it)
    STREAM_SPEED = "stream_speed"  # 1000 / TPOT p99, never above the mean speed T(c)/c
    E2E = "e2e"  # e2e where measured, else TTFT + (OSL - 1) x TPOT at the target's statistic


@dataclass(frozen=True, slots=True)
class SlaTarget:
    """One SLA target and the words for it in each place it appears."""

    field: str  # scenario key under `sla:`, e.g. "ttft_p99_ms"
    metric: str  # ttft, tpot, stream_speed, e2e
    statistic: str  # p50, p90, p99, mean, min
    unit: str  # ms, tok/s
    direction: Direction
    check: CheckKind
    label: str  # short, in target texts and binding constraints: "TTFT p99"
    plain: str  # in plain words, for the recommendation: "p99 time to first token"
    description: str  # the scenario field's description
    report_label: str  # the report's assumptions table
    meaning: str  # the report's assumptions table
    sensitivity_label: str  # the sensitivity (tornado) row
    form_label: str  # the Plan page's input, with its unit
    help: str  # the Plan page's help text
    form_default: float | None  # the Plan page's starting value (None: not checked)

    @property
    def upper(self) -> bool:
        """The target is a ceiling (latency), not a floor (speed)."""
        return self.direction is Direction.AT_MOST

    def text(self, limit: float) -> str:
        """Human text of the target at a limit, e.g. 'TTFT p99 <= 300 ms'."""
        return f"{self.label} {self.direction} {limit:g} {self.unit}"


# The statistics a latency target may be stated as, and the one a bare number is read as (the
# strictest: a bare "TPOT < 50 ms" is met by no fleet that a p99 reading would reject).
STATISTICS = ("p50", "p90", "p99", "mean")
BARE_STATISTIC = "p99"
# Per statistic: its name in a sentence, and who it speaks for.
_STAT_WORDS = {
    "p50": ("median", "half of requests"),
    "p90": ("p90", "9 of 10 requests"),
    "p99": ("p99", "99 of 100 requests"),
    "mean": ("mean", "the average request"),
}
_WAIT = {
    "p50": "p50 is the typical request: half of them wait less than this.",
    "p90": "p90: 9 of 10 requests wait less than this (all but the slowest 10%).",
    "p99": "p99: 99 of 100 requests wait less than this (all but the slowest 1%). "
    "1000 ms = 1 second.",
    "mean": "mean: the average wait (a few slow requests pull it up).",
}


def _first_upper(name: str) -> str:
    """'Median', 'Mean'; a percentile stays as written ('p99')."""
    return name if name.startswith("p") else name.capitalize()


def _ttft(stat: str) -> SlaTarget:
    name, who = _STAT_WORDS[stat]
    return SlaTarget(
        field=f"ttft_{stat}_ms",
        metric="ttft",
        statistic=stat,
        unit="ms",
        direction=Direction.AT_MOST,
        check=CheckKind.LATENCY,
        label=f"TTFT {stat}",
        plain=f"{name} time to first token",
        description=f"{_first_upper(name)} time to first token, ms",
        report_label=f"TTFT {stat}",
        meaning=(
            "the average request sees its first token within this"
            if stat == "mean"
            else f"{who} see their first token within this"
        ),
        sensitivity_label=f"SLA TTFT {stat}, ms",
        form_label=f"TTFT {stat} (ms)",
        help="Time to first token: how long a user waits before the answer starts appearing. "
        + _WAIT[stat],
        form_default=1000.0 if stat == "p99" else None,
    )


def _tpot(stat: str) -> SlaTarget:
    name, who = _STAT_WORDS[stat]
    return SlaTarget(
        field=f"tpot_{stat}_ms",
        metric="tpot",
        statistic=stat,
        unit="ms",
        direction=Direction.AT_MOST,
        check=CheckKind.LATENCY,
        label=f"TPOT {stat}",
        plain=f"{name} time per output token",
        description=f"{_first_upper(name)} time per output token, ms",
        report_label=f"TPOT {stat}",
        meaning=f"time between output tokens for {who}",
        sensitivity_label=f"SLA TPOT {stat}, ms",
        form_label=f"TPOT {stat} (ms)",
        help=f"Time per output token: the pause between words as the answer streams, for {who}. "
        "30 ms per token is about 33 tokens per second, faster than anyone reads.",
        form_default=None,
    )


def _e2e(stat: str) -> SlaTarget:
    name, who = _STAT_WORDS[stat]
    return SlaTarget(
        field=f"e2e_{stat}_ms",
        metric="e2e",
        statistic=stat,
        unit="ms",
        direction=Direction.AT_MOST,
        check=CheckKind.E2E,
        label=f"e2e {stat}",
        plain=f"{name} total response time",
        description=f"{_first_upper(name)} end-to-end latency, ms",
        report_label=f"End-to-end {stat}",
        meaning=f"whole-response time for {who}",
        sensitivity_label=f"SLA e2e {stat}, ms",
        form_label=f"End-to-end {stat} (ms)",
        help=f"Whole-answer time: from sending a request to its last token, for {who}.",
        form_default=None,
    )


_STREAM = SlaTarget(
    field="min_stream_tok_s",
    metric="stream_speed",
    statistic="min",
    unit="tok/s",
    direction=Direction.AT_LEAST,
    check=CheckKind.STREAM_SPEED,
    label="stream speed",
    plain="minimum output speed per user",
    description="Min per-user decode tok/s",
    report_label="Min stream speed",
    meaning="slowest decode speed a user may see",
    sensitivity_label="SLA min stream tok/s",
    form_label="Minimum per-stream speed (tok/s)",
    help="The slowest streaming speed one user may see, in tokens per second (people read "
    "about 5-10 tokens per second).",
    form_default=None,
)
SLA_TARGETS: tuple[SlaTarget, ...] = (
    *(_ttft(stat) for stat in STATISTICS),
    *(_tpot(stat) for stat in STATISTICS),
    _STREAM,
    *(_e2e(stat) for stat in STATISTICS),
)
SLA_TARGET_BY_FIELD: dict[str, SlaTarget] = {target.field: target for target in SLA_TARGETS}
# A target given without its statistic ("tpot_ms: 50"): the field it is read as.
BARE_FIELDS: dict[str, str] = {
    f"{metric}_ms": f"{metric}_{BARE_STATISTIC}_ms" for metric in ("ttft", "tpot", "e2e")
}
