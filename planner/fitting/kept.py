"""Results the planner may keep beyond the process: serving-model calibrations
(planner.engine.calibrate) and curve fits (planner.fitting.fit), each by a key of its inputs.

The planner only defines the seam; where results are kept is the caller's (workflows.result_cache:
a private folder of the user's, one per version of the planner's code). What comes back is
untrusted plain JSON that each kind checks field by field before use: a damaged, foreign or
planted value is computed again, never believed.
"""

from __future__ import annotations

import hashlib
import math
from typing import Protocol

__all__ = ["CALIBRATIONS", "FITS", "KINDS", "KeptResults", "finite_reals", "keep", "kept", "key_of"]

CALIBRATIONS = "calibrations"
FITS = "fits"
KINDS = (CALIBRATIONS, FITS)


class KeptResults(Protocol):
    """Where one kind of result outlives the process; values are plain JSON."""

    def get(self, key: str) -> object | None: ...

    def put(self, key: str, value: dict[str, object]) -> None: ...


_STORES: dict[str, KeptResults] = {}  # kind -> the one place it is kept; absent: memory only


def keep(kind: str, store: KeptResults | None) -> None:
    """Read and keep results of `kind` in `store` as well as in memory (None: memory only)."""
    if kind not in KINDS:
        raise ValueError(f"not a kind of kept result: {kind!r}")
    if store is None:
        _STORES.pop(kind, None)
    else:
        _STORES[kind] = store


def kept(kind: str) -> KeptResults | None:
    """Where results of `kind` are kept beyond the process, or None."""
    return _STORES.get(kind)


def key_of(text: str) -> str:
    """The key of a result whose inputs print as `text` (64 hex digits)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def finite_reals(values: object, width: int | None = None) -> bool:
    """True for a JSON list of finite numbers (not booleans), of `width` items when given."""
    return (
        isinstance(values, list)
        and (width is None or len(values) == width)
        and all(
            isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
            for v in values
        )
    )
