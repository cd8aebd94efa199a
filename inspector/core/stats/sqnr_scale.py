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
    return line_above(best_below_exact(sqnrs))


def best_below_exact(sqnrs: Iterable[float | None]) -> float | None:
    """The best finite SQNR below NEAR_EXACT_DB (None: there is none)."""
    return max((v for v in sqnrs if v is not None and math.isfinite(v) and v < NEAR_EXACT_DB), default=None)


def line_above(best: float | None) -> float:
    """`exact_line` of SQNRs whose `best_below_exact` is `best`."""
    return SQNR_EXACT_DB if best is None else 10.0 * math.ceil((best + 10.0) / 10.0)


EXACT_TICK = "∞ / ≥ 100"  # the axis label of the stand-in line: it is not a dB value
EXACT_LINE_LABEL = f"∞ or {NEAR_EXACT_LABEL}: equal (up to float rounding), drawn on this line, not to scale"


def exact_axis_ticks(lo: float, exact_at: float) -> list[tuple[float, str]]:
    """Y-axis ticks of an SQNR plot that draws the ∞ line at `exact_at`: round dB values from
    `lo` up to half a step below the line, and the line itself labelled `EXACT_TICK`, so no
    number on the axis pretends that the line is 60 or 100 dB of measured SQNR."""
    span = max(exact_at - lo, 1.0)
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100) if span / s <= 8)
    first = math.ceil(lo / step) * step
    n = int(max(0, math.floor((exact_at - 0.5 * step - first) / step)))
    ticks = [(float(first + k * step), f"{first + k * step:g}") for k in range(n + 1) if first + k * step < exact_at - 0.4 * step]
    return [*ticks, (float(exact_at), EXACT_TICK)]
