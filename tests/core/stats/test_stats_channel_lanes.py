"""The per-channel kernel keeps its sums in vector lanes that each stay on one channel: super-rows
of k rows for narrow widths, column blocks of row tiles for wide ones, a scalar loop for the
channels no vector covers. Whatever the width and row count, every metric, the clip count, the
per-channel SQNR and the per-channel mean error must agree with the float64 definition
(`TensorStats.update`); a lane summed into the wrong channel shows in the per-channel values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from inspector.core.quantmath.quant import dequantize, representable_range
from inspector.core.stats import native as native_stats
from inspector.core.stats.batch_sums import BatchStats
from inspector.core.stats.metrics import METRIC_KEYS, TensorStats
from inspector.core.tflite.model import Quantization

pytestmark = pytest.mark.skipif(not native_stats.available(), reason="no C compiler: numpy path only")
REL = 1e-5

# widths: 1 lane-multiple of every vector size, narrow (super-rows), odd (super-rows of 16 rows or
# column blocks plus scalar channels), wide; rows: fewer than a tile, not a multiple of k or T
WIDTHS = (1, 3, 7, 8, 16, 24, 40, 48, 64, 100, 144, 1000, 1280, 2500)
ROWS = (1, 5, 37, 333)


def _sample(kind: str, rows: int, w: int, seed: int, quant: Quantization | None):
    rng = np.random.default_rng(seed)
    # channels with their own bias and spread, so a channel mix-up changes the per-channel values
    x = (rng.normal(0.2, 1.0, (rows, w)) * np.linspace(0.5, 3.0, w) + np.linspace(-1, 1, w)).astype(np.float32)
    if quant is None:
        noise = rng.normal(0, 1e-2, (rows, w)) * np.linspace(1, 5, w) + np.linspace(0, 1e-2, w)
        return x, (x + noise).astype(np.float32)
    info = np.iinfo(kind)
    q = np.clip(np.round(x / quant.scales[0]) + quant.zero_points[0] + rng.integers(-1, 2, x.shape), info.min, info.max)
    return x, q.astype(kind)


@pytest.mark.parametrize("kind", ["int8", "uint8", "float32"])
@pytest.mark.parametrize("w", WIDTHS)
def test_channel_lanes_agree_with_the_float64_definition(kind, w):
    quant = None
    if kind != "float32":  # a range narrower than x's: some values clip
        info = np.iinfo(kind)
        s = np.float32(6.0 / (info.max - info.min))
        quant = Quantization((float(s),), (int(round(info.min + 3.0 / float(s))),), 1)
    for rows in ROWS:
        if rows * w > 400_000:
            continue
        if quant is None:
            st, ref = TensorStats(channel_axis=-1), TensorStats(channel_axis=-1)
        else:
            lo, hi = representable_range(quant, kind)
            st = TensorStats(quant.scales[0], float(lo[0]), float(hi[0]), channel_axis=-1)
            ref = TensorStats(quant.scales[0], float(lo[0]), float(hi[0]), channel_axis=-1)
        batch = BatchStats([(st, 1, 2, quant)], ["float32"], [kind], [rows * w], [(rows, w)])
        assert batch.native == [0]
        for seed in range(3):
            x, q = _sample(kind, rows, w, seed, quant)
            batch.add({1: x}, {2: q})
            ref.update(x, dequantize(q, quant) if quant is not None else q)
        batch.finish()
        ra, rb = st.result(), ref.result()
        assert st.clipped == ref.clipped, (rows, w)
        if quant is not None and rows * w >= 1000:
            assert ref.clipped > 0  # the clip count is exercised
        for k in (*METRIC_KEYS, "count"):
            va, vb = getattr(ra, k), getattr(rb, k)
            if va is None or vb is None or (isinstance(vb, float) and math.isinf(vb)):
                assert va == vb, (k, rows, w)
            elif k == "mean_error":
                assert abs(va - vb) <= REL * math.sqrt(rb.mse), (k, rows, w, va, vb)
            else:
                assert va == pytest.approx(vb, rel=REL), (k, rows, w, va, vb)
        np.testing.assert_allclose(ra.per_channel_sqnr_db, rb.per_channel_sqnr_db, rtol=REL, err_msg=f"{rows}x{w}")
        tol = REL * math.sqrt(rb.mse) + 1e-12
        np.testing.assert_allclose(ra.per_channel_mean_error, rb.per_channel_mean_error, rtol=0, atol=tol, err_msg=f"{rows}x{w}")
