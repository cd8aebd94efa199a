"""Per-channel ranges (issue 25): every path that accumulates a tensor pair (the native batch kernel
with its vector lanes, the per-pair native kernel, the int16 float64 kernel, the numpy chunks)
keeps per channel the minimum and maximum of x, the count of x that saturates and the sums of x^2
and e^2, equal to the float64 definition (`AxisSums.update`, plain numpy here). A lane put on the
wrong channel, a min/max lane not reset between tiles or a clip count on the wrong channel shows.
Slices along another axis (a concatenation's) are summed in float64 per sample."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.quantmath.quant import dequantize, representable_range
from inspector.core.stats import native as native_stats
from inspector.core.stats.batch_sums import BatchStats
from inspector.core.stats.metrics import TensorStats
from inspector.core.stats.tensor_sums import Workspace, accumulate
from inspector.core.tflite.model import Quantization

WIDTHS = (1, 3, 7, 8, 16, 24, 40, 100, 1280)
ROWS = (1, 5, 37, 333)


def _quant(kind: str) -> Quantization:
    info = np.iinfo(kind)
    s = np.float32(6.0 / (info.max - info.min))
    return Quantization((float(s),), (int(round(info.min + 3.0 / float(s))),), 1)


def _sample(kind: str, rows: int, w: int, seed: int, quant: Quantization):
    rng = np.random.default_rng(seed)
    x = (rng.normal(0.2, 1.0, (rows, w)) * np.linspace(0.5, 3.0, w) + np.linspace(-1, 1, w)).astype(np.float32)
    info = np.iinfo(kind)
    q = np.clip(np.round(x / quant.scales[0]) + quant.zero_points[0] + rng.integers(-1, 2, x.shape), info.min, info.max)
    return x, q.astype(kind)


def _stats(quant: Quantization, kind: str, **kw) -> TensorStats:
    lo, hi = representable_range(quant, kind)
    return TensorStats(quant.scales[0], float(lo[0]), float(hi[0]), **kw)


def _reference(samples, quant, kind):
    """Per channel: min, max of x, clip count, sum x^2, sum e^2 (numpy, float64)."""
    st = _stats(quant, kind)
    lo, hi = st.lo, st.hi
    xs = np.concatenate([x for x, _ in samples]).astype(np.float64)
    ys = np.concatenate([dequantize(q, quant) for _, q in samples])
    clip = ((xs < lo) | (xs > hi)).sum(axis=0)
    return xs.min(0), xs.max(0), clip, (xs * xs).sum(0), ((xs - ys) ** 2).sum(0)


def _check(st: TensorStats, ref, where: str) -> None:
    a = st.channel_sums()
    assert a is not None, where
    mn, mx, clip, x2, e2 = ref
    np.testing.assert_array_equal(a.xmin, mn, err_msg=where)
    np.testing.assert_array_equal(a.xmax, mx, err_msg=where)
    np.testing.assert_array_equal(a.clip, clip, err_msg=where)
    np.testing.assert_allclose(a.x2, x2, rtol=1e-5, err_msg=where)
    np.testing.assert_allclose(a.e2, e2, rtol=1e-4, err_msg=where)  # float32 y: ~1e-7 of x per element


@pytest.mark.parametrize("kind", ["int8", "uint8", "int16"])
@pytest.mark.parametrize("w", WIDTHS)
def test_channel_ranges_agree_with_numpy_on_every_path(kind, w):
    quant = _quant(kind)
    for rows in ROWS:
        samples = [_sample(kind, rows, w, seed, quant) for seed in range(3)]
        ref = _reference(samples, quant, kind)
        paths = {"definition": _stats(quant, kind, range_axis=-1), "chunks": _stats(quant, kind, range_axis=-1)}
        ws = Workspace()
        for x, q in samples:
            paths["definition"].update(x, dequantize(q, quant))
            accumulate(paths["chunks"], x, q, quant, ws, use_native=False)
        if native_stats.available():
            paths["per pair"] = _stats(quant, kind, range_axis=-1)
            paths["batch"] = _stats(quant, kind, range_axis=-1)
            batch = BatchStats([(paths["batch"], 1, 2, quant)], ["float32"], [kind], [rows * w], [(rows, w)])
            assert batch.native == [0]
            for x, q in samples:
                accumulate(paths["per pair"], x, q, quant, ws)
                batch.add({1: x}, {2: q})
            batch.finish()
        if rows * w >= 1000:
            assert ref[2].sum() > 0  # the clip counts are exercised
        for name, st in paths.items():
            _check(st, ref, f"{name} {kind} {rows}x{w}")
            assert st.result().per_channel_sqnr_db is None  # ranges only: the Metrics keep their form


def test_range_axis_leaves_the_channel_means_of_conv_outputs_alone():
    """A conv output keeps its per-channel SQNR and mean error; the ranges come on top."""
    quant = _quant("int8")
    samples = [_sample("int8", 37, 24, seed, quant) for seed in range(3)]
    a, b = _stats(quant, "int8", channel_axis=-1), _stats(quant, "int8", channel_axis=-1, range_axis=-1)
    batch = BatchStats([(a, 1, 2, quant), (b, 3, 4, quant)], ["float32"] * 2, ["int8"] * 2, [37 * 24] * 2, [(37, 24)] * 2)
    for x, q in samples:
        batch.add({1: x, 3: x}, {2: q, 4: q})
    batch.finish()
    ra, rb = a.result(), b.result()
    assert ra.per_channel_mean_error is not None
    assert ra.per_channel_mean_error == rb.per_channel_mean_error
    assert ra.per_channel_sqnr_db == rb.per_channel_sqnr_db
    _check(a, _reference(samples, quant, "int8"), "channel_axis")


@pytest.mark.parametrize("axis", [0, 1])
def test_slices_along_another_axis_agree_with_numpy(axis):
    quant = _quant("int8")
    rng = np.random.default_rng(4)
    samples = []
    for _ in range(3):
        x = (rng.normal(0, 1, (6, 5, 9)) * np.linspace(0.2, 3, 6)[:, None, None]).astype(np.float32)
        q = np.clip(np.round(x / quant.scales[0]) + quant.zero_points[0], -128, 127).astype(np.int8)
        samples.append((x, q))
    st = _stats(quant, "int8", range_axis=-1, slice_axis=axis)
    other = _stats(quant, "int8", range_axis=-1, slice_axis=axis)
    batch = BatchStats([(st, 1, 2, quant)], ["float32"], ["int8"], [270], [(6, 5, 9)])
    ws = Workspace()
    for x, q in samples:
        batch.add({1: x}, {2: q})
        accumulate(other, x, q, quant, ws, use_native=False)
    batch.finish()
    xs = np.concatenate([np.moveaxis(x, axis, 0).reshape(x.shape[axis], -1) for x, _ in samples], 1).astype(np.float64)
    ys = np.concatenate([np.moveaxis(dequantize(q, quant), axis, 0).reshape(q.shape[axis], -1) for _, q in samples], 1)
    for s in (st, other):
        np.testing.assert_allclose(s.slices.x2, (xs * xs).sum(1), rtol=1e-5)  # float32 blocks into float64
        np.testing.assert_allclose(s.slices.e2, ((xs - ys) ** 2).sum(1), rtol=1e-4)
        np.testing.assert_array_equal(s.slices.xmin, xs.min(1))
        np.testing.assert_array_equal(s.slices.xmax, xs.max(1))
    g = st.slices.group([(0, 2), (2, xs.shape[0])])
    assert g.x2[0] == pytest.approx((xs[:2] ** 2).sum(), rel=1e-5)
    assert g.xmax[1] == xs[2:].max()


@pytest.mark.parametrize("kind", ["int8", "uint8", "int16", "float32"])
@pytest.mark.parametrize("path", ["native", "float32", "definition"])
def test_slices_of_a_middle_axis_on_every_path(kind, path, monkeypatch):
    """A detector head's layout: [1, 84, N] concatenated on axis 1 (not the channel axis)."""
    from inspector.core.stats import tensor_sums

    if path == "native" and not native_stats.available():
        pytest.skip("no C compiler")
    if path != "native":
        monkeypatch.setattr(tensor_sums, "_slices_native", lambda *a: False)
    rng = np.random.default_rng(7)
    quant = None if kind == "float32" else _quant(kind)
    st = _stats(quant, kind, range_axis=-1, slice_axis=1) if quant is not None else TensorStats(range_axis=-1, slice_axis=1)
    xs, ys = [], []
    for _ in range(3):
        x = (rng.normal(0.5, 1.5, (2, 9, 301)) * np.linspace(0.1, 3, 9)[None, :, None]).astype(np.float32)
        if quant is None:
            q = (x + rng.normal(0, 0.01, x.shape)).astype(np.float32)
            y = q.astype(np.float64)
        else:
            info = np.iinfo(kind)
            q = np.clip(np.round(x / quant.scales[0]) + quant.zero_points[0], info.min, info.max).astype(kind)
            y = dequantize(q, quant)
        if path == "definition":
            st.slices.update(x, y, st.lo, st.hi)
        else:
            tensor_sums.add_slices(st, x, q, quant)
        xs.append(np.moveaxis(x.astype(np.float64), 1, 0).reshape(9, -1))
        ys.append(np.moveaxis(y, 1, 0).reshape(9, -1))
    x, y = np.concatenate(xs, 1), np.concatenate(ys, 1)
    a = st.slices
    np.testing.assert_allclose(a.x2, (x * x).sum(1), rtol=1e-5)
    np.testing.assert_allclose(a.e2, ((x - y) ** 2).sum(1), rtol=1e-4)
    np.testing.assert_array_equal(a.xmin, x.min(1))
    np.testing.assert_array_equal(a.xmax, x.max(1))
    np.testing.assert_array_equal(a.n, np.full(9, x.shape[1]))
    if quant is not None:
        expected = ((x < st.lo) | (x > st.hi)).sum(1)
        assert expected.sum() > 0
        np.testing.assert_array_equal(a.clip, expected)
