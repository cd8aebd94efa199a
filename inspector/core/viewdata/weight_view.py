"""What the weight histogram view shows for a `WeightAnalysis`: the x range of "Zoom to grid"
(a few quantization steps around zero or the densest bin, a grid point in the middle) with the
y extent of the counts in it, the x range that fits the data, whether the grid-resolved
bins or the coarse ones are drawn for a visible x range, and the coarse bins themselves, cut at
the clip lines so that no bar of in-range values is drawn past them. The view only applies these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from inspector.core.compare.weights import WeightAnalysis

FINE_BINS_VISIBLE = 400  # show grid-resolved bins when at most this many are in view


@dataclass(frozen=True)
class AxisRange:
    x0: float
    x1: float
    y_top: float  # highest count in [x0, x1] (1 when empty)

    def y_max(self, log: bool) -> float:
        """Top of the y axis: counts, or log10 of counts on a log axis, with 5 % headroom."""
        return (math.log10(max(self.y_top, 1)) if log else self.y_top) * 1.05


@dataclass(frozen=True)
class CoarseBins:
    edges: np.ndarray  # len n + 1, a subset of the grid-resolved edges
    a: np.ndarray | None
    b: np.ndarray | None


def coarse_bins(w: WeightAnalysis) -> CoarseBins:
    """The zoomed-out histogram: the grid-resolved counts summed over whole groups of grid steps,
    with the groups starting at the fine bin of each clip line (clip lo … clip hi partitioned
    from clip lo, the last group ending at the fine bin of clip hi). A channel whose largest
    value sits exactly on the clip line then has no bar past it (before, a coarse bin anchored at
    the left edge straddled the line and drew in-range values up to a whole bin beyond it)."""
    if w.coarse_edges is None:
        return CoarseBins(w.edges, w.a_counts, w.b_counts)
    fine = w.edges
    n = len(fine) - 1
    group = max(1, int(round((w.coarse_edges[1] - w.coarse_edges[0]) / (fine[1] - fine[0]))))
    if w.clip_lo is None or w.clip_hi is None or group == 1:
        return CoarseBins(w.coarse_edges, w.a_coarse, w.b_coarse)
    i_lo = int(np.clip(np.searchsorted(fine, w.clip_lo, side="right") - 1, 0, n))
    i_hi = int(np.clip(np.searchsorted(fine, w.clip_hi, side="right"), 0, n))  # end of clip hi's fine bin
    inside = list(range(i_lo, i_hi, group))
    if len(inside) > 1 and i_hi - inside[-1] < group // 2:  # no sliver of a bin before the line
        inside.pop()
    below = list(range(i_lo - group, 0, -group))[::-1]
    above = list(range(i_hi, n, group)) if i_hi < n else []
    starts = sorted({0, *below, *inside, *above} - {n})
    bounds = np.array([*starts, n])

    def regroup(c: np.ndarray | None) -> np.ndarray | None:
        return None if c is None else np.add.reduceat(c, bounds[:-1])

    return CoarseBins(fine[bounds], regroup(w.a_counts), regroup(w.b_counts))


def grid_of(w: WeightAnalysis) -> tuple[float, int] | None:
    """(S, Z) of the one grid the histogram shows (a per-tensor weight, or the chosen channel of a
    per-channel one); None when there is none (all channels of a per-channel weight, a float B)."""
    if w.grid_step is None:
        return None
    z = int(w.quant.zero_points[w.channel or 0]) if w.quant is not None else 0
    return float(w.grid_step), z


def grid_zoom(w: WeightAnalysis, steps: float = 16) -> AxisRange:
    """About `steps` quantization steps around zero (or the densest bin when the weights do not
    straddle zero), centred on a grid point."""
    if not steps > 0:  # e.g. a button's `checked=False` passed as the step count
        raise ValueError(f"grid_zoom needs a positive number of steps, not {steps!r}")
    step = w.grid_step
    if step is None and w.quant is not None:
        step = float(np.median(w.quant.scales))
    if step is None:
        step = float(w.edges[-1] - w.edges[0]) / 40
    coarse = [c for c in (w.a_coarse, w.b_coarse) if c is not None]
    centre = 0.0
    occupied = np.nonzero(np.sum(coarse, axis=0))[0] if coarse else np.empty(0, int)
    if occupied.size and w.coarse_edges is not None:
        lo_x, hi_x = w.coarse_edges[occupied[0]], w.coarse_edges[occupied[-1] + 1]
        if not lo_x <= 0.0 <= hi_x:  # weights usually peak at zero; else use the densest bin
            k = int(np.argmax(np.sum(coarse, axis=0)))
            centre = 0.5 * float(w.coarse_edges[k] + w.coarse_edges[k + 1])
    if (grid := grid_of(w)) is not None:  # put a grid point in the middle
        z = grid[1]
        centre = (round(centre / step + z) - z) * step
    x0, x1 = centre - steps / 2 * step, centre + steps / 2 * step
    lo, hi = np.searchsorted(w.edges, [x0, x1])
    counts = [c[max(lo - 1, 0) : hi] for c in (w.a_counts, w.b_counts) if c is not None]
    top = max((float(c.max()) for c in counts if c.size), default=1.0)
    return AxisRange(float(x0), float(x1), top)


def data_extent(w: WeightAnalysis) -> tuple[float, float] | None:
    """x range of the occupied bins (not the clip lines, which may lie far out for biases)."""
    counts = [c for c in (w.a_counts, w.b_counts) if c is not None]
    occupied = np.nonzero(np.sum(counts, axis=0))[0] if counts else np.empty(0, int)
    if occupied.size == 0:
        return None
    return float(w.edges[occupied[0]]), float(w.edges[occupied[-1] + 1])


def fine_bins(w: WeightAnalysis, x0: float, x1: float) -> bool:
    """Grid-resolved bins when at most FINE_BINS_VISIBLE of them are in [x0, x1]."""
    visible = (x1 - x0) / float(w.edges[1] - w.edges[0])
    return bool(w.coarse_edges is None or visible <= FINE_BINS_VISIBLE)


def float16_summary(w: WeightAnalysis) -> str | None:
    """The float16 rounding line of a float16 B against float32 A (None for other pairs): the
    error in float16 ulps (rounding alone: at most 0.5), relative error, and what storage lost."""
    f = w.float16
    if f is None:
        return None
    parts = []
    if f.max_ulp is not None:
        parts.append(f"float16 rounding: max {f.max_ulp:.3g} ulp, mean {f.mean_ulp:.3g} ulp "
                     f"({100 * (f.within_half_ulp or 0):.1f} % within ½ ulp)")  # fmt: skip
    if f.max_relative is not None:
        parts.append(f"max relative error {f.max_relative:.3g}")
    lost = [f"{n:,} {what}" for n, what in ((f.overflow, "beyond ±65504 (inf or saturated)"),
                                            (f.flushed, "flushed to zero"), (f.nan, "NaN")) if n]  # fmt: skip
    parts.append(", ".join(lost) if lost else "no overflow, flush to zero or NaN")
    if f.subnormal:
        parts.append(f"{f.subnormal:,} subnormal (|x| < 2⁻¹⁴: zero where subnormals are flushed)")
    return " · ".join(parts)
