"""The per-sample kernel sums in float32 blocks added into float64: every metric must still agree
with the float64 definition (`TensorStats.update`) to 1e-5 relative, on layers up to 60 dB SQNR,
whatever the channel width (flat, odd, narrow, wide rows) and over many blocks."""

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


def _pair(kind: str, shape: tuple[int, ...], sqnr_db: float, seed: int):
    """(x, q, quant): float reference and the quantized model's tensor, at about `sqnr_db`."""
    rng = np.random.default_rng(seed)
    x = (rng.normal(0.3, 1.2, shape) * rng.uniform(0.5, 2.0, shape[-1])).astype(np.float32)
    if kind == "float32":  # a float quantized-model tensor with error at the wanted level
        noise = rng.normal(0, 1, shape) * math.sqrt(np.mean(x.astype(np.float64) ** 2) / 10 ** (sqnr_db / 10))
        return x, (x + noise).astype(np.float32), None
    info = np.iinfo(kind)
    lo, hi = float(np.quantile(x, 0.001)), float(np.quantile(x, 0.999))  # a few clipped values
    s = np.float32((hi - lo) / (info.max - info.min))
    z = int(round(info.min - lo / float(s)))
    quant = Quantization((float(s),), (z,), len(shape) - 1)
    q = np.clip(np.round(x / float(s)) + z, info.min, info.max).astype(kind)
    return x, q, quant


def _stats(quant, dtype):
    if quant is None:
        return TensorStats(channel_axis=-1)
    lo, hi = representable_range(quant, dtype)
    return TensorStats(quant.scales[0], float(lo[0]), float(hi[0]), channel_axis=-1)


CASES = [  # (kind, shape, SQNR dB)
    ("float32", (1, 1 << 20), 60.0),  # flat, 256 blocks
    ("float32", (1, 56, 56, 96), 60.0),
    ("float32", (1, 28, 28, 7), 40.0),  # odd width: rows taken k at a time plus a remainder
    ("float32", (1, 2000, 1280), 20.0),  # wide rows
    ("float32", (3, 5000), 60.0),  # rows wider than a block
    ("int8", (1, 112, 112, 16), 0),
    ("int8", (1, 33, 1001), 0),
    ("uint8", (1, 14, 14, 1280), 0),
]


@pytest.mark.parametrize("kind,shape,sqnr", CASES)
def test_float32_blocks_agree_with_the_float64_definition(kind, shape, sqnr):
    cases = [_pair(kind, shape, sqnr, seed) for seed in range(3)]
    quant = cases[0][2]
    dtype = kind if quant is not None else "float32"
    st, ref = _stats(quant, dtype), _stats(quant, dtype)
    batch = BatchStats([(st, 1, 2, quant)], ["float32"], [dtype], [cases[0][0].size], [shape])
    assert batch.native == [0]  # the float32-block kernel, not a fallback
    for x, q, _ in cases:
        if quant is not None:  # each sample at its own scale would be another layer: keep one
            q = np.clip(np.round(x / quant.scales[0]) + quant.zero_points[0], *representable_int(dtype)).astype(dtype)
        batch.add({1: x}, {2: q})
        ref.update(x, dequantize(q, quant) if quant is not None else q)
    batch.finish()
    ra, rb = st.result(), ref.result()
    if kind == "float32":
        assert rb.sqnr_db == pytest.approx(sqnr, abs=0.5)
    else:
        assert rb.clip_rate > 0 and rb.sqnr_db > 30
    for k in (*METRIC_KEYS, "count"):
        va, vb = getattr(ra, k), getattr(rb, k)
        if va is None or vb is None or (isinstance(vb, float) and math.isinf(vb)):
            assert va == vb, k
        elif k == "mean_error":  # a difference of two sums: judged against the error's size
            assert abs(va - vb) <= REL * math.sqrt(rb.mse), (k, va, vb)
        else:
            assert va == pytest.approx(vb, rel=REL), (k, va, vb)
    np.testing.assert_allclose(ra.per_channel_sqnr_db, rb.per_channel_sqnr_db, rtol=REL)


def representable_int(dtype: str) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def test_clip_bounds_rounded_outward_count_like_float64():
    # x at the float32 neighbours of clip bounds that float32 cannot represent
    quant = Quantization((0.1,), (0,), 0)
    ref = _stats(quant, "int8")
    assert float(np.float32(ref.lo)) != ref.lo and float(np.float32(ref.hi)) != ref.hi
    vals = []
    for bound in (ref.lo, ref.hi):
        edge = np.float32(bound)
        vals += [np.nextafter(edge, np.float32(-np.inf)), edge, np.nextafter(edge, np.float32(np.inf))]
    x = np.array((vals + [0.0]) * 1024, np.float32)
    q = np.clip(np.round(x / 0.1), -128, 127).astype(np.int8)
    st = _stats(quant, "int8")
    b = BatchStats([(st, 1, 2, quant)], ["float32"], ["int8"], [x.size], [x.shape])
    b.add({1: x}, {2: q})
    b.finish()
    ref.update(x, dequantize(q, quant))
    assert ref.clipped == 3 * 1024  # two below lo, one above hi (or the mirror), per repeat
    assert st.clipped == ref.clipped
