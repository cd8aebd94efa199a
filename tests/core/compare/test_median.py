"""`compare.median.median` gives `np.median`'s value (the channel-range verdicts and the pair
check read it), and a comparison no longer imports numpy.ma for it."""

import math
import subprocess
import sys

import numpy as np
import pytest

from inspector.core.compare.median import median


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32])
def test_same_value_as_numpy(dtype):
    rng = np.random.default_rng(7)
    for n in [*range(1, 30), 96, 97, 1280]:
        for shape in [(n,), (1, n), (n, 2)]:
            a = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 3)).astype(dtype)
            if dtype != np.int32 and n > 3:
                a.reshape(-1)[: n // 3] = 0.0  # ties, as dead channels give
            assert median(a) == float(np.median(a)), (n, shape, dtype)


def test_nan_and_empty_as_numpy():
    a = np.array([1.0, np.nan, 3.0, np.inf])
    assert math.isnan(median(a)) and math.isnan(float(np.median(a)))
    assert math.isnan(median(np.zeros(0)))
    assert median(np.array([np.inf, 1.0, 2.0])) == float(np.median(np.array([np.inf, 1.0, 2.0])))


def test_channel_figures_do_not_import_numpy_ma():
    code = ("import sys, numpy as np; from inspector.core.compare.inside import ChannelStats; "
            "c = ChannelStats(axis=3, sqnr_db=(30.0, 10.0, 40.0), float_min=(0.0, -1.0, 0.0), float_max=(1.0, 8.0, 2.0), "
            "clip_rate=None, scales=None, range_widths=None); "
            "assert c.range_ratio == 9.0 / 2.0 and c.worst_live() == 1; print('numpy.ma' in sys.modules)")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
