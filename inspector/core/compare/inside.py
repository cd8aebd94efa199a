"""Inside the tensor (issue 25): per-channel and per-slice figures of a compared tensor, and the
one line that says where a part of it is far worse than the whole.

`ChannelStats`: per channel along the channel axis (the last axis of [..., C] tensors, the quantized
dimension of per-channel ones) the SQNR, the observed float range, the clip rate; range use and
steps used (float range / scale) follow from B's scale. JSON (the contract, extended):
{"axis", "count", "worst": {"index", "sqnr_db", "range_use"}, "range_ratio"} plus the per-channel
lists. `SliceStats`: the same figures for each input slice of a CONCATENATION / PACK along its axis:
{"input", "start", "stop", "sqnr_db", "range_use", "steps_used"} plus where the slice comes from.
Infinite SQNR (and a range ratio over a zero median) is written as null; in the per-channel list a
channel whose float values are all zero while B's are not (SQNR -inf) is written as "-inf".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from inspector.core.codec.json_record import JsonRecord, json_field
from inspector.core.compare.concat_layout import ConcatLayout
from inspector.core.compare.median import median
from inspector.core.stats.axis_sums import AxisSums
from inspector.core.stats.metrics import TensorStats
from inspector.core.text.numbers import db
from inspector.core.writing import json_float

BELOW_DB = 20.0  # a channel or slice this far below its tensor's SQNR is named in the verdicts
# A channel whose float range is under this share of the median channel's is near-dead: what it
# carries is small beside its neighbours, so a low SQNR of its own is not named (a trained CNN's
# ReLU channel that fires on a few pixels: 0.3 steps at 0 dB beside a 42 dB tensor).
LIVE_SHARE = 0.25


def _db_json(v: float) -> float | str | None:
    """A channel's SQNR in JSON: +inf as null, -inf (float all zero, B not) as "-inf"."""
    return "-inf" if v == -math.inf else json_float(v)


def _db_from_json(v: float | str | None) -> float:
    return -math.inf if v == "-inf" else math.inf if v is None else float(v)


def _worst_json(c: ChannelStats) -> dict[str, Any]:
    w = c.worst
    ru = c.range_use()
    return {"index": w, "sqnr_db": json_float(c.sqnr_db[w]) if c.count else None,
            "range_use": None if ru is None or not c.count else json_float(float(ru[w]))}  # fmt: skip


def _scale_width(st: TensorStats, length: int) -> tuple[np.ndarray | None, np.ndarray | None]:
    """B's scale and representable range width per index (broadcast; None for float tensors)."""
    if st.scale is None or st.range_lo is None or st.range_hi is None:
        return None, None
    s = np.asarray(st.scale, np.float64).reshape(-1)
    w = (np.asarray(st.range_hi, np.float64) - np.asarray(st.range_lo, np.float64)).reshape(-1)
    if s.size not in (1, length) or w.size not in (1, length):
        s, w = s[:1], w[:1]
    return np.broadcast_to(s, (length,)), np.broadcast_to(w, (length,))


@dataclass(frozen=True)
class ChannelStats(JsonRecord):
    axis: int
    sqnr_db: tuple[float, ...] = json_field(  # +inf: no error; -inf: x all zero, y not
        absent=(), encode=lambda v: [_db_json(x) for x in v], decode=lambda v: tuple(_db_from_json(x) for x in v))
    float_min: tuple[float, ...] = json_field(absent=(), none_as=math.nan)
    float_max: tuple[float, ...] = json_field(absent=(), none_as=math.nan)
    clip_rate: tuple[float, ...] | None = json_field(absent=None, none_as=math.nan)  # None: B's tensor is float
    scales: tuple[float, ...] | None = json_field(key="scale", absent=None)  # B's scale per channel (None: float)
    range_widths: tuple[float, ...] | None = json_field(key="range_width", absent=None)  # B's representable range per channel

    JSON_EXTRA = {"count": lambda c: c.count, "worst": _worst_json, "range_ratio": lambda c: c.range_ratio}
    JSON_KEYS = ("axis", "count", "worst", "range_ratio", "sqnr_db", "float_min", "float_max", "clip_rate", "scale", "range_width")

    @property
    def count(self) -> int:
        return len(self.sqnr_db)

    def ranges(self) -> np.ndarray:
        widths: np.ndarray = np.maximum(np.asarray(self.float_max) - np.asarray(self.float_min), 0.0)
        return widths

    def range_use(self) -> np.ndarray | None:
        if self.range_widths is None:
            return None
        with np.errstate(divide="ignore", invalid="ignore"):
            use: np.ndarray = self.ranges() / np.asarray(self.range_widths)
        return use

    def steps_used(self) -> np.ndarray | None:
        if self.scales is None:
            return None
        with np.errstate(divide="ignore", invalid="ignore"):
            steps: np.ndarray = self.ranges() / np.asarray(self.scales)
        return steps

    @property
    def worst(self) -> int:
        """The channel of lowest SQNR (the first of equals)."""
        v = np.asarray(self.sqnr_db, np.float64)
        return int(np.argmin(np.where(np.isnan(v), np.inf, v))) if v.size else 0

    def worst_live(self) -> int | None:
        """The channel of lowest SQNR among those with a float range >= LIVE_SHARE x the median."""
        r = self.ranges()
        if not r.size:
            return None
        live = r >= LIVE_SHARE * median(r)
        if not live.any():
            return None
        v = np.where(live & ~np.isnan(np.asarray(self.sqnr_db, np.float64)), np.asarray(self.sqnr_db, np.float64), np.inf)
        return int(np.argmin(v))

    @property
    def range_ratio(self) -> float:
        """Largest channel float range / median channel float range (inf over a zero median)."""
        r = self.ranges()
        med = median(r) if r.size else 0.0
        return float(r.max()) / med if med > 0 else (math.inf if r.size and r.max() > 0 else 1.0)


@dataclass(frozen=True)
class SliceStats(JsonRecord):
    input: int  # position among the concatenation's inputs
    start: int
    stop: int
    sqnr_db: float = json_field(none_as=math.inf, absent=math.inf)
    range_use: float | None = json_field(absent=None)
    steps_used: float | None = json_field(absent=None)
    concat_op: int = json_field(absent=-1)  # the CONCATENATION / PACK op of B
    tensor: int = json_field(absent=-1)  # B's input tensor
    producer_op: int | None = json_field(absent=None)  # the op that computed the input (through requantization, reshapes)
    producer_type: str | None = json_field(absent=None)
    float_min: float = json_field(none_as=math.nan, absent=math.nan)
    float_max: float = json_field(none_as=math.nan, absent=math.nan)
    rmse: float = json_field(none_as=math.nan, absent=math.nan)
    axis: int = -1  # of the measured tensor (non-negative when known)

    @property
    def label(self) -> str:
        return f"{self.start}:{self.stop}"


def channel_stats(st: TensorStats, ndim: int) -> ChannelStats | None:
    """The per-channel figures a TensorStats kept (None when it kept none)."""
    a = st.channel_sums()
    if a is None or a.length < 2 or ndim == 0:
        return None
    assert a.n is not None and a.clip is not None and a.xmin is not None and a.xmax is not None  # length >= 2: filled
    s, w = _scale_width(st, a.length)
    clip = None if st.lo is None else tuple((a.clip / np.maximum(a.n, 1)).tolist())
    return ChannelStats(
        a.axis % ndim, tuple(a.sqnr_db().tolist()), tuple(a.xmin.tolist()), tuple(a.xmax.tolist()), clip,
        None if s is None else tuple(s.tolist()), None if w is None else tuple(w.tolist()),
    )


def slice_stats(st: TensorStats, layout: ConcatLayout | None, ndim: int) -> tuple[SliceStats, ...] | None:
    """Per input slice of a concatenation (from the sums along its axis: the channel sums when it
    is the channel axis)."""
    if layout is None or ndim == 0:
        return None
    sums: AxisSums | None = None
    if st.slices is not None and st.slices.axis % ndim == layout.axis:
        sums = st.slices
    elif st.chan_axis is not None and st.chan_axis % ndim == layout.axis:
        sums = st.channel_sums()
    if sums is None or sums.n is None:
        return None
    g = sums.group([(s.start, s.stop) for s in layout.slices])
    assert g.n is not None and g.e2 is not None and g.xmin is not None and g.xmax is not None  # grouped from filled sums
    scale, width = _scale_width(st, 1)
    out = []
    rng = np.maximum(g.xmax - g.xmin, 0.0)
    sq = g.sqnr_db()
    for k, s in enumerate(layout.slices):
        r = float(rng[k])
        out.append(SliceStats(
            s.input, s.start, s.stop, float(sq[k]),
            None if width is None or not width[0] > 0 else r / float(width[0]),
            None if scale is None or not scale[0] > 0 else r / float(scale[0]),
            layout.op_index, s.tensor, s.producer_op, s.producer_type,
            float(g.xmin[k]), float(g.xmax[k]), math.sqrt(float(g.e2[k]) / max(float(g.n[k]), 1.0)), layout.axis,
        ))
    return tuple(out)


def part_verdict(where: str, tensor_sqnr: float, channels: ChannelStats | None,
                 slices: tuple[SliceStats, ...] | None, below_db: float = BELOW_DB) -> str | None:
    """One line with the figures where a slice (first) or a channel is `below_db` or more under the
    tensor's SQNR (`where`: "op 3", "output 'boxes'": whose channel), e.g. "slice 4:7 of op 24, from op 21 LOGISTIC: SQNR 0.0 dB, 0.5 steps used; the
    tensor reads 49.7 dB"; None when no part is that far below."""
    if not math.isfinite(tensor_sqnr) and tensor_sqnr > 0:
        return None
    tensor = "inf" if not math.isfinite(tensor_sqnr) else f"{tensor_sqnr:.1f}"
    if slices:
        s = min(slices, key=lambda v: v.sqnr_db)
        if tensor_sqnr - s.sqnr_db >= below_db:
            src = "" if s.producer_op is None else f", from op {s.producer_op} {s.producer_type}"
            steps = "" if s.steps_used is None else f", {s.steps_used:.1f} steps used"
            return f"slice {s.label} of op {s.concat_op}{src}: SQNR {db(s.sqnr_db)} dB{steps}; the tensor reads {tensor} dB"
    w = None if channels is None or not channels.count else channels.worst_live()
    if channels is not None and w is not None:
        v = channels.sqnr_db[w]
        if tensor_sqnr - v >= below_db:
            st = channels.steps_used()
            steps = "" if st is None else f", {float(st[w]):.1f} steps used"
            return (f"channel {w} of {where}: SQNR {db(v)} dB{steps} (range ratio "
                    f"{channels.range_ratio:.0f}x); the tensor reads {tensor} dB")
    return None


def worst_part_db(channels: ChannelStats | None, slices: tuple[SliceStats, ...] | None, live: bool = False) -> float | None:
    """The lowest SQNR of a slice or channel (None when neither was measured); `live`: among the
    channels that are not near-dead (`ChannelStats.worst_live`)."""
    vals = [s.sqnr_db for s in slices or ()]
    w = None if channels is None or not channels.count else (channels.worst_live() if live else channels.worst)
    if channels is not None and w is not None:
        vals.append(channels.sqnr_db[w])
    return min(vals) if vals else None


def gate_floor(sqnr_db: float, channels: ChannelStats | None, slices: tuple[SliceStats, ...] | None) -> tuple[float, str]:
    """The figure an SQNR gate reads for one output: the lowest of the whole tensor's SQNR, its
    slices' and its live channels' (`ChannelStats.worst_live`), with what it is in words."""
    best, what = sqnr_db, "SQNR"
    for s in slices or ():
        if s.sqnr_db < best:
            src = "" if s.producer_op is None else f" (from op {s.producer_op} {s.producer_type})"
            best, what = s.sqnr_db, f"slice {s.label}{src} SQNR"
    w = None if channels is None or not channels.count else channels.worst_live()
    if channels is not None and w is not None and channels.sqnr_db[w] < best:
        best, what = channels.sqnr_db[w], f"channel {w} SQNR"
    return best, what

