"""What the activation view draws for one layer: float vs dequantized histograms on the
quantization grid, the representable range, the clipped mass, and a downsampled scatter.

Input is a comparison's `KeptValues` (a seeded random subset of element pairs kept per tensor,
see `compare.KEEP_POINTS`) and the layer's `LayerResult` (scale, zero-point, dtype). For a
per-tensor quantized layer the bin edges lie half a step around grid points, grouped by an
integer number of steps, so every dequantized value falls in exactly one bin (no aliasing).
`keep_plan` decides which tensors a comparison keeps values of.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from inspector.core.compare.result import KeptValues, LayerResult
from inspector.core.tflite.dtypes import INT_LIMITS
from inspector.core.tflite.model import Model

MAX_BINS = 120
FLOAT_BINS = 100
SCATTER_POINTS = 2000
KEEP_ALL_ELEMENTS = 8_000_000  # activation elements per sample up to which every layer's values are kept


@dataclass(frozen=True)
class ActivationHistogram:
    edges: np.ndarray  # bin edges (len = bins + 1)
    float_counts: np.ndarray  # float reference values per bin
    quant_counts: np.ndarray  # dequantized values per bin
    rep_lo: float | None  # representable float range of the quantized tensor
    rep_hi: float | None
    clip_lo: float | None  # saturation bounds: beyond them a float value clips (half a step out)
    clip_hi: float | None
    clipped_low: float  # share of kept float values below clip_lo
    clipped_high: float
    steps_per_bin: int | None  # grid steps per bin when bins follow the quantization grid
    used: int  # kept element pairs drawn
    total: int  # elements the comparison saw
    scatter_x: np.ndarray  # float reference (downsampled)
    scatter_y: np.ndarray  # dequantized

    @property
    def clipped(self) -> float:
        return self.clipped_low + self.clipped_high

    @property
    def peaked(self) -> bool:
        """One bin holds over a third of the values (e.g. the zeros after a ReLU): a log count reads better."""
        peak = max(int(self.float_counts.max(initial=0)), int(self.quant_counts.max(initial=0)))
        return self.used > 0 and peak > self.used / 3

    @property
    def centers(self) -> np.ndarray:
        mid: np.ndarray = (self.edges[:-1] + self.edges[1:]) / 2
        return mid


def layer_grid(layer: LayerResult) -> tuple[float, int, int, int] | None:
    """(scale, zero_point, qmin, qmax) of a per-tensor quantized layer output, else None."""
    if layer.scale is None or len(layer.scale) != 1 or layer.dtype not in INT_LIMITS:
        return None
    s = float(layer.scale[0])
    if not s > 0 or not math.isfinite(s):
        return None
    zp = int(layer.zero_point[0]) if layer.zero_point else 0
    qmin, qmax = INT_LIMITS[layer.dtype]
    return s, zp, qmin, qmax


def representable(layer: LayerResult) -> tuple[float, float] | None:
    """Overall representable float range [S(qmin - Z), S(qmax - Z)] (union over channels)."""
    if layer.scale is None or layer.dtype not in INT_LIMITS or not layer.scale:
        return None
    qmin, qmax = INT_LIMITS[layer.dtype]
    s = np.asarray(layer.scale, np.float64)
    z = np.asarray(layer.zero_point or (0,) * len(s), np.float64)
    return float(np.min(s * (qmin - z))), float(np.max(s * (qmax - z)))


def activation_histogram(layer: LayerResult, kept: KeptValues, max_bins: int = MAX_BINS) -> ActivationHistogram:
    x = np.asarray(kept.float_values, np.float64)
    y = np.asarray(kept.quant_values, np.float64)
    finite = np.isfinite(x) & np.isfinite(y)
    x, y = x[finite], y[finite]
    rep = representable(layer)
    grid = layer_grid(layer)
    clip_lo = clip_hi = None
    if rep is not None and layer.scale is not None:  # a representable range implies a scale
        half = float(np.max(layer.scale)) / 2
        clip_lo, clip_hi = rep[0] - half, rep[1] + half
    edges, steps = _edges(x, y, grid, max_bins)
    n = max(x.size, 1)
    low = float(np.count_nonzero(x < clip_lo)) / n if clip_lo is not None else 0.0
    high = float(np.count_nonzero(x > clip_hi)) / n if clip_hi is not None else 0.0
    pick = _downsample(x.size, SCATTER_POINTS)
    return ActivationHistogram(
        edges=edges,
        float_counts=_hist(x, edges),
        quant_counts=_hist(y, edges),
        rep_lo=None if rep is None else rep[0],
        rep_hi=None if rep is None else rep[1],
        clip_lo=clip_lo,
        clip_hi=clip_hi,
        clipped_low=low if x.size else 0.0,
        clipped_high=high if x.size else 0.0,
        steps_per_bin=steps,
        used=int(x.size),
        total=int(kept.total),
        scatter_x=x[pick].astype(np.float32),
        scatter_y=y[pick].astype(np.float32),
    )


def _edges(x: np.ndarray, y: np.ndarray, grid: tuple[float, int, int, int] | None, max_bins: int) -> tuple[np.ndarray, int | None]:
    if x.size == 0:
        return np.linspace(-1.0, 1.0, 2), None
    lo, hi = float(min(x.min(), y.min())), float(max(x.max(), y.max()))
    if grid is not None:
        s, zp, _qmin, _qmax = grid
        qa, qb = math.floor(lo / s + zp + 0.5), math.ceil(hi / s + zp - 0.5)  # grid points covering the data
        qb = max(qb, qa)
        group = max(1, math.ceil((qb - qa + 1) / max_bins))
        nb = math.ceil((qb - qa + 1) / group)
        k = qa + group * np.arange(nb + 1)
        return s * (k - zp - 0.5), group
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    return np.linspace(lo, hi, FLOAT_BINS + 1), None


def _hist(v: np.ndarray, edges: np.ndarray) -> np.ndarray:
    counts, _ = np.histogram(np.clip(v, edges[0], edges[-1]), bins=edges)
    return counts.astype(np.int64)


def _downsample(n: int, m: int) -> np.ndarray:
    if n <= m:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, m).astype(np.int64))


_sizes: dict[int, tuple[object, int]] = {}


def activation_elements(model: Model) -> int:
    """Elements of the non-constant tensors of `model.main` per sample, counted once per
    subgraph (the thread that opens a model counts them: a comparison starts when it arrives)."""
    sg = model.main
    hit = _sizes.get(id(sg))
    if hit is not None and hit[0] is sg:
        return hit[1]
    size = sum(max(t.num_elements, 0) for t in sg.tensors if not t.is_constant)
    if len(_sizes) >= 8:  # A's and B's and a few versions': no growth over a session
        _sizes.clear()
    _sizes[id(sg)] = (sg, size)
    return size


def keep_plan(quant_model: Model, selected: int | None = None, budget: int = KEEP_ALL_ELEMENTS) -> frozenset[int]:
    """Quantized tensors whose values a comparison should keep for the activation view.

    Every tensor of the main subgraph when its activations (non-constant tensors) total at
    most `budget` elements per sample: then any layer can be shown without re-running, at a cost
    of about 30% more comparison time on a MobileNetV2-sized model. Otherwise only the selected
    tensor and the model outputs (another layer's values are collected by a re-run when asked).
    """
    sg = quant_model.main
    size = activation_elements(quant_model)
    if size <= budget:
        return frozenset(range(len(sg.tensors)))
    keep = set(sg.outputs)
    if selected is not None:
        keep.add(selected)
    return frozenset(keep)
