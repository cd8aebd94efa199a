"""The pair check decides which weight tensors disagree by their median step error; counting
the values above the limit settles most tensors without a partition. The verdict must be the
one `np.median` gives, for odd and even sizes and the ambiguous middle (half above, half not)."""

from __future__ import annotations

import numpy as np

from inspector.core.compare.pair_check import DISAGREE_STEPS, _median_above


def test_median_above_is_np_median_where_it_is_above_the_limit():
    rng = np.random.default_rng(0)
    cases = [np.empty(0), np.array([DISAGREE_STEPS]), np.array([1.0, 3.0]), np.array([1.9, 2.2]), np.array([0.0, 5.0]),
             np.array([2.0, 2.0, 2.1, 9.0]), np.array([1.0, 2.5, 2.5, 9.0])]  # fmt: skip
    for n in (1, 2, 3, 4, 5, 10, 11, 1000, 1001):
        for center in (0.5, 1.9, 2.0, 2.1, 4.0):
            cases.append(np.abs(rng.normal(center, 1.0, n)))
            half = np.concatenate([np.full(n // 2, DISAGREE_STEPS - 0.5), np.full(n - n // 2, DISAGREE_STEPS + 0.1)])
            cases.append(rng.permutation(half))
    for e in cases:
        want = float(np.median(e)) if e.size else float("nan")
        got = _median_above(e, DISAGREE_STEPS)
        if want > DISAGREE_STEPS:
            assert got == want, (e, got, want)
        else:
            assert got is None, (e, got, want)
