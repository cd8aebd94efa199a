"""Regression metrics of one model output: how far the quantized values are from the float ones.

Over every sample and element of the output (float x, dequantized quantized y, e = y - x):
- mae = mean |e|, rmse = sqrt(mean e^2), max_error = max |e|;
- float_range = max x - min x over all samples; each metric is also given relative to it
  (None when the float output is constant: nothing to be relative to).
Per sample, `sample_errors` gives (mae, rmse) so samples can be ranked by error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from inspector.core.codec.json_record import JsonRecord


@dataclass(frozen=True)
class RegressionMetrics(JsonRecord):
    name: str
    num_values: int  # elements per sample
    mae: float
    rmse: float
    max_error: float
    float_min: float
    float_max: float

    JSON_EXTRA = {"float_range": lambda m: m.float_range, "relative_mae": lambda m: m.relative(m.mae),
                  "relative_rmse": lambda m: m.relative(m.rmse), "relative_max_error": lambda m: m.relative(m.max_error)}  # fmt: skip

    @property
    def float_range(self) -> float:
        return self.float_max - self.float_min

    def relative(self, value: float) -> float | None:
        r = self.float_range
        return value / r if r > 0 and math.isfinite(r) else None

    def summary(self) -> str:
        """One line: the three errors, each with its share of the float range."""

        def rel(v: float) -> str:
            r = self.relative(v)
            return "" if r is None else f" ({100 * r:.2f}% of range)"

        return (f"MAE {self.mae:.4g}{rel(self.mae)}, RMSE {self.rmse:.4g}{rel(self.rmse)}, "
                f"max error {self.max_error:.4g}{rel(self.max_error)}; float range {self.float_range:.4g}")  # fmt: skip


def regression_metrics(float_outputs: Sequence[np.ndarray], quant_outputs: Sequence[np.ndarray], name: str = "") -> RegressionMetrics:
    """MAE, RMSE and max error over every sample and element (float64)."""
    if len(float_outputs) != len(quant_outputs) or not float_outputs:
        raise ValueError(f"{len(float_outputs)} float outputs but {len(quant_outputs)} quantized outputs")
    abs_sum = sq_sum = 0.0
    count = 0
    emax, lo, hi = 0.0, math.inf, -math.inf
    for f, q in zip(float_outputs, quant_outputs, strict=True):
        x = np.asarray(f, np.float64).ravel()
        e = np.asarray(q, np.float64).ravel() - x
        abs_sum += float(np.abs(e).sum())
        sq_sum += float(e @ e)
        count += e.size
        if e.size:
            emax = max(emax, float(np.abs(e).max()))
            lo, hi = min(lo, float(x.min())), max(hi, float(x.max()))
    n = max(count, 1)
    return RegressionMetrics(name, int(np.asarray(float_outputs[0]).size), abs_sum / n, math.sqrt(sq_sum / n), emax,
                             lo if count else 0.0, hi if count else 0.0)  # fmt: skip


def sample_errors(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(mae, rmse) of one sample."""
    e = np.asarray(y, np.float64).ravel() - np.asarray(x, np.float64).ravel()
    if not e.size:
        return 0.0, 0.0
    return float(np.abs(e).mean()), math.sqrt(float(e @ e) / e.size)
