"""A scenario's per-GPU prices: on-demand and reserved USD per GPU-hour, and the catalog rows
they were picked from (so a plan cites the quote, its source and its date)."""

from __future__ import annotations

from pydantic import Field

from hardware.prices import MAX_USD_PER_GPU_HOUR
from measurements.numbers import Number
from planner.inputs.spec_base import Spec


class PriceQuoteSpec(Spec):
    """The catalog row a price was picked from (provider, SKU, pricing type), kept with the plan
    so the plan cites that quote's source and date."""

    provider: str = Field(min_length=1, description="Provider of the quote, e.g. RunPod")
    sku: str = Field("", description="Instance or SKU as the catalog names it")
    pricing_type: str = Field(min_length=1, description="on_demand, reserved_1y, ...")


class GpuPricingSpec(Spec):
    """Per-GPU prices by pricing type, USD per GPU-hour (reserved: None = from the catalog)."""

    on_demand: Number = Field(
        gt=0, le=MAX_USD_PER_GPU_HOUR, description="On-demand USD per GPU-hour"
    )
    reserved: Number | None = Field(
        None, gt=0, le=MAX_USD_PER_GPU_HOUR, description="Reserved USD per GPU-hour"
    )


class GpuQuotesSpec(Spec):
    """The catalog rows one GPU's prices (in `pricing`) were picked from; a quote whose price no
    longer matches the scenario's price is cited as a typed price, not as that quote."""

    on_demand: PriceQuoteSpec | None = Field(None, description="Row of the on-demand price")
    reserved: PriceQuoteSpec | None = Field(None, description="Row of the reserved price")
