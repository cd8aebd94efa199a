"""Axis ticks on a quantization grid: for a visible range, a scale S and a zero point Z, the
values r = S·(q − Z) at whole levels q, every k-th level (k from 1, 2, 5, 10, 20, 50…) so
that at most `max_ticks` are labelled, each step between them a minor tick when they are not
too many. Labels are the values, with enough digits that neighbours differ. "Zoom to grid"
put pyqtgraph's ticks at 0.001-multiples, which say nothing of where the levels are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_STEPS = 64  # wider than this many steps (zoomed out past the grid), the axis keeps its usual ticks
STRIDES = (1, 2, 5)  # k = stride · 10^n
MAX_MINOR = 100  # minor ticks at every level up to this many


@dataclass(frozen=True)
class GridTicks:
    stride: int  # levels between two labelled ticks
    major: tuple[tuple[float, str], ...]  # (value, label) at every `stride`-th level
    minor: tuple[float, ...]  # every level in range (empty when too many to draw)
    levels: tuple[int, ...]  # the level q of each major tick


def _stride(span_steps: float, max_ticks: int) -> int:
    n = 0
    while True:
        for s in STRIDES:
            k: int = s * 10**n
            if span_steps / k + 1 <= max_ticks:
                return k
        n += 1


def _label(value: float, spacing: float) -> str:
    if value == 0:
        return "0"
    decimals = max(0, 1 - math.floor(math.log10(spacing)))  # two significant digits of the spacing
    text = f"{value:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def grid_ticks(x0: float, x1: float, scale: float, zero_point: int, max_ticks: int = 9,
               max_steps: float = MAX_STEPS) -> GridTicks | None:
    """Ticks at levels of the grid r = S·(q − Z) within [x0, x1], every `stride`-th level (a
    multiple of the stride, so they stay put as the view pans); None when the range holds more
    than `max_steps` steps, a step is not positive or the range is empty."""
    if not (scale > 0 and math.isfinite(scale) and math.isfinite(x0) and math.isfinite(x1)) or x1 <= x0:
        return None
    if max_ticks < 2:
        raise ValueError(f"grid_ticks needs room for two ticks, not max_ticks={max_ticks}")
    span = (x1 - x0) / scale
    if span > max_steps:
        return None
    k = _stride(span, max_ticks)
    q_lo = math.ceil(x0 / scale + zero_point - 1e-9)
    q_hi = math.floor(x1 / scale + zero_point + 1e-9)
    first = math.ceil(q_lo / k) * k
    levels = tuple(range(first, q_hi + 1, k))
    major = tuple(((q - zero_point) * scale, _label((q - zero_point) * scale, k * scale)) for q in levels)
    minor = tuple((q - zero_point) * scale for q in range(q_lo, q_hi + 1)) if k > 1 and q_hi - q_lo < MAX_MINOR else ()
    return GridTicks(k, major, minor, levels)
