"""What the weight histogram view shows for a `WeightAnalysis`: the x range of "Zoom to grid"
(a few quantization steps where the most values are, zero when it holds as many, a grid point in
the middle) with the y extent of the counts in it, the x range that fits the data, whether the grid-resolved
bins or the coarse ones are drawn for a visible x range, and the coarse bins themselves, cut at
the clip lines so that no bar of in-range values is drawn past them; and for a layer without
weights (`compare.weights.layer_weights`), what its constants are instead (`no_weights_text`).
The view only applies these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from inspector.core.compare.weights import WeightAnalysis, constant_operands
from inspector.core.tflite.model import Model, Tensor
from inspector.core.tflite.op_facts import facts, op_label

FINE_BINS_VISIBLE = 400  # show grid-resolved bins when at most this many are in view
ZERO_SHARE = 0.25  # Zoom to grid stays around zero while that window holds a quarter of the densest one's values


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
    """About `steps` quantization steps where the shown tensor or channel has its values: around
    zero (weights usually peak there) unless a window elsewhere holds more than four times as many,
    then that densest window; centred on a grid point. A channel of nine depthwise weights or a bias spread far from zero zoomed to an
    empty window around zero before."""
    if not steps > 0:  # e.g. a button's `checked=False` passed as the step count
        raise ValueError(f"grid_zoom needs a positive number of steps, not {steps!r}")
    step = w.grid_step
    if step is None and w.quant is not None:
        step = float(np.median(w.quant.scales))
    if step is None:
        step = float(w.edges[-1] - w.edges[0]) / 40
    width = steps * step
    centre = _densest_window(w, width)
    if (grid := grid_of(w)) is not None:  # put a grid point in the middle
        z = grid[1]
        centre = (round(centre / step + z) - z) * step
    x0, x1 = centre - width / 2, centre + width / 2
    lo, hi = np.searchsorted(w.edges, [x0, x1])
    counts = [c[max(lo - 1, 0) : hi] for c in (w.a_counts, w.b_counts) if c is not None]
    top = max((float(c.max()) for c in counts if c.size), default=1.0)
    return AxisRange(float(x0), float(x1), top)


def _densest_window(w: WeightAnalysis, width: float) -> float:
    """The centre of the `width`-wide window holding the most values of either histogram (their
    sum), the values it holds centred in it; 0 when the window around zero holds at least
    `ZERO_SHARE` of that (uniform weights straddling zero stay centred on it)."""
    counts = [c for c in (w.a_counts, w.b_counts) if c is not None]
    if not counts:
        return 0.0
    total = np.sum(counts, axis=0).astype(np.float64)
    centres = 0.5 * (w.edges[:-1] + w.edges[1:])
    occupied = np.nonzero(total)[0]
    if occupied.size == 0:
        return 0.0
    cum = np.concatenate(([0.0], np.cumsum(total)))

    def held(x0: float) -> float:  # values whose bin centre lies in [x0, x0 + width)
        i, j = np.searchsorted(centres, [x0, x0 + width])
        return float(cum[j] - cum[i])

    starts = centres[occupied]  # a best window can start at an occupied bin
    inside = cum[np.searchsorted(centres, starts + width)] - cum[occupied]
    k = int(np.argmax(inside))
    if held(-width / 2) >= ZERO_SHARE * inside[k]:
        return 0.0
    last = occupied[np.searchsorted(centres[occupied], starts[k] + width) - 1]
    return 0.5 * float(starts[k] + centres[last])

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


SHOWN_VALUES = 8  # a constant this small is written out in full


def _operand_role(op_type: str, t: Tensor) -> str:
    f = facts(op_type)
    integer = t.dtype.startswith(("int", "uint")) and t.quantization is None
    if integer and (f.shape_only or f.reshape):
        return "a shape operand (the shape of the output)" if f.reshape else "a shape or index operand"
    if integer:
        return "an axis, index or size operand"
    if f.same_scale or f.boundary:
        return "a constant operand"
    return "an element-wise operand (combined with the activation value by value)"


def no_weights_text(model: Model, op_index: int) -> str:
    """What the Weights tab says for an op of `model.main` without weights: that it has none, that
    its output is what is selected, and what each constant input is (with its values when small)."""
    sg = model.main
    op = sg.ops[op_index]
    out = next((o for o in op.outputs if o >= 0), None)
    label = op_label(op_index, op.type, sg.tensors[out].name if out is not None else "")
    lines = [f"{label} has no weights: its output (an activation) is selected; its values are in the Activations tab after a comparison."]
    for t in constant_operands(sg, op):
        data = model.tensor_data(t)
        values = ""
        if data is not None and data.size <= SHOWN_VALUES:
            values = " = [" + ", ".join(f"{v:.4g}" if data.dtype.kind == "f" else str(int(v)) for v in data.ravel()) + "]"
        lines.append(f"Constant input '{t.name}' ({t.dtype} {list(t.shape)}{values}): {_operand_role(op.type, t)}, not weights"
                     + ("; select it in the tensor table to see its values." if data is not None and data.size > SHOWN_VALUES else "."))
    return "\n".join(lines)
