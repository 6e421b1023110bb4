"""A budget over time (the scenario's `horizon`): demand per month for 1-60 months, and the ways
to pay for the fleet that serves it: rented on-demand, 1- and 3-year commitments, owned nodes, a
hosted API; with the power the facility has.

    horizon:
      months: 24
      monthly_growth_pct: 5          # or monthly_demand: [10, 10.5, ...] in the demand's unit
      commitments: {reserved_1y: 2.40, reserved_3y: 1.90}   # USD per GPU-hour; else the catalog
      owning: {node_price_usd: 320000, lead_time_months: 3}
      hosted_api: {usd_per_million_input: 0.60, usd_per_million_output: 0.80}
      power_limit_kw: 400

Month 1 is the scenario's own demand (times its seasonality): a flat forecast is today's plan,
month after month.
"""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from hardware.prices import MAX_USD_PER_GPU_HOUR
from measurements.entry_names import clean_name
from measurements.numbers import Count, Number
from measurements.safe_text import first_control
from planner.inputs.spec_base import Spec

MAX_MONTHS = 60
MONTHS_PER_YEAR = 12
# GKE Inference Quickstart's convention: an output token costs four input tokens to serve.
DEFAULT_OUTPUT_INPUT_COST_RATIO = 4.0
# A DGX H100 draws up to 10.2 kW for 8 x 700 W of GPUs (NVIDIA DGX H100 datasheet): the rest of
# the server adds about 80% to the GPUs' own draw at full load.
DEFAULT_SERVER_OVERHEAD_PCT = 80.0


def printable(value: str) -> str:
    """A source, date or name the terminal, the page and the reports print: no control or bidi
    character (as a scenario's name), NFKC, no zero-width characters."""
    found = first_control(value)
    if found is not None:
        raise ValueError(f"must not contain control characters; found {found}")
    return clean_name(value)


class CommitmentsSpec(Spec):
    """Reserved terms and spot, USD per GPU-hour (None: the catalog's quote for the GPU, else
    that term is not offered in the plan)."""

    reserved_1y: Number | None = Field(
        None, gt=0, le=MAX_USD_PER_GPU_HOUR, description="1-year reserved, USD per GPU-hour"
    )
    reserved_3y: Number | None = Field(
        None, gt=0, le=MAX_USD_PER_GPU_HOUR, description="3-year reserved, USD per GPU-hour"
    )
    spot: Number | None = Field(
        None, gt=0, le=MAX_USD_PER_GPU_HOUR, description="Spot (preemptible), USD per GPU-hour"
    )
    spot_max_share_pct: Number = Field(
        0,
        ge=0,
        le=100,
        description="Share of the uncommitted nodes spot may carry (spot can be taken back: 0 "
        "keeps the SLA on reserved and on-demand capacity only)",
    )
    source: str = Field("", max_length=300, description="Where entered prices come from")
    as_of: str = Field("", max_length=40, description="Date of the entered prices")

    _printable = field_validator("source", "as_of")(printable)


class OwningSpec(Spec):
    """Buying nodes: capex, depreciation, cost of capital, power, hosting and support."""

    node_price_usd: Number = Field(gt=0, le=1e9, description="Price of one node, USD")
    depreciation_years: Number = Field(5, gt=0, le=15, description="Straight-line life, years")
    residual_pct: Number = Field(10, ge=0, lt=100, description="Value left at end of life, %")
    cost_of_capital_pct: Number = Field(8, ge=0, le=50, description="Annual cost of capital, %")
    usd_per_kwh: Number = Field(0.10, ge=0, le=10, description="Electricity, USD per kWh")
    colocation_usd_per_kw_month: Number = Field(
        0, ge=0, le=10_000, description="Hosting per kW of IT load per month, USD"
    )
    support_pct_per_year: Number = Field(
        8, ge=0, le=100, description="Support and maintenance per year, % of the node price"
    )
    lead_time_months: Count = Field(
        3, ge=0, le=36, description="Months from order to serving; rented on-demand meanwhile"
    )
    source: str = Field("", max_length=300, description="Where the node price comes from")
    as_of: str = Field("", max_length=40, description="Date of the node price")

    _printable = field_validator("source", "as_of")(printable)


class HostedApiSpec(Spec):
    """A hosted model API priced per token (the option of not serving at all)."""

    usd_per_million_input: Number = Field(ge=0, le=1e4, description="USD per 1M input tokens")
    usd_per_million_output: Number = Field(ge=0, le=1e4, description="USD per 1M output tokens")
    name: str = Field("hosted API", min_length=1, max_length=100, description="Whose API")
    source: str = Field("", max_length=300, description="Where the prices come from")
    as_of: str = Field("", max_length=40, description="Date of the prices")

    _printable = field_validator("name", "source", "as_of")(printable)


class HorizonSpec(Spec):
    """Demand over the months ahead and the ways to pay for it."""

    months: Count | None = Field(
        None, ge=1, le=MAX_MONTHS, description="Months to plan (with monthly_growth_pct)"
    )
    monthly_growth_pct: Number = Field(
        0, gt=-50, le=100, description="Demand growth per month, % (compounded)"
    )
    monthly_demand: tuple[Number, ...] | None = Field(
        None,
        min_length=1,
        max_length=MAX_MONTHS,
        description="Demand for each month in the scenario demand's unit (instead of growth)",
    )
    seasonality: tuple[Number, ...] | None = Field(
        None,
        min_length=MONTHS_PER_YEAR,
        max_length=MONTHS_PER_YEAR,
        description="12 relative weights by month of the year from the first month; scaled to "
        "a mean of 1",
    )
    forecast_error_pct: Number = Field(
        20, ge=0, le=90, description="What the forecast may miss by: priced high and low"
    )
    commitments: CommitmentsSpec = CommitmentsSpec()
    owning: OwningSpec | None = None
    hosted_api: HostedApiSpec | None = None
    power_limit_kw: Number | None = Field(
        None, gt=0, le=1e7, description="Facility power available to the fleet, kW"
    )
    pue: Number = Field(1.3, ge=1, le=3, description="Facility power / IT power")
    power_headroom_pct: Number = Field(10, ge=0, le=100, description="Power kept spare, %")
    gpu_power_utilisation: Number = Field(
        0.8, gt=0, le=1, description="Mean GPU draw / TDP when no run measured it"
    )
    server_overhead_pct: Number = Field(
        DEFAULT_SERVER_OVERHEAD_PCT,
        ge=0,
        le=300,
        description="Server power beyond its GPUs (CPUs, memory, network, fans), % of the GPUs'",
    )
    output_input_cost_ratio: Number = Field(
        DEFAULT_OUTPUT_INPUT_COST_RATIO,
        gt=0,
        le=100,
        description="How many input tokens one output token costs to serve (splits a fleet's "
        "cost into $/1M input and output)",
    )

    @model_validator(mode="after")
    def _one_forecast(self) -> HorizonSpec:
        if self.monthly_demand is not None:
            if self.months is not None and self.months != len(self.monthly_demand):
                raise ValueError(
                    f"horizon.months is {self.months} but monthly_demand has "
                    f"{len(self.monthly_demand)} values: give one or the other"
                )
            if self.monthly_growth_pct != 0:
                raise ValueError("give horizon.monthly_growth_pct or monthly_demand, not both")
            if any(value <= 0 for value in self.monthly_demand):
                raise ValueError("every horizon.monthly_demand value must be above 0")
        elif self.months is None:
            raise ValueError("give horizon.months (with monthly_growth_pct) or monthly_demand")
        if self.seasonality is not None and any(w <= 0 for w in self.seasonality):
            raise ValueError("every horizon.seasonality weight must be above 0")
        return self

    @property
    def month_count(self) -> int:
        """How many months are planned."""
        return (
            len(self.monthly_demand) if self.monthly_demand is not None else int(self.months or 0)
        )

    def demand_factors(self, base: float) -> tuple[float, ...]:
        """Each month's demand over the scenario's own (`base`, in its unit): growth compounded
        from 1 in month 1, or the listed demand over base; times the seasonality."""
        if self.monthly_demand is not None:
            trend = [float(value) / base for value in self.monthly_demand]
        else:
            growth = 1.0 + self.monthly_growth_pct / 100.0
            trend = [growth**month for month in range(self.month_count)]
        if self.seasonality is None:
            return tuple(trend)
        mean = sum(self.seasonality) / MONTHS_PER_YEAR
        season = [w / mean for w in self.seasonality]
        return tuple(t * season[m % MONTHS_PER_YEAR] for m, t in enumerate(trend))
