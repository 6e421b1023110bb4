"""Owning nodes: what one owned node costs a month (capital, support, power, hosting), the
levelised $/GPU-hour that implies, and the facility power a fleet draws.

The capital charge is the annuity that repays the node's price less the present value of its
residual over its depreciation life at the cost of capital: the level monthly payment of a loan
for the machine, the textbook levelised cost of an asset. Power is each GPU's TDP x the stated
utilisation, plus the rest of the server, times PUE for the facility.
"""

from __future__ import annotations

from dataclasses import dataclass

from hardware.gpus import gpu_catalog
from planner.analysis.measured_power import MeasuredPower
from planner.inputs.horizon_spec import MONTHS_PER_YEAR, HorizonSpec, OwningSpec

__all__ = ["NodeEconomics", "node_economics", "node_it_kw"]

# When the catalog does not know the GPU: an H100 SXM's 700 W (said in the notes).
FALLBACK_TDP_W = 700.0


@dataclass(frozen=True, slots=True)
class NodeEconomics:
    """One owned node's month in money and power."""

    capital_usd: float  # the annuity: depreciation and cost of capital together
    support_usd: float
    power_usd: float
    hosting_usd: float
    it_kw: float  # the node's draw
    facility_kw: float  # times PUE
    price_usd: float
    gpus: int
    hours_per_month: float
    notes: tuple[str, ...]

    @property
    def running_usd(self) -> float:
        """What it costs a month beyond the capital: support, power and hosting (cash)."""
        return self.support_usd + self.power_usd + self.hosting_usd

    @property
    def total_usd(self) -> float:
        """Capital charge plus running costs, USD per month."""
        return self.capital_usd + self.running_usd

    @property
    def usd_per_gpu_hour(self) -> float:
        """The levelised owning cost of one GPU-hour, the node busy all month."""
        return self.total_usd / (self.gpus * self.hours_per_month)


def node_it_kw(
    gpu: str, gpus: int, horizon: HorizonSpec, measured: MeasuredPower | None = None
) -> tuple[float, str]:
    """A node's IT power, kW, and how it was reached: a run's measured watts per GPU where it has
    them, else the catalog's TDP x the stated utilisation; plus the rest of the server."""
    overhead = 1.0 + horizon.server_overhead_pct / 100.0
    if measured is not None:
        kw = gpus * measured.watts_per_gpu / 1000.0 * overhead
        text = (
            f"{gpus} x {measured.text} + {horizon.server_overhead_pct:g}% for the rest of the "
            f"server = {kw:.1f} kW per node"
        )
        return kw, text
    spec = gpu_catalog().find(gpu)
    tdp = FALLBACK_TDP_W if spec is None else spec.tdp_w
    gpu_kw = gpus * tdp * horizon.gpu_power_utilisation / 1000.0
    kw = gpu_kw * overhead
    known = "" if spec is not None else f" ({gpu} not in the GPU catalog: {FALLBACK_TDP_W:g} W)"
    text = (
        f"{gpus} x {tdp:g} W TDP{known} x {horizon.gpu_power_utilisation:.0%} utilisation "
        f"+ {horizon.server_overhead_pct:g}% for the rest of the server = {kw:.1f} kW per node "
        f"(no run of this deployment measured power: probe it on the GPU box, or import AIPerf "
        "with GPU telemetry)"
    )
    return kw, text


def node_economics(
    owning: OwningSpec,
    horizon: HorizonSpec,
    gpu: str,
    gpus: int,
    hours_per_month: float,
    *,
    measured: MeasuredPower | None = None,
) -> NodeEconomics:
    """One owned node's monthly costs and power."""
    it_kw, power_text = node_it_kw(gpu, gpus, horizon, measured)
    facility_kw = it_kw * horizon.pue
    life = max(1, round(owning.depreciation_years * MONTHS_PER_YEAR))
    rate = owning.cost_of_capital_pct / 100.0 / MONTHS_PER_YEAR
    price = owning.node_price_usd
    residual = price * owning.residual_pct / 100.0
    if rate > 0:
        present = price - residual / (1.0 + rate) ** life
        capital = present * rate / (1.0 - (1.0 + rate) ** -life)
    else:
        capital = (price - residual) / life
    support = price * owning.support_pct_per_year / 100.0 / MONTHS_PER_YEAR
    power = facility_kw * hours_per_month * owning.usd_per_kwh
    hosting = it_kw * owning.colocation_usd_per_kw_month
    source = f" ({owning.source}, as of {owning.as_of})" if owning.source else ""
    notes = (
        f"owned node ${price:,.0f}{source}: {owning.depreciation_years:g}-year life, "
        f"{owning.residual_pct:g}% residual, {owning.cost_of_capital_pct:g}% cost of capital -> "
        f"${capital:,.0f}/month capital charge; support {owning.support_pct_per_year:g}%/year "
        f"${support:,.0f}/month",
        f"power: {power_text}; x PUE {horizon.pue:g} = {facility_kw:.1f} kW at "
        f"${owning.usd_per_kwh:g}/kWh = ${power:,.0f}/month; hosting "
        f"${owning.colocation_usd_per_kw_month:g}/kW-month = ${hosting:,.0f}/month",
    )
    return NodeEconomics(
        capital_usd=capital,
        support_usd=support,
        power_usd=power,
        hosting_usd=hosting,
        it_kw=it_kw,
        facility_kw=facility_kw,
        price_usd=price,
        gpus=gpus,
        hours_per_month=hours_per_month,
        notes=notes,
    )
