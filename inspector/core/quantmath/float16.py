"""Float16 storage of float32 weights: rounding error in float16 ulps, overflow, flush to zero, NaN.

The float16 post-training mode (`target_spec.supported_types = [tf.float16]`) stores each float32
constant rounded to the nearest float16 and dequantizes it back (DEQUANTIZE) at load. So a true
twin's stored value is within half an ulp of the float16 grid at A's value; a weight of another
training is hundreds of ulps away (one unit of relative error is 1024 ulps). Beyond 65504 the
value becomes inf (a numpy cast) or is saturated to ±65504 (TF's converter does this, silently);
below half the smallest subnormal (2^-25) it becomes zero, and subnormals
(|x| < 2^-14) keep few significant bits and are flushed to zero by some accelerators.

The ulp of a value is the spacing of the float16 grid at A's value rounded to float16 (one figure
for errors up and down a binade boundary; rounding alone gives at most 0.5).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from inspector.core.codec.json_record import JsonRecord

FLOAT16_MAX = 65504.0  # largest finite float16; larger float32 values become inf
FLOAT16_MIN_NORMAL = 2.0**-14  # below this a float16 is subnormal (fewer significant bits)
FLOAT16_TINY = 2.0**-24  # smallest subnormal: values below half of it round to zero


def ulp_at(a: np.ndarray) -> np.ndarray:
    """Spacing of the float16 grid at each value of `a` (float64; NaN where `a` overflows float16)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.spacing(np.abs(np.asarray(a, np.float64)).astype(np.float16)).astype(np.float64)


def overflows(a: np.ndarray) -> np.ndarray:
    """Finite values that become inf in float16 (|a| >= 65520: up to that they round to 65504)."""
    a64 = np.asarray(a, np.float64)
    with np.errstate(over="ignore"):
        return np.isfinite(a64) & np.isinf(a64.astype(np.float16))


def ulp_errors(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|B - A| in float16 ulps at A's value (NaN where A overflows float16 or either side is not finite)."""
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    with np.errstate(invalid="ignore"):
        ulps: np.ndarray = np.abs(b64 - a64) / ulp_at(a64)
    return ulps


@dataclass(frozen=True)
class Float16Error(JsonRecord):
    """Float16 rounding figures of B's float16 weights against A's float32 ones (or of B alone:
    then the ulp and relative figures are None and `flushed` counts B's zeros from nothing)."""

    elements: int
    max_ulp: float | None  # over elements where both sides are finite
    mean_ulp: float | None
    within_half_ulp: float | None  # share of elements rounded to nearest (<= 0.5 ulp + 1e-9)
    max_relative: float | None  # |B - A| / |A| over A != 0
    overflow: int  # A beyond the float16 range (inf or saturated in B), or inf / ±65504 stored in B alone
    flushed: int  # A nonzero and B zero
    subnormal: int  # B nonzero and subnormal (|B| < 2^-14): flushed to zero by some hardware
    nan: int  # NaN in B
    saturated: int = 0  # of `overflow`: stored as ±65504 (TF's converter saturates) rather than inf


class Float16Accumulator:
    """`Float16Error` over chunks of (A, B) values (the weight view reads large tensors in chunks)."""

    def __init__(self) -> None:
        self.n = self.n_fin = self.half = self.overflow = self.flushed = self.subnormal = self.nan = self.sat = 0
        self.max_ulp = self.sum_ulp = self.max_rel = 0.0
        self.n_rel = 0

    def update(self, a: np.ndarray | None, b: np.ndarray) -> None:
        b = np.asarray(b, np.float64).ravel()
        self.n += b.size
        self.nan += int(np.count_nonzero(np.isnan(b)))
        self.subnormal += int(np.count_nonzero((b != 0) & (np.abs(b) < FLOAT16_MIN_NORMAL)))
        at_limit = np.abs(b) == FLOAT16_MAX
        if a is None:  # inf, or the largest float16 (a saturated overflow, almost surely)
            self.overflow += int(np.count_nonzero(np.isinf(b) | at_limit))
            self.sat += int(np.count_nonzero(at_limit))
            return
        a = np.asarray(a, np.float64).ravel()
        over = overflows(a)
        self.overflow += int(np.count_nonzero(over | (np.isinf(b) & np.isfinite(a))))
        self.sat += int(np.count_nonzero(over & at_limit))
        self.flushed += int(np.count_nonzero((a != 0) & np.isfinite(a) & (b == 0)))
        u = ulp_errors(a, b)
        fin = u[np.isfinite(u)]
        if fin.size:
            self.n_fin += fin.size
            self.max_ulp = max(self.max_ulp, float(fin.max()))
            self.sum_ulp += float(fin.sum())
            self.half += int(np.count_nonzero(fin <= 0.5 + 1e-9))
        nz = (a != 0) & np.isfinite(a) & np.isfinite(b)
        if np.any(nz):
            self.n_rel += int(np.count_nonzero(nz))
            self.max_rel = max(self.max_rel, float(np.max(np.abs(b[nz] - a[nz]) / np.abs(a[nz]))))

    def result(self) -> Float16Error:
        fin = self.n_fin > 0
        return Float16Error(
            elements=self.n,
            max_ulp=self.max_ulp if fin else None,
            mean_ulp=self.sum_ulp / self.n_fin if fin else None,
            within_half_ulp=self.half / self.n_fin if fin else None,
            max_relative=self.max_rel if self.n_rel else None,
            overflow=self.overflow,
            flushed=self.flushed,
            subnormal=self.subnormal,
            nan=self.nan,
            saturated=self.sat,
        )


def float16_error(a: np.ndarray | None, b: np.ndarray) -> Float16Error:
    """Figures of B's float16 values against A's float32 ones (A None: B's own storage figures)."""
    acc = Float16Accumulator()
    acc.update(a, b)
    return acc.result()
