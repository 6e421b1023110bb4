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

    LATENCY = "latency"  # the upper band of one fitted latency series (`fit_slot`)
    STREAM_SPEED = "stream_speed"  # 1000 / TPOT p99, never above the mean speed T(c)/c
    E2E = "e2e"  # e2e p99 where measured, else TTFT p99 + (OSL - 1) x TPOT p99


@dataclass(frozen=True, slots=True)
class SlaTarget:
    """One SLA target and the words for it in each place it appears."""

    field: str  # scenario key under `sla:`, e.g. "ttft_p99_ms"
    metric: str  # ttft, tpot, stream_speed, e2e
    statistic: str  # p50, p99, min
    unit: str  # ms, tok/s
    direction: Direction
    check: CheckKind
    fit_slot: str | None  # the CurveFit series a LATENCY check reads (ttft_p50, ttft_p99, tpot)
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


SLA_TARGETS: tuple[SlaTarget, ...] = (
    SlaTarget(
        field="ttft_p50_ms",
        metric="ttft",
        statistic="p50",
        unit="ms",
        direction=Direction.AT_MOST,
        check=CheckKind.LATENCY,
        fit_slot="ttft_p50",
        label="TTFT p50",
        plain="median time to first token",
        description="Median time to first token, ms",
        report_label="TTFT p50",
        meaning="half of requests see their first token within this",
        sensitivity_label="SLA TTFT p50, ms",
        form_label="TTFT p50 (ms)",
        help="Time to first token: how long a user waits before the answer starts appearing. "
        "p50 is the typical request: half of them wait less than this.",
        form_default=None,
    ),
    SlaTarget(
        field="ttft_p99_ms",
        metric="ttft",
        statistic="p99",
        unit="ms",
        direction=Direction.AT_MOST,
        check=CheckKind.LATENCY,
        fit_slot="ttft_p99",
        label="TTFT p99",
        plain="p99 time to first token",
        description="p99 time to first token, ms",
        report_label="TTFT p99",
        meaning="99 of 100 requests see their first token within this",
        sensitivity_label="SLA TTFT p99, ms",
        form_label="TTFT p99 (ms)",
        help="Time to first token: how long a user waits before the answer starts appearing. "
        "p99: 99 of 100 requests wait less than this (all but the slowest 1%). "
        "1000 ms = 1 second.",
        form_default=1000.0,
    ),
    SlaTarget(
        field="tpot_p99_ms",
        metric="tpot",
        statistic="p99",
        unit="ms",
        direction=Direction.AT_MOST,
        check=CheckKind.LATENCY,
        fit_slot="tpot",
        label="TPOT p99",
        plain="p99 time per output token",
        description="p99 time per output token, ms",
        report_label="TPOT p99",
        meaning="time between output tokens for 99 of 100 requests",
        sensitivity_label="SLA TPOT p99, ms",
        form_label="TPOT p99 (ms)",
        help="Time per output token: the pause between words as the answer streams, for 99 "
        "of 100 requests. 30 ms per token is about 33 tokens per second, faster than anyone "
        "reads.",
        form_default=None,
    ),
    SlaTarget(
        field="min_stream_tok_s",
        metric="stream_speed",
        statistic="min",
        unit="tok/s",
        direction=Direction.AT_LEAST,
        check=CheckKind.STREAM_SPEED,
        fit_slot=None,
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
    ),
    SlaTarget(
        field="e2e_p99_ms",
        metric="e2e",
        statistic="p99",
        unit="ms",
        direction=Direction.AT_MOST,
        check=CheckKind.E2E,
        fit_slot=None,
        label="e2e p99",
        plain="p99 total response time",
        description="p99 end-to-end latency, ms",
        report_label="End-to-end p99",
        meaning="whole-response time for 99 of 100 requests",
        sensitivity_label="SLA e2e p99, ms",
        form_label="End-to-end p99 (ms)",
        help="Whole-answer time: from sending a request to its last token, for 99 of 100 requests.",
        form_default=None,
    ),
)
SLA_TARGET_BY_FIELD: dict[str, SlaTarget] = {target.field: target for target in SLA_TARGETS}
