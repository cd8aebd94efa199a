"""Issue 27 §12: the ticks of "Zoom to grid" sit on the quantization grid r = S·(q − Z)."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.viewdata.grid_ticks import MAX_MINOR, MAX_STEPS, grid_ticks

CASES = [  # x0, x1, S, Z, max ticks
    (-0.031, 0.0305, 0.00392, 0, 9),
    (-8 * 0.0123, 8 * 0.0123, 0.0123, 0, 9),
    (0.1, 0.9, 1 / 255, -128, 7),
    (-2.5e-5, 3.1e-5, 1.7e-6, 3, 5),
    (-1.0, 1.0, 0.013, 0, 12),
    (-0.4, 0.37, 0.0029, 11, 4),
]


@pytest.mark.parametrize(("x0", "x1", "s", "z", "most"), CASES)
def test_ticks_are_grid_levels_not_crowded_and_cover_the_range(x0, x1, s, z, most):
    t = grid_ticks(x0, x1, s, z, most, max_steps=1e9)
    assert t is not None
    values = np.array([v for v, _ in t.major])
    q = values / s + z
    assert np.all(np.abs(q - np.round(q)) < 1e-6), q  # every tick a level of the grid
    assert np.array_equal(np.round(q).astype(int), t.levels) and all(level % t.stride == 0 for level in t.levels)
    assert 2 <= len(values) <= most
    assert values[0] >= x0 - 1e-12 and values[-1] <= x1 + 1e-12
    assert values[0] - x0 < t.stride * s + 1e-12 and x1 - values[-1] < t.stride * s + 1e-12  # nothing left out
    assert np.allclose(np.diff(values), t.stride * s)
    every = np.arange(np.ceil(x0 / s + z - 1e-9), np.floor(x1 / s + z + 1e-9) + 1)
    assert (t.minor == () if t.stride == 1 or len(every) > MAX_MINOR else np.allclose(t.minor, (every - z) * s))
    labels = [lab for _, lab in t.major]
    assert len(set(labels)) == len(labels)  # neighbours read differently
    assert np.allclose([float(lab) for lab in labels], values, atol=0.06 * t.stride * s)


def test_the_smallest_stride_that_fits():
    t = grid_ticks(-8.0, 8.0, 1.0, 0, 9)  # 17 levels: every 2nd is 9 ticks
    assert t is not None and t.stride == 2 and [v for v, _ in t.major] == list(range(-8, 9, 2))
    t = grid_ticks(-4.0, 4.0, 1.0, 0, 9)
    assert t is not None and t.stride == 1 and len(t.major) == 9


def test_no_grid_ticks_over_a_wide_range_or_without_a_step():
    assert grid_ticks(-1.0, 1.0, 2.0 / (MAX_STEPS + 10), 0) is None
    assert grid_ticks(-1.0, 1.0, 0.0, 0) is None and grid_ticks(1.0, 1.0, 0.1, 0) is None
    with pytest.raises(ValueError, match="max_ticks"):
        grid_ticks(-1.0, 1.0, 0.1, 0, 1)
