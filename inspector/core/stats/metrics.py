"""Streaming error statistics of a float reference x against a dequantized tensor y.

One definition everywhere (GUI, CLI, reports, tests), see docs/ARCHITECTURE.md "Metrics", with one
refinement: clip rate counts values that saturate (beyond the representable range by more than
half a step), since values within half a step round to the end value with ordinary error. Sums are
accumulated in float64 sample by sample, so memory does not grow with the number of samples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from inspector.core.codec.json_record import JsonRecord, json_field, json_meta
from inspector.core.stats.axis_sums import EMPTY, AxisSums

METRIC_KEYS = ("mse", "sqnr_db", "max_abs", "mean_error", "cosine", "rmse_over_scale", "clip_rate", "range_use")


@dataclass(frozen=True, slots=True)
class Metrics(JsonRecord):
    """JSON (`to_json`): the contract keys (METRIC_KEYS) and "count", the per-channel lists only
    when measured; infinities written as null, a null SQNR read back as +inf."""

    mse: float
    sqnr_db: float = field(metadata=json_meta(none_as=math.inf))  # +inf when y == x exactly; -inf when x is all zeros and y is not
    max_abs: float
    mean_error: float  # mean(x - y): the bias
    cosine: float | None  # None when x or y is all zeros
    rmse_over_scale: float | None  # None when y is not a quantized tensor
    clip_rate: float | None  # share of x that saturates: outside [S(qmin-Z-1/2), S(qmax-Z+1/2)]; None if not quantized
    range_use: float | None  # (max x - min x) / (hi - lo); None when not quantized
    count: int  # number of elements accumulated
    per_channel_sqnr_db: tuple[float, ...] | None = json_field(default=None, omit_none=True, none_as=math.inf)
    # mean(x - y) per last-axis channel of conv/FC outputs and its standard error over samples
    # (`stats.channel_means`; the diagnosis tells a bias from noise with them); both or neither
    per_channel_mean_error: tuple[float, ...] | None = json_field(default=None, omit_none=True, none_as=math.nan)
    per_channel_mean_stderr: tuple[float, ...] | None = json_field(default=None, omit_none=True, none_as=math.nan)

    JSON_LENIENT = True  # hand-made metrics (tests, older files) give only some keys: the others read as null

    @property
    def rmse(self) -> float:
        return math.sqrt(self.mse)


def sqnr_db(signal_energy: float, noise_energy: float) -> float:
    if noise_energy == 0.0:
        return math.inf
    if signal_energy == 0.0:
        return -math.inf
    return 10.0 * math.log10(signal_energy / noise_energy)


def _sqnr_db_array(signal: np.ndarray, noise: np.ndarray) -> tuple[float, ...]:
    """`sqnr_db` element-wise (vectorized: conv outputs have up to thousands of channels)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        v = 10.0 * np.log10(signal / noise)
    v = np.where(noise == 0.0, np.inf, np.where(signal == 0.0, -np.inf, v))
    return tuple(v.tolist())


def _saturation_bounds(
    lo: float | np.ndarray | None, hi: float | np.ndarray | None, scale: float | np.ndarray | None
) -> tuple[float | np.ndarray | None, float | np.ndarray | None]:
    """[lo - S/2, hi + S/2]: values outside saturate at qmin/qmax when quantized."""
    if lo is None or hi is None or scale is None:
        return lo, hi
    half = np.asarray(scale, np.float64) / 2
    lo_a, hi_a = np.asarray(lo, np.float64) - half, np.asarray(hi, np.float64) + half
    return (float(lo_a), float(hi_a)) if lo_a.ndim == 0 else (lo_a, hi_a)


class TensorStats:
    """Accumulates Metrics for one tensor pair over many samples.

    scale/lo/hi describe the quantized tensor y (None for a float tensor). For per-channel
    quantization pass arrays of length C and `quant_axis`; they are broadcast along that axis.
    `channel_axis` (e.g. -1 for NHWC conv outputs) turns on per-channel SQNR and mean error in the
    Metrics. `range_axis` (every activation: the last axis, or the quantized dimension) keeps the
    per-channel sums and ranges (`channel_sums`) without putting them in the Metrics;
    `slice_axis` another axis's (a concatenation's, `slices`).
    """

    def __init__(
        self,
        scale: float | np.ndarray | None = None,
        lo: float | np.ndarray | None = None,
        hi: float | np.ndarray | None = None,
        quant_axis: int | None = None,
        channel_axis: int | None = None,
        range_axis: int | None = None,
        slice_axis: int | None = None,
    ) -> None:
        self.scale = scale
        # Representable range (for range use) and saturation thresholds (for clip rate): a value
        # within half a step beyond the range rounds to the end value with ordinary rounding
        # error; only beyond half a step does quantization saturate (clip) it.
        self.range_lo, self.range_hi = lo, hi
        self.lo, self.hi = _saturation_bounds(lo, hi, scale)
        self.quant_axis = quant_axis
        self.channel_axis = channel_axis
        self.range_axis = range_axis
        self.n = 0
        self.sx2 = self.se2 = self.sy2 = self.sxy = self.se = self.se2_over_s2 = 0.0
        self.max_abs = 0.0
        self.clipped = 0
        self.xmin, self.xmax = math.inf, -math.inf
        # Arrays kept together: each group's first is None until the group is set (the others
        # are empty until then).
        self.ch_sx2: np.ndarray | None = None
        self.ch_se2: np.ndarray = EMPTY
        # per channel (`chan_axis`): minimum and maximum of x, count of x that saturates
        self.ch_min: np.ndarray | None = None
        self.ch_max: np.ndarray = EMPTY
        self.ch_clip: np.ndarray = EMPTY
        self.slices: AxisSums | None = AxisSums(slice_axis) if slice_axis is not None else None
        # per-sample channel means of e, summed and squared-summed (mean error per channel and
        # its standard error over samples: `add_channel_means`)
        self.ch_m1: np.ndarray | None = None
        self.ch_m2: np.ndarray = EMPTY
        self.ch_mk = 0

    @property
    def chan_axis(self) -> int | None:
        """The axis of the per-channel sums (`channel_axis`, else `range_axis`)."""
        return self.channel_axis if self.channel_axis is not None else self.range_axis

    def add_channel_ranges(self, xmin: np.ndarray, xmax: np.ndarray, clip: np.ndarray | float | None) -> None:
        """Add one sample's per-channel minimum and maximum of x and clip counts."""
        counts = np.zeros(np.shape(xmin)) if clip is None else np.asarray(clip, np.float64)
        if self.ch_min is None or self.ch_min.shape != np.shape(xmin):
            self.ch_min, self.ch_max = np.asarray(xmin, np.float64).copy(), np.asarray(xmax, np.float64).copy()
            self.ch_clip = counts.copy()
            return
        self.ch_min = np.minimum(self.ch_min, xmin)
        self.ch_max = np.maximum(self.ch_max, xmax)
        self.ch_clip = self.ch_clip + counts

    def channel_sums(self) -> AxisSums | None:
        """The per-channel sums along `chan_axis` (None when not kept or nothing accumulated)."""
        if self.chan_axis is None or self.ch_sx2 is None or self.ch_min is None or self.n == 0:
            return None
        a = AxisSums(self.chan_axis)
        a.add(self.n // self.ch_sx2.size, self.ch_sx2, self.ch_se2, self.ch_min, self.ch_max, self.ch_clip)
        return a

    def add_channel_means(self, m: np.ndarray) -> None:
        """Add one sample's mean of e = x - y per channel."""
        m = np.asarray(m, np.float64)
        if not np.all(np.isfinite(m)):
            return
        if self.ch_m1 is None or self.ch_m1.shape != m.shape:
            self.ch_m1, self.ch_m2, self.ch_mk = np.zeros_like(m), np.zeros_like(m), 0
        self.ch_m1 = self.ch_m1 + m
        self.ch_m2 = self.ch_m2 + m * m
        self.ch_mk += 1

    def _bcast(self, v: float | np.ndarray, ndim: int) -> np.ndarray:
        a = np.asarray(v, np.float64)
        if a.ndim == 0 or self.quant_axis is None:
            return a.reshape(()) if a.size == 1 else a
        shape = [1] * ndim
        shape[self.quant_axis] = a.size
        return a.reshape(shape)

    def update(self, x: np.ndarray, y: np.ndarray) -> None:
        x = np.asarray(x, np.float64)
        y = np.asarray(y, np.float64)
        if x.shape != y.shape:
            raise ValueError(f"shape mismatch: float {x.shape} vs quantized {y.shape}")
        if x.size == 0:
            return
        e = x - y
        e2 = e * e
        self.n += x.size
        self.sx2 += float(np.sum(x * x))
        self.sy2 += float(np.sum(y * y))
        self.sxy += float(np.sum(x * y))
        self.se += float(np.sum(e))
        self.se2 += float(np.sum(e2))
        self.max_abs = max(self.max_abs, float(np.max(np.abs(e))))
        self.xmin = min(self.xmin, float(np.min(x)))
        self.xmax = max(self.xmax, float(np.max(x)))
        if self.scale is not None:
            s = self._bcast(self.scale, x.ndim)
            self.se2_over_s2 += float(np.sum(e2 / (s * s)))
        lo = hi = out = None
        if self.lo is not None and self.hi is not None:
            lo, hi = self._bcast(self.lo, x.ndim), self._bcast(self.hi, x.ndim)
            out = (x < lo) | (x > hi)
            self.clipped += int(np.count_nonzero(out))
        if self.chan_axis is not None and x.ndim:
            axes = tuple(i for i in range(x.ndim) if i != self.chan_axis % x.ndim)
            cx2, ce2 = np.sum(x * x, axis=axes), np.sum(e2, axis=axes)
            if self.ch_sx2 is None:
                self.ch_sx2, self.ch_se2 = cx2, ce2
            else:
                self.ch_sx2 = self.ch_sx2 + cx2
                self.ch_se2 = self.ch_se2 + ce2
            clip = None if out is None else np.sum(out, axis=axes, dtype=np.float64)
            self.add_channel_ranges(np.min(x, axis=axes), np.max(x, axis=axes), clip)
            if self.channel_axis is not None:
                self.add_channel_means(np.mean(e, axis=axes))
        if self.slices is not None:
            self.slices.update(x, y, lo, hi)

    def merge(self, other: TensorStats) -> None:
        """Add another accumulator's sums (e.g. from a worker process)."""
        for k in ("n", "sx2", "se2", "sy2", "sxy", "se", "se2_over_s2", "clipped"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.max_abs = max(self.max_abs, other.max_abs)
        self.xmin, self.xmax = min(self.xmin, other.xmin), max(self.xmax, other.xmax)
        if other.ch_sx2 is not None:
            if self.ch_sx2 is None:
                self.ch_sx2, self.ch_se2 = other.ch_sx2, other.ch_se2
            else:
                self.ch_sx2, self.ch_se2 = self.ch_sx2 + other.ch_sx2, self.ch_se2 + other.ch_se2
        if other.ch_min is not None:
            self.add_channel_ranges(other.ch_min, other.ch_max, other.ch_clip)
        if other.slices is not None:
            if self.slices is None:
                self.slices = AxisSums(other.slices.axis)
            self.slices.merge(other.slices)
        if other.ch_m1 is not None:
            if self.ch_m1 is None:
                self.ch_m1, self.ch_m2, self.ch_mk = other.ch_m1.copy(), other.ch_m2.copy(), other.ch_mk
            else:
                self.ch_m1, self.ch_m2, self.ch_mk = self.ch_m1 + other.ch_m1, self.ch_m2 + other.ch_m2, self.ch_mk + other.ch_mk

    def result(self) -> Metrics:
        n = max(self.n, 1)
        denom = math.sqrt(self.sx2 * self.sy2)
        rng_use = None
        if self.range_lo is not None and self.range_hi is not None and self.n:  # set exactly when lo and hi are
            width = float(np.max(self.range_hi) - np.min(self.range_lo))
            rng_use = (self.xmax - self.xmin) / width if width > 0 else None
        per_ch = None
        if self.ch_sx2 is not None and self.channel_axis is not None:
            per_ch = _sqnr_db_array(np.asarray(self.ch_sx2, np.float64), np.asarray(self.ch_se2, np.float64))
        ch_mean = ch_se = None
        if self.ch_m1 is not None and self.ch_mk:
            k = self.ch_mk
            mean = self.ch_m1 / k
            ch_mean = tuple(mean.tolist())
            if k > 1:
                var = np.maximum(self.ch_m2 / k - mean * mean, 0.0) * k / (k - 1)
                ch_se = tuple(np.sqrt(var / k).tolist())
            else:
                ch_se = (math.nan,) * len(mean)
        return Metrics(
            mse=self.se2 / n,
            sqnr_db=sqnr_db(self.sx2, self.se2),
            max_abs=self.max_abs,
            mean_error=self.se / n,
            cosine=(self.sxy / denom) if denom > 0 else None,
            rmse_over_scale=math.sqrt(self.se2_over_s2 / n) if self.scale is not None else None,
            clip_rate=(self.clipped / n) if self.lo is not None else None,
            range_use=rng_use,
            count=self.n,
            per_channel_sqnr_db=per_ch,
            per_channel_mean_error=ch_mean,
            per_channel_mean_stderr=ch_se,
        )


def compute_metrics(x: np.ndarray, y: np.ndarray, **kwargs: Any) -> Metrics:
    """One-shot Metrics of a single pair (same arguments as TensorStats)."""
    st = TensorStats(**kwargs)
    st.update(x, y)
    return st.result()
