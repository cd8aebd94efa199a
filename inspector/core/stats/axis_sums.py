"""Statistics per index of one axis of a tensor: per channel, or per input slice of a concatenation.

Whole-tensor SQNR is dominated by the largest values, so a part of a tensor on a smaller scale
can be destroyed behind a healthy figure (docs/ARCHITECTURE.md, "How data moves", step 4). Per index of one axis this keeps,
over all samples, the element count and the sums of x^2 and (x - y)^2, the minimum and maximum of
x and the count of x that saturates: memory O(length of the axis) per tensor. `TensorStats` holds
one for its channel axis (filled by the native kernel or the numpy chunks) and, for a
concatenation along another axis, one for that axis (numpy, per sample: concatenations are few).
`group` adds the indices of a slice together, so a concatenation's inputs get the same figures.
"""

from __future__ import annotations

import math

import numpy as np

# What a sum array holds before the first update (read-only: sums are replaced, never added in place).
EMPTY = np.empty(0)
EMPTY.flags.writeable = False


class AxisSums:
    """Per-index sums along `axis` (arrays of the axis length; created on the first update:
    until then `n` is None and the other arrays are empty)."""

    __slots__ = ("axis", "n", "x2", "e2", "xmin", "xmax", "clip")

    def __init__(self, axis: int) -> None:
        self.axis = axis
        self.n: np.ndarray | None = None  # elements per index
        self.x2: np.ndarray = EMPTY
        self.e2: np.ndarray = EMPTY
        self.xmin: np.ndarray = EMPTY
        self.xmax: np.ndarray = EMPTY
        self.clip: np.ndarray = EMPTY

    @property
    def length(self) -> int:
        return 0 if self.n is None else int(self.n.size)

    def add(
        self,
        n: np.ndarray | float,
        x2: np.ndarray,
        e2: np.ndarray,
        xmin: np.ndarray,
        xmax: np.ndarray,
        clip: np.ndarray,
    ) -> None:
        """Add one sample's sums (arrays of the axis length; `n` may be a scalar per index)."""
        x2 = np.asarray(x2, np.float64)
        per = np.broadcast_to(np.asarray(n, np.float64), x2.shape)
        if self.n is None or self.n.shape != x2.shape:
            self.n, self.x2, self.e2 = per.copy(), x2.copy(), np.asarray(e2, np.float64).copy()
            self.xmin, self.xmax = np.asarray(xmin, np.float64).copy(), np.asarray(xmax, np.float64).copy()
            self.clip = np.asarray(clip, np.float64).copy()
            return
        self.n = self.n + per
        self.x2 = self.x2 + x2
        self.e2 = self.e2 + np.asarray(e2, np.float64)
        self.xmin = np.minimum(self.xmin, xmin)
        self.xmax = np.maximum(self.xmax, xmax)
        self.clip = self.clip + np.asarray(clip, np.float64)

    def update(
        self, x: np.ndarray, y: np.ndarray, lo: float | np.ndarray | None = None, hi: float | np.ndarray | None = None
    ) -> None:
        """The definition, in float64: x and y of one sample (y dequantized); lo/hi saturation
        bounds broadcastable to x (None: nothing clips)."""
        x = np.asarray(x, np.float64)
        y = np.asarray(y, np.float64)
        if x.ndim == 0 or x.size == 0:
            return
        ax = self.axis % x.ndim
        axes = tuple(i for i in range(x.ndim) if i != ax)
        e = x - y
        clip = np.zeros(x.shape[ax])
        if lo is not None and hi is not None:
            clip = np.sum((x < lo) | (x > hi), axis=axes, dtype=np.float64)
        x2, e2 = np.sum(x * x, axis=axes), np.sum(e * e, axis=axes)
        self.add(x.size // x.shape[ax], x2, e2, np.min(x, axis=axes), np.max(x, axis=axes), clip)

    def merge(self, other: AxisSums) -> None:
        if other.n is not None:
            self.add(other.n, other.x2, other.e2, other.xmin, other.xmax, other.clip)

    def group(self, bounds: list[tuple[int, int]]) -> AxisSums:
        """Sums over each [start, stop) of `bounds`, as an AxisSums of len(bounds) indices."""
        g = AxisSums(self.axis)
        if self.n is None:
            return g
        g.n = np.array([self.n[a:b].sum() for a, b in bounds])
        g.x2 = np.array([self.x2[a:b].sum() for a, b in bounds])
        g.e2 = np.array([self.e2[a:b].sum() for a, b in bounds])
        g.xmin = np.array([self.xmin[a:b].min() if b > a else math.inf for a, b in bounds])
        g.xmax = np.array([self.xmax[a:b].max() if b > a else -math.inf for a, b in bounds])
        g.clip = np.array([self.clip[a:b].sum() for a, b in bounds])
        return g

    def copy(self) -> AxisSums:
        c = AxisSums(self.axis)
        c.merge(self)
        return c

    def sqnr_db(self) -> np.ndarray:
        """Per index: 10 log10(sum x^2 / sum e^2); +inf where e is 0, -inf where only x is."""
        with np.errstate(divide="ignore", invalid="ignore"):
            v = 10.0 * np.log10(self.x2 / self.e2)
        return np.where(self.e2 == 0.0, np.inf, np.where(self.x2 == 0.0, -np.inf, v))
