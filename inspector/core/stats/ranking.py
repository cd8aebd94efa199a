"""Which layers are worst: rank by the metric's own value (never by a colour-scale position,
which ties every value past the scale's end), NaN and missing values last and never ranked.

`worst_first(values, higher_is_better)` gives the positions of the ranked values, worst first;
ties keep the earlier position first. Used by the graph's "Go to worst" and the layer plot's
marks of the worst layers."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def worst_first(values: Sequence[float | None] | np.ndarray, higher_is_better: bool = True) -> list[int]:
    """Positions of the values that have one (not None, not NaN), worst first: lowest first when
    `higher_is_better` (SQNR: −∞ before 0 dB before 8.9 dB), else highest first (clip rate).
    Infinite values rank by their sign (+∞ SQNR is best)."""
    v = np.array([np.nan if x is None else float(x) for x in values], np.float64)
    ok = np.flatnonzero(~np.isnan(v))
    key = v[ok] if higher_is_better else -v[ok]
    return [int(i) for i in ok[np.argsort(key, kind="stable")]]


def worst(values: Sequence[float | None] | np.ndarray, higher_is_better: bool = True) -> int | None:
    """Position of the worst value (None when no value is there)."""
    order = worst_first(values, higher_is_better)
    return order[0] if order else None


