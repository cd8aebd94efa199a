"""inspector.core.compare.weights against independent numpy computations on converter-built models."""

from __future__ import annotations

import math

import numpy as np
import pytest

from inspector.core.compare import weights as W
from inspector.core.compare.pairing import pair_models
from inspector.core.tflite.model import Model, Quantization
from tests.helpers.reference import sqnr_db as _sqnr


def _deq(values: np.ndarray, q: Quantization) -> np.ndarray:
    """Independent dequantization: loop over channels along the quantized dimension."""
    out = np.empty(values.shape, np.float64)
    if len(q.scales) == 1:
        return (values.astype(np.float64) - q.zero_points[0]) * q.scales[0]
    for c, (s, z) in enumerate(zip(q.scales, q.zero_points, strict=True)):
        idx = [slice(None)] * values.ndim
        idx[q.quantized_dimension] = c
        out[tuple(idx)] = (values[tuple(idx)].astype(np.float64) - z) * s
    return out


def _pair(float_path, quant_path, name: str):
    mf, mq = Model(float_path), Model(quant_path)
    tq = mq.main.tensor_by_name(name)
    fi = pair_models(mf, mq).float_for_quant(tq.index)
    return mf, mf.main.tensors[fi], mq, tq


@pytest.fixture(scope="module")
def int8_models(fixture_path):
    return fixture_path("float"), fixture_path("int8")


@pytest.mark.parametrize(
    "name, axis", [("cnn_1/conv1_1/convolution", 0), ("cnn_1/dw1_1/depthwise", 3), ("cnn_1/fc1_1/MatMul", 0)]
)
def test_per_channel_weights_match_numpy(int8_models, name, axis):
    mf, tf, mq, tq = _pair(*int8_models, name)
    q = tq.quantization
    assert q.per_channel and q.quantized_dimension == axis
    w = W.analyze_tensors(mf, tf, mq, tq)
    x = mf.tensor_data(tf).astype(np.float64)
    y = _deq(mq.tensor_data(tq), q)
    np.testing.assert_array_equal(W.float_values(w.b), y)
    np.testing.assert_array_equal(w.a_counts, np.histogram(x, bins=w.edges)[0])
    np.testing.assert_array_equal(w.b_counts, np.histogram(y, bins=w.edges)[0])
    assert w.a_counts.sum() == w.b_counts.sum() == x.size == w.used_elements == w.total_elements
    assert w.metrics.sqnr_db == pytest.approx(_sqnr(x, y), rel=1e-9)
    assert 30 < w.metrics.sqnr_db < 70  # 8-bit weights: about 6 dB per bit
    assert w.metrics.max_abs == pytest.approx(np.max(np.abs(x - y)), rel=1e-12)
    xs, ys = np.moveaxis(x, axis, 0), np.moveaxis(y, axis, 0)
    per = [_sqnr(xs[c], ys[c]) for c in range(q.num_channels)]
    np.testing.assert_allclose(w.per_channel_sqnr_db, per, rtol=1e-9)
    np.testing.assert_allclose(w.per_channel_max_abs, [np.max(np.abs(xs[c] - ys[c])) for c in range(q.num_channels)])
    s = np.asarray(q.scales)
    np.testing.assert_allclose(w.channel_lo, -128 * s)
    np.testing.assert_allclose(w.channel_hi, 127 * s)
    assert (w.clip_lo, w.clip_hi) == pytest.approx((-128 * s.max(), 127 * s.max()))
    # Rounding error of symmetric int8 weights is at most half a step (no clipping in weights).
    assert np.all(w.per_channel_max_abs <= 0.5 * s * (1 + 1e-6))


def test_per_tensor_bins_are_aligned_to_the_grid(fixture_path):
    mf, tf, mq, tq = _pair(fixture_path("float"), fixture_path("int8_per_tensor"), "cnn_1/conv2_1/convolution")
    w = W.analyze_tensors(mf, tf, mq, tq)
    s = tq.quantization.scales[0]
    assert not tq.quantization.per_channel and w.grid_step == s and w.bins_per_step == 5
    np.testing.assert_allclose(np.diff(w.edges), s / 5, rtol=1e-9)
    y = _deq(mq.tensor_data(tq), tq.quantization).ravel()
    bins = np.searchsorted(w.edges, y) - 1
    np.testing.assert_allclose(w.centers[bins], y, atol=s * 1e-6)  # every grid point is a bin centre
    occupied = np.nonzero(w.b_counts)[0]
    assert set(occupied % 5) == {2}  # only middle sub-bins: spikes one grid step apart
    x = mf.tensor_data(tf).astype(np.float64).ravel()
    assert len(set(np.nonzero(w.a_counts)[0] % 5)) > 1  # the float values spread between them
    assert w.metrics.rmse_over_scale == pytest.approx(np.sqrt(np.mean(((x - y) / s) ** 2)))
    assert w.metrics.rmse_over_scale == pytest.approx(1 / math.sqrt(12), rel=0.15)


def test_single_channel_selection(int8_models):
    mf, tf, mq, tq = _pair(*int8_models, "cnn_1/dw1_1/depthwise")
    w = W.analyze_tensors(mf, tf, mq, tq, channel=5)
    q = tq.quantization
    x = mf.tensor_data(tf)[..., 5].astype(np.float64)
    y = (mq.tensor_data(tq)[..., 5].astype(np.float64) - q.zero_points[5]) * q.scales[5]
    assert w.channel == 5 and w.grid_step == q.scales[5] and w.per_channel_sqnr_db is None
    np.testing.assert_array_equal(w.b_counts, np.histogram(y, bins=w.edges)[0])
    assert w.metrics.sqnr_db == pytest.approx(_sqnr(x, y))
    assert w.clip_hi == pytest.approx(127 * q.scales[5])
    with pytest.raises(ValueError, match="out of range"):
        W.analyze_tensors(mf, tf, mq, tq, channel=16)


def test_float16_dynamic_and_lone(fixture_path):
    f = fixture_path("float")
    mf, tf, mq, tq = _pair(f, fixture_path("float16"), "cnn_1/conv2_1/convolution")
    w = W.analyze_tensors(mf, tf, mq, tq)
    x, y = mf.tensor_data(tf).astype(np.float64), mq.tensor_data(tq).astype(np.float64)
    assert tq.dtype == "float16" and w.clip_lo is None and w.grid_step is None
    assert w.metrics.sqnr_db == pytest.approx(_sqnr(x, y)) and w.metrics.sqnr_db > 60
    assert any("float16" in n for n in w.notes)
    # Dynamic range: int8 per-channel weights in a float-activation model.
    mf, tf, mq, tq = _pair(f, fixture_path("dynamic"), "cnn_1/fc1_1/MatMul")
    w = W.analyze_tensors(mf, tf, mq, tq)
    y = _deq(mq.tensor_data(tq), tq.quantization)
    assert w.metrics.sqnr_db == pytest.approx(_sqnr(mf.tensor_data(tf).astype(np.float64), y))
    # A lone quantized model: only its distribution, still with grid and clip range.
    lone = W.analyze_tensors(None, None, mq, tq)
    assert lone.a_counts is None and lone.metrics is None
    np.testing.assert_array_equal(lone.b_counts, np.histogram(y, bins=lone.edges)[0])
    assert lone.clip_hi == pytest.approx(127 * max(tq.quantization.scales))
    lone_a = W.analyze_tensors(mf, tf, None, None)
    assert lone_a.b_counts is None and lone_a.a_counts.sum() == tf.num_elements
    assert W.analyze_tensors(mf, mf.main.tensors[mf.main.inputs[0]], None, None) is None  # activation


def test_int4_per_channel_axis3():
    rng = np.random.default_rng(0)
    qv = rng.integers(-8, 8, size=(1, 3, 3, 6)).astype(np.int8)
    scales = tuple(float(s) for s in rng.uniform(0.01, 0.1, 6))
    q = Quantization(scales, (0,) * 6, 3)
    y = _deq(qv, q)
    x = y + rng.normal(0, 0.002, y.shape)
    x[0, 0, 0, 2] = 10 * scales[2]  # one float weight beyond the int4 range [-8, 7]
    w = W.analyze_weights(W.WeightSource("w", "float32", x, None, "A"), W.WeightSource("w", "int4", qv, q, "B"))
    np.testing.assert_allclose(w.channel_lo, -8 * np.array(scales))
    np.testing.assert_allclose(w.channel_hi, 7 * np.array(scales))
    lo, hi = -8 * np.array(scales), 7 * np.array(scales)
    half = np.array(scales) / 2  # saturation starts half a step beyond the representable range
    assert (x > hi + half).any() and w.metrics.clip_rate == pytest.approx(np.mean((x < lo - half) | (x > hi + half)))
    assert w.metrics.max_abs == pytest.approx(np.max(np.abs(x - y)))
    assert int(np.argmax(w.per_channel_max_abs)) == 2
    np.testing.assert_array_equal(w.b_counts, np.histogram(y, bins=w.edges)[0])


def test_mixed_schemes_and_shape_mismatch():
    rng = np.random.default_rng(1)
    qa = rng.integers(-127, 128, size=(4, 8)).astype(np.int8)
    qb = rng.integers(-127, 128, size=(4, 8)).astype(np.int8)
    a = W.WeightSource("w", "int8", qa, Quantization((0.02,), (3,), 0), "A")  # per-tensor
    b = W.WeightSource("w", "int8", qb, Quantization((0.01, 0.02, 0.03, 0.04), (0,) * 4, 0), "B")
    w = W.analyze_weights(a, b)
    x, y = _deq(qa, a.quantization), _deq(qb, b.quantization)
    assert w.metrics.sqnr_db == pytest.approx(_sqnr(x, y))
    np.testing.assert_array_equal(w.a_counts, np.histogram(x, bins=w.edges)[0])
    c = W.WeightSource("w", "float32", rng.normal(size=(8, 4)), None, "A")
    w = W.analyze_weights(c, b)
    assert w.metrics is None and any("shapes differ" in n for n in w.notes)
    assert w.a_counts.sum() == w.b_counts.sum() == 32


def test_large_tensor_is_subsampled_deterministically(monkeypatch):
    rng = np.random.default_rng(2)
    qv = rng.integers(-127, 128, size=(8, 300_000)).astype(np.int8)
    q = Quantization(tuple(float(s) for s in np.linspace(0.01, 0.08, 8)), (0,) * 8, 0)
    y = _deq(qv, q)
    x = y + rng.uniform(-0.5, 0.5, y.shape) * np.asarray(q.scales)[:, None]
    a, b = W.WeightSource("w", "float32", x, None, "A"), W.WeightSource("w", "int8", qv, q, "B")
    monkeypatch.setattr(W, "CHUNK_ELEMENTS", 100_000)  # several chunks
    w1 = W.analyze_weights(a, b, max_elements=1_000_000)
    w2 = W.analyze_weights(a, b, max_elements=1_000_000)
    assert w1.sampled and w1.total_elements == 2_400_000
    assert 8 * 100_000 <= w1.used_elements <= 8 * 100_000 + 8 * W.SAMPLE_BLOCK  # about 1 in 3
    np.testing.assert_array_equal(w1.b_counts, w2.b_counts)
    # contiguous blocks spread evenly over each channel: recover them independently from the counts
    width = min(100_000 // W.MIN_SAMPLE_BLOCKS, W.SAMPLE_BLOCK // 8)  # 1 in 3 of 300,000 columns, in >= 256 blocks
    n = w1.used_elements // 8 // width
    starts = np.unique(np.linspace(0, 300_000 - width, n).round().astype(int))
    assert len(starts) == n and starts[0] == 0 and starts[-1] == 300_000 - width
    cols = np.concatenate([np.arange(s, s + width) for s in starts])
    xs, ys = x[:, cols], y[:, cols]
    np.testing.assert_array_equal(w1.b_counts, np.histogram(ys, bins=w1.edges)[0])
    assert w1.metrics.sqnr_db == pytest.approx(_sqnr(xs, ys), rel=1e-9)
    np.testing.assert_allclose(w1.per_channel_max_abs, np.max(np.abs(xs - ys), axis=1))
    full = W.analyze_weights(a, b)  # exact over all values, in chunks
    assert not full.sampled and full.metrics.sqnr_db == pytest.approx(_sqnr(x, y), rel=1e-9)


def test_weight_tensor_of_conv_op(int8_models):
    mq = Model(int8_models[1])
    sg = mq.main
    conv = next(op for op in sg.ops if op.type == "CONV_2D")
    wi = W.weight_tensor_of(sg, conv)
    assert wi == conv.inputs[1] and len(sg.tensors[wi].shape) == 4
    softmax = next(op for op in sg.ops if op.type == "SOFTMAX")
    assert W.weight_tensor_of(sg, softmax) is None


def test_weight_tensor_of_looks_through_dequantize(fixture_path):
    m = Model(fixture_path("float16"))
    sg = m.main
    conv = next(op for op in sg.ops if op.type == "CONV_2D")
    deq = sg.producers()[conv.inputs[1]]
    assert deq.type == "DEQUANTIZE" and not sg.tensors[conv.inputs[1]].is_constant
    wi = W.weight_tensor_of(sg, conv)
    assert wi == deq.inputs[0] and sg.tensors[wi].dtype == "float16"
