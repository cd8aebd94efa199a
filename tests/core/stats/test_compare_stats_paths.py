"""The three ways of accumulating statistics agree with the TensorStats.update definition:
the numpy chunk path (fast_stats), the C kernel per tensor, and the C kernel batched per sample."""

from __future__ import annotations

import math

import numpy as np
import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.quantmath.quant import dequantize, representable_range
from inspector.core.samples.settings import SampleSettings
from inspector.core.stats import native as native_stats
from inspector.core.stats.batch_sums import BatchStats
from inspector.core.stats.metrics import METRIC_KEYS, TensorStats
from inspector.core.stats.tensor_sums import Workspace, accumulate
from inspector.core.tflite.model import Quantization

native = pytest.mark.skipif(not native_stats.available(), reason="no C compiler: numpy path only")


def _case(dtype: str, per_channel: bool, seed: int = 0, shape=(2, 9, 7, 24)):
    rng = np.random.default_rng(seed)
    x = (rng.normal(0, 1.5, shape)).astype(np.float32)
    if dtype == "float32":
        return x, (x + rng.normal(0, 0.01, shape)).astype(np.float32), None
    info = np.iinfo(dtype)
    c = shape[-1]
    scales = tuple(float(v) for v in rng.uniform(0.005, 0.03, c if per_channel else 1))
    zps = tuple(int(v) for v in rng.integers(-3, 4, c if per_channel else 1)) if dtype != "uint8" else (128,) * len(scales)
    quant = Quantization(scales, zps, len(shape) - 1)
    s = np.asarray(scales).reshape(-1 if per_channel else 1)
    q = np.clip(np.round(x / s) + np.asarray(zps), info.min, info.max).astype(dtype)
    return x, q, quant


def _stats(quant, dtype, channel=True):
    if quant is None:
        return TensorStats(channel_axis=-1 if channel else None)
    lo, hi = representable_range(quant, dtype)
    if quant.per_channel:
        return TensorStats(np.asarray(quant.scales), lo, hi, quant_axis=quant.quantized_dimension, channel_axis=-1)
    return TensorStats(quant.scales[0], float(lo[0]), float(hi[0]), channel_axis=-1 if channel else None)


def _agree(a, b, rel):
    ra, rb = a.result(), b.result()
    for k in (*METRIC_KEYS, "count"):
        va, vb = getattr(ra, k), getattr(rb, k)
        if va is None or vb is None or math.isinf(vb):
            assert va == vb, k
        elif k == "mean_error":
            assert abs(va - vb) <= rel * math.sqrt(rb.mse) + 1e-15, (k, va, vb)
        else:
            assert va == pytest.approx(vb, rel=rel, abs=1e-15), k
    if rb.per_channel_sqnr_db is not None:
        np.testing.assert_allclose(ra.per_channel_sqnr_db, rb.per_channel_sqnr_db, rtol=rel)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "float32"])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("use_native", [False, pytest.param(True, marks=native)])
def test_fast_paths_match_the_definition(dtype, per_channel, use_native):
    if per_channel and dtype == "float32":
        pytest.skip("float tensors have no channels")
    ref, fast, ws = None, None, Workspace()
    saturated = 0  # independent: elements of x beyond half a step outside the representable range
    for seed in range(3):  # several samples
        x, q, quant = _case(dtype, per_channel, seed)
        if ref is None:
            ref, fast, first = _stats(quant, dtype), _stats(quant, dtype), quant  # thresholds of the first
        ref.update(x, dequantize(q, quant) if quant is not None else q)
        accumulate(fast, x, q, quant, ws, use_native=use_native)
        if quant is not None:
            info = np.iinfo(dtype)
            sc, zp = np.asarray(first.scales, np.float64), np.asarray(first.zero_points, np.float64)
            lo, hi = sc * (info.min - zp - 0.5), sc * (info.max - zp + 0.5)
            saturated += int(np.count_nonzero((x < lo) | (x > hi)))
    # per-channel quantized tensors always take the numpy (float32 chunk) path
    _agree(fast, ref, 1e-9 if use_native and not per_channel else 1e-5)
    if quant is None:
        assert ref.result().clip_rate is None and fast.result().clip_rate is None
    else:
        assert ref.clipped == fast.clipped == saturated
        assert ref.result().clip_rate == saturated / ref.n


@native
def test_batch_matches_the_definition_and_handles_nan():
    cases = [_case(dt, False, seed=i, shape=shape) for i, (dt, shape) in
             enumerate([("int8", (1, 16, 16, 8)), ("uint8", (1, 33)), ("int16", (4, 5, 6)), ("float32", (1, 10))])]
    jobs = [(_stats(quant, x.dtype.name if quant is None else q.dtype.name), 10 + i, 20 + i, quant)
            for i, (x, q, quant) in enumerate(cases)]
    refs = [_stats(quant, q.dtype.name) for x, q, quant in cases]
    batch = BatchStats(jobs, ["float32"] * 4, [q.dtype.name for _, q, _ in cases],
                       [x.size for x, _, _ in cases], [x.shape for x, _, _ in cases])
    assert len(batch.native) == 4 and not batch.other
    for sample in range(3):
        xv, qv = {}, {}
        for i, (x, q, quant) in enumerate(cases):
            xs = (x * (1 + 0.1 * sample)).astype(np.float32)
            if sample == 2 and i == 0:
                xs.reshape(-1)[5] = np.nan  # a NaN in one pair of one sample
            xv[10 + i], qv[20 + i] = xs, q
            refs[i].update(xs, dequantize(q, quant) if quant is not None else q)
        batch.add(xv, qv)
    batch.finish()
    for (st, *_), ref in zip(jobs[1:], refs[1:], strict=True):
        _agree(st, ref, 1e-5)  # float32 blocks summed in float64 (native_source)
    assert math.isnan(jobs[0][0].result().mse) and math.isnan(refs[0].result().mse)


def test_numpy_path_gives_the_same_comparison(fixture_path, monkeypatch):
    f, q = str(fixture_path("float")), str(fixture_path("int8"))
    a = compare_models(f, q, CompareOptions(samples=SampleSettings(count=2), runtime="reference"))
    monkeypatch.setattr(native_stats, "_lib", None)
    monkeypatch.setattr(native_stats, "_tried", True)
    assert not native_stats.available()
    b = compare_models(f, q, CompareOptions(samples=SampleSettings(count=2), runtime="reference"))
    for la, lb in zip(a.layers, b.layers, strict=True):
        ma, mb = la.metrics, lb.metrics
        if math.isinf(ma.sqnr_db):
            assert math.isinf(mb.sqnr_db)
            continue
        assert mb.mse == pytest.approx(ma.mse, rel=1e-5)
        assert mb.clip_rate == ma.clip_rate and mb.max_abs == pytest.approx(ma.max_abs, rel=1e-5)


@native
def test_batch_reads_each_sample_through_reused_or_new_arrays():
    """The runners hand out the same views refilled each sample, two interpreter sets in turn (the
    batch then reuses their data addresses); new arrays, also ones made where freed ones were, are
    read at their own address."""
    x0, q0, quant = _case("int8", False, seed=0, shape=(1, 8, 8, 4))
    st, ref = _stats(quant, "int8"), _stats(quant, "int8")
    batch = BatchStats([(st, 1, 2, quant)], ["float32"], ["int8"], [x0.size], [x0.shape])
    sets = [(x0.copy(), q0.copy()), (x0.copy(), q0.copy())]  # two interpreter sets' "views", refilled in turn
    for seed in range(4):
        x, q, _ = _case("int8", False, seed=seed, shape=(1, 8, 8, 4))
        xbuf, qbuf = sets[seed % 2]
        xbuf[...], qbuf[...] = x, q
        batch.add({1: xbuf}, {2: qbuf})
        ref.update(x, dequantize(q, quant))
    assert len(batch._known) == 2  # both sets' addresses kept
    for seed in range(3, 6):  # new arrays each sample, the last ones freed before
        x, q, _ = _case("int8", False, seed=seed, shape=(1, 8, 8, 4))
        batch.add({1: x.copy()}, {2: q.copy()})
        ref.update(x, dequantize(q, quant))
    batch.finish()
    _agree(st, ref, 1e-5)
    assert st.n == 7 * x0.size
