"""The median of an array as `np.median` computes it, without `np.median`'s masked-array check.

`np.median` ends by asking whether its input is a masked array (`np.ma`), and its first call in a
process imports `numpy.ma` for that: 45-90 ms (numpy.ma's import inspects signatures, compiling
regular expressions) on the critical path of every comparison's worker (channel ranges, the
imbalance verdicts) and of the command's pair check. The value here is the same, by the same
steps: the flattened values partitioned around the middle, the mean of the middle one or two
(`np.mean`, as `np.median` takes it), NaN when any value is NaN.
"""

from __future__ import annotations

import math

import numpy as np


def median(values: np.ndarray) -> float:
    """`float(np.median(values))` (NaN for an empty array, as `np.median` returns with a warning)."""
    v = np.asarray(values).reshape(-1)
    n = v.size
    if n == 0 or np.isnan(v).any():
        return math.nan
    h = n // 2
    if n % 2:
        return float(np.mean(np.partition(v, h)[h : h + 1]))
    return float(np.mean(np.partition(v, [h - 1, h])[h - 1 : h + 1]))
