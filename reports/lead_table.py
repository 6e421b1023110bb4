"""The options table a person decides on: seven columns with human headers and units (the app's
lead table, the PDF, the CLI); every other column is in reports.export.options_table."""

from __future__ import annotations

import math

from planner.analysis.capacity import Plan
from planner.sizing.options import Option, RejectedOption, SizedOption
from planner.sizing.sla import MEASURED_RANGE
from reports.flag_text import flag_gist
from reports.names import option_name

Cell = str | float | int | None


# The options table a person reads first: (header with unit, what it holds); every other column
# is in options_table (the app's "details", the exports).
OPTION_LEAD_COLUMNS = (
    "Option",
    "Meets SLA",
    "Nodes",
    "GPUs",
    "Cost ($/month)",
    "Cost per 1M output tokens ($)",
    "Limited by",
)
RECOMMENDED_MARK = "\u2605 "  # a star before the recommended option's name


def options_lead_table(plan: Plan) -> list[dict[str, Cell]]:
    """The seven columns a person decides on, human headers with units (OPTION_LEAD_COLUMNS);
    counts are whole numbers, names the proper ones, the recommended option starred."""
    choice = plan.recommendation.choice
    return [_lead_row(option, option is choice) for option in plan.options]


def _lead_row(option: Option, recommended: bool) -> dict[str, Cell]:
    sized = option if isinstance(option, SizedOption) else None
    name = option_name(option.key)
    if sized is None:
        limit = flag_gist(option.reason) if isinstance(option, RejectedOption) else None
    else:
        limit = _binding_words(sized.binding_constraint)
    values: tuple[Cell, ...] = (
        f"{RECOMMENDED_MARK}{name}" if recommended else name,
        _meets(option),
        sized.nodes if sized else None,
        sized.gpus if sized else None,
        _finite(round(sized.total_monthly_cost_usd)) if sized else None,
        _finite(round(sized.usd_per_million_output_tokens, 2)) if sized else None,
        limit,
    )
    return dict(zip(OPTION_LEAD_COLUMNS, values, strict=True))


def _meets(option: Option) -> str:
    """'yes', 'no', or 'yes, on flagged data' (never recommended: SizedOption.concerns)."""
    if isinstance(option, SizedOption) and option.concerns:
        return "yes, on flagged data"
    return "yes" if option.meets_sla else "no"


def _binding_words(binding: str) -> str:
    return "end of measured data" if binding == MEASURED_RANGE else binding


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
