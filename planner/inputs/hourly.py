"""A demand's 24-hour profile: its peak-to-average ratio, checked as the scenario reads it."""

from __future__ import annotations

import math

HOURS_PER_DAY = 24


def profile_peak_to_average(profile: object) -> float:
    """max / mean of a 24-hour profile; ValueError naming demand.hourly_profile when unusable."""
    if not isinstance(profile, (list, tuple)) or len(profile) != HOURS_PER_DAY:
        count = len(profile) if isinstance(profile, (list, tuple)) else "not a list"
        raise ValueError(f"demand.hourly_profile needs 24 hourly weights, got {count}")
    try:
        weights = [float(weight) for weight in profile]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"demand.hourly_profile weights must be numbers: {profile!r}") from exc
    if any(not math.isfinite(w) or w < 0 for w in weights) or max(weights) <= 0:
        raise ValueError(
            f"demand.hourly_profile weights must be finite, >= 0, and not all 0; got {weights!r}"
        )
    return max(weights) / (sum(weights) / HOURS_PER_DAY)


def same_ratio(given: object, ratio: float) -> bool:
    """A given peak_to_average equals the profile's own (to 1e-6)."""
    return isinstance(given, (int, float)) and math.isclose(float(given), ratio, rel_tol=1e-6)
