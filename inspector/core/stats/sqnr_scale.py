"""Where very high SQNRs are drawn: one definition for the GUI plots and the HTML report.

An SQNR of at least `NEAR_EXACT_DB` means equal up to float rounding (an isolated MAX_POOL
measures 150 dB); drawn as is, it squashes every meaningful value at the bottom of the axis. Such
values, and infinite SQNR (equal tensors), are drawn on one line 10 dB above the best other SQNR.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

SQNR_EXACT_DB = 120.0  # where "equal tensors" (infinite SQNR) is drawn when no SQNR is finite
NEAR_EXACT_DB = 100.0  # at or above: equal up to float rounding
NEAR_EXACT_LABEL = f"≥ {NEAR_EXACT_DB:.0f} dB"


def exact_line(sqnrs: Iterable[float | None]) -> float:
    """The y of the "∞ or ≥ 100 dB" line: 10 dB above the best SQNR below NEAR_EXACT_DB, rounded up to 10."""
    best = [v for v in sqnrs if v is not None and math.isfinite(v) and v < NEAR_EXACT_DB]
    return SQNR_EXACT_DB if not best else 10.0 * math.ceil((max(best) + 10.0) / 10.0)

