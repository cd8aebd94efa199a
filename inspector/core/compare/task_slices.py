"""Regression figures per input slice of a concatenated model output (issue 25): a detector head
concatenates pixel boxes with scores, and the output's MAE / RMSE over all of it hide that B's
scores are gone. Per slice along the concatenation's axis, over every sample: MAE, RMSE, the float
and quantized ranges; a slice B collapses (constant where A varies) is a warning.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from inspector.core.codec.json_record import JsonRecord, json_field
from inspector.core.compare.inside import BELOW_DB, SliceStats


@dataclass(frozen=True)
class SliceRegression(JsonRecord):
    start: int
    stop: int
    source: str  # "op 11 LOGISTIC" (the input's producer) or "input 1"
    mae: float
    rmse: float
    float_min: float
    float_max: float
    quant_min: float
    quant_max: float
    sqnr_db: float = math.nan  # the comparison's figures of the slice, and of the whole output
    steps_used: float | None = None
    output_sqnr_db: float = json_field(default=math.nan, skip=True)

    JSON_EXTRA = {"collapsed": lambda s: s.collapsed}
    JSON_KEYS = ("start", "stop", "source", "mae", "rmse", "float_min", "float_max", "quant_min", "quant_max", "collapsed",
                 "sqnr_db", "steps_used")  # fmt: skip

    @property
    def far_below(self) -> bool:
        """The slice reads >= 20 dB below the whole output (`inside.BELOW_DB`)."""
        return self.output_sqnr_db - self.sqnr_db >= BELOW_DB

    @property
    def collapsed(self) -> bool:
        """B's values are constant where A's vary."""
        return self.quant_max == self.quant_min and self.float_max > self.float_min

    def line(self) -> str:
        rng = self.float_max - self.float_min
        rel = f" ({100 * self.rmse / rng:.1f}% of its range)" if rng > 0 else ""
        line = f"slice {self.start}:{self.stop} ({self.source}): MAE {self.mae:.4g}, RMSE {self.rmse:.4g}{rel}"
        if self.far_below:
            steps = "" if self.steps_used is None else f", {self.steps_used:.1f} steps used"
            line += f"; SQNR {self.sqnr_db:.1f} dB{steps} where the whole output reads {self.output_sqnr_db:.1f} dB"
        return line

    def warning(self) -> str:
        return (f"slice {self.start}:{self.stop} ({self.source}) is constant in B ({self.quant_min:.4g}) where A varies "
                f"{self.float_min:.4g}..{self.float_max:.4g}: B collapses it")


def slice_regression(float_outputs: Sequence[np.ndarray], quant_outputs: Sequence[np.ndarray],
                     slices: Sequence[SliceStats], output_sqnr_db: float = math.nan) -> tuple[SliceRegression, ...]:
    """Per slice (along each slice's `axis`) over every sample; () when the shapes do not fit."""
    out = []
    for s in slices:
        ab = asum = 0.0
        n = 0
        fmin = qmin = math.inf
        fmax = qmax = -math.inf
        for f, q in zip(float_outputs, quant_outputs, strict=True):
            x, y = np.asarray(f, np.float64), np.asarray(q, np.float64)
            if x.ndim == 0 or not 0 <= s.axis < x.ndim or x.shape[s.axis] < s.stop or x.shape != y.shape:
                return ()
            xs = np.take(x, range(s.start, s.stop), axis=s.axis)
            ys = np.take(y, range(s.start, s.stop), axis=s.axis)
            e = ys - xs
            ab += float(np.abs(e).sum())
            asum += float((e * e).sum())
            n += e.size
            fmin, fmax = min(fmin, float(xs.min())), max(fmax, float(xs.max()))
            qmin, qmax = min(qmin, float(ys.min())), max(qmax, float(ys.max()))
        if not n:
            return ()
        src = f"op {s.producer_op} {s.producer_type}" if s.producer_op is not None else f"input {s.input}"
        out.append(SliceRegression(s.start, s.stop, src, ab / n, math.sqrt(asum / n), fmin, fmax, qmin, qmax,
                                   s.sqnr_db, s.steps_used, output_sqnr_db))
    return tuple(out)
