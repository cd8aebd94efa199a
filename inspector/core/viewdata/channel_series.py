"""Plot-ready figures of one compared tensor's channels and, for a concatenation, its slices
(issue 25): the per-channel view draws them. Infinite SQNR (a channel B reproduces exactly) is
drawn on a line 10 dB above the best finite one, like the layer plot's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from inspector.core.compare.inside import part_verdict
from inspector.core.compare.result import LayerResult
from inspector.core.stats.sqnr_scale import exact_line


@dataclass(frozen=True)
class SliceMark:
    start: int
    stop: int  # channels [start, stop) on the channel axis
    label: str  # "slice 4:7 · op 11 LOGISTIC · 0.0 dB, 0.2 steps"
    far_below: bool  # >= 20 dB below the tensor


@dataclass(frozen=True)
class ChannelSeries:
    title: str
    x: np.ndarray
    sqnr_db: np.ndarray  # drawable (inf on the exact line, -inf as NaN)
    exact_at: float
    steps_used: np.ndarray | None
    tensor_sqnr_db: float | None  # drawable, None when infinite
    slices: tuple[SliceMark, ...]
    verdict: str | None


def channel_series(layer: LayerResult | None) -> ChannelSeries | None:
    """The layer's per-channel SQNR and steps used, with its slices when they lie on the channel
    axis (None when the comparison kept no channels for it)."""
    c = None if layer is None else layer.channels
    if layer is None or c is None or not c.count:
        return None
    raw = np.asarray(c.sqnr_db, np.float64)
    top = exact_line(v for v in (*raw.tolist(), layer.metrics.sqnr_db))
    sq = np.where(np.isposinf(raw), top, np.where(np.isneginf(raw), np.nan, raw))
    steps = c.steps_used()
    marks = []
    for s in layer.slices or ():
        if s.axis not in (-1, c.axis):
            continue
        src = "" if s.producer_op is None else f" · op {s.producer_op} {s.producer_type}"
        st = "" if s.steps_used is None else f", {s.steps_used:.1f} steps"
        db = "∞" if math.isinf(s.sqnr_db) and s.sqnr_db > 0 else f"{s.sqnr_db:.1f}"
        below = math.isfinite(layer.metrics.sqnr_db) and layer.metrics.sqnr_db - s.sqnr_db >= 20.0
        marks.append(SliceMark(s.start, s.stop, f"slice {s.label}{src} · {db} dB{st}", below))
    t = layer.metrics.sqnr_db
    title = (f"op {layer.op_index} {layer.op_type}: {c.count} channels along axis {c.axis}; channel ranges differ "
             f"{c.range_ratio:.1f}× (largest / median)")
    return ChannelSeries(title, np.arange(c.count, dtype=np.float64), sq, top,
                         None if steps is None else np.asarray(steps, np.float64),
                         float(t) if math.isfinite(t) else None, tuple(marks),
                         part_verdict(f"op {layer.op_index}", t, c, layer.slices))
