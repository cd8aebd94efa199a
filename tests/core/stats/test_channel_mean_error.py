"""Mean error per channel (and its standard error over samples), the figure the diagnosis adds to
the comparison's statistics: every accumulation path (definition, numpy chunks, C kernel per
tensor, C kernel batched per sample) against numpy computed here from the same arrays."""

from __future__ import annotations

import math

import numpy as np
import pytest

from inspector.core.quantmath.quant import representable_range
from inspector.core.stats import native as native_stats
from inspector.core.stats.batch_sums import BatchStats
from inspector.core.stats.metrics import TensorStats
from inspector.core.stats.tensor_sums import Workspace, accumulate
from inspector.core.tflite.model import Quantization

SHAPE = (1, 40, 30, 24)


def _samples(dtype: str, n: int = 5):
    """n samples of x and q with a known offset per channel (q is x + offset, rounded)."""
    rng = np.random.default_rng(3)
    offset = rng.choice([-1.0, 1.0], SHAPE[-1]) * rng.uniform(0.01, 0.06, SHAPE[-1])
    info = np.iinfo(dtype)
    s, z = 0.02, (0 if dtype != "uint8" else 128)
    quant = Quantization((s,), (z,), 3)
    out = []
    for _ in range(n):
        x = rng.normal(0, 1.0, SHAPE).astype(np.float32)
        q = np.clip(np.round((x + offset) / s) + z, info.min, info.max).astype(dtype)
        out.append((x, q))
    return out, quant


def _expected(samples, quant):
    s, z = quant.scales[0], quant.zero_points[0]
    per = np.stack([(x.astype(np.float64) - (q.astype(np.float64) - z) * s).reshape(-1, SHAPE[-1]).mean(axis=0) for x, q in samples])
    return per.mean(axis=0), per.std(axis=0, ddof=1) / math.sqrt(len(per))


def _stats(quant, dtype):
    lo, hi = representable_range(quant, dtype)
    return TensorStats(quant.scales[0], float(lo[0]), float(hi[0]), channel_axis=-1)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16"])
@pytest.mark.parametrize("path", ["definition", "numpy", "native", "batch"])
def test_every_path_gives_the_numpy_channel_means(dtype, path):
    if path in ("native", "batch") and not native_stats.available():
        pytest.skip("no C compiler")
    samples, quant = _samples(dtype)
    st, ws = _stats(quant, dtype), Workspace()
    batch = BatchStats([(st, 0, 1, quant)], ["float32"], [dtype], [int(np.prod(SHAPE))], [SHAPE]) if path == "batch" else None
    for x, q in samples:
        if path == "definition":
            s, z = quant.scales[0], quant.zero_points[0]
            st.update(x, (q.astype(np.float64) - z) * s)
        elif path == "batch":
            batch.add({0: x}, {1: q})
        else:
            accumulate(st, x, q, quant, ws, use_native=path == "native")
    if batch is not None:
        assert batch.native == [0]
        batch.finish()
    m = st.result()
    mean, se = _expected(samples, quant)
    scale = quant.scales[0]
    np.testing.assert_allclose(m.per_channel_mean_error, mean, rtol=0, atol=scale * 1e-5)
    np.testing.assert_allclose(m.per_channel_mean_stderr, se, rtol=1e-3, atol=scale * 1e-5)
    # the planted offsets come back (x - y = -offset up to rounding), far beyond their standard error
    assert np.all(np.abs(np.asarray(m.per_channel_mean_error)) > 3 * np.asarray(m.per_channel_mean_stderr))


def test_one_sample_has_no_standard_error_and_json_round_trips():
    from inspector.core.stats.metrics import Metrics

    samples, quant = _samples("int8", n=1)
    st = _stats(quant, "int8")
    accumulate(st, *samples[0], quant, Workspace())
    m = st.result()
    assert len(m.per_channel_mean_error) == SHAPE[-1] and all(math.isnan(v) for v in m.per_channel_mean_stderr)
    back = Metrics.from_json(m.to_json())
    np.testing.assert_array_equal(back.per_channel_mean_error, m.per_channel_mean_error)
    assert all(math.isnan(v) for v in back.per_channel_mean_stderr)
