"""What the error samples of planner.sizing.draws say about one sized option: the fleet each sample
needs, the expected cost, and P10/P50/P90 over the samples (the plan's own fleet is the sample
at the scenario's sizing confidence; planner.sizing.size picks it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from planner.fitting.families import Array
from planner.sizing.costs import FleetCost

MISSED = -1  # a sample in which the option meets no SLA-holding concurrency
PERCENTILES = (10.0, 50.0, 90.0)


@dataclass(frozen=True, slots=True)
class Percentiles:
    """P10, P50 and P90 of one quantity over the samples (observed sample values)."""

    p10: float
    p50: float
    p90: float


@dataclass(frozen=True, slots=True)
class SampleFleet:
    """One fleet that samples needed: replicas per hour and its bill (and, autoscaled, the
    bill of the same demand on a static fleet)."""

    hourly_replicas: tuple[int, ...]
    fleet: FleetCost
    static_fleet: FleetCost
    total_usd: float  # the bill plus the option's operations cost

    @property
    def replicas(self) -> int:
        """Replicas at the peak hour."""
        return max(self.hourly_replicas)


@dataclass(frozen=True, slots=True)
class Spread:
    """The option over the error samples: which fleet each sample needs (index into `fleets`,
    MISSED when it meets the SLA nowhere) at the stated confidence."""

    confidence: float
    fleets: tuple[SampleFleet, ...]
    sample_fleet: tuple[int, ...]
    replicas_per_node: int
    gpus_per_replica: int
    nodes_per_replica: int = 1

    @property
    def samples(self) -> int:
        """How many samples were drawn."""
        return len(self.sample_fleet)

    @property
    def feasible_share(self) -> float:
        """Share of samples in which the option meets every SLA target somewhere."""
        return sum(1 for i in self.sample_fleet if i != MISSED) / max(self.samples, 1)

    def costs(self) -> Array:
        """Total monthly cost per sample (inf: the SLA is missed in that sample)."""
        totals = np.array([f.total_usd for f in self.fleets] + [math.inf], dtype=np.float64)
        return totals[np.asarray(self.sample_fleet, dtype=np.int64)]

    @property
    def expected_total_usd(self) -> float | None:
        """The expected fleet's total monthly cost: the median over the samples, the fleet
        needed as often as not (None: more than half the samples miss the SLA). A mean would
        price no fleet one can buy, and on a skewed spread can sit above the 90% fleet."""
        median = float(np.percentile(self.costs(), 50.0, method="inverted_cdf"))
        return median if np.isfinite(median) else None

    def met_share(self, total_usd: float) -> float:
        """Share of samples whose fleet costs no more than `total_usd`: the probability that a
        fleet of that cost meets the SLA (the sizing confidence, for the plan's own fleet)."""
        return float(np.mean(self.costs() <= total_usd + 1e-6))

    def percentiles(self) -> dict[str, Percentiles | None]:
        """P10/P50/P90 of nodes, GPUs, replicas and total monthly cost over every sample, a
        sample that misses the SLA counting as an unbounded fleet (inf: more than that share of
        the samples miss it); None when no sample meets it."""
        if all(i == MISSED for i in self.sample_fleet):
            return dict.fromkeys(("nodes", "gpus", "replicas", "total_monthly_cost_usd"))
        replicas = np.array(
            [math.inf if i == MISSED else float(self.fleets[i].replicas) for i in self.sample_fleet]
        )
        with np.errstate(invalid="ignore"):
            nodes = np.ceil(replicas / self.replicas_per_node - 1e-9) * self.nodes_per_replica
        return {
            "nodes": _percentiles(nodes),
            "gpus": _percentiles(replicas * self.gpus_per_replica),
            "replicas": _percentiles(replicas),
            "total_monthly_cost_usd": _percentiles(self.costs()),
        }


def share_below(share: float, confidence: float) -> str:
    """A share of samples short of the confidence, never printed as equal to it (89.7%, not
    90%, beside "fewer than the 90% sizing confidence asks")."""
    text = f"{share:.0%}"
    return text if text != f"{confidence:.0%}" else f"{math.floor(share * 1000) / 10:.1f}%"


def _percentiles(values: Array) -> Percentiles:
    """Observed sample values at P10/P50/P90 (a node count stays a whole number)."""
    p10, p50, p90 = np.percentile(values, PERCENTILES, method="inverted_cdf")
    return Percentiles(float(p10), float(p50), float(p90))
