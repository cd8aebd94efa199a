"""Weight histogram and per-channel views render exactly what inspector.core.compare.weights computed,
and those numbers equal an independent numpy computation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from inspector.core.compare.pairing import pair_models
from inspector.core.compare.weights import analyze_tensors
from inspector.core.tflite.model import Model
from inspector.core.viewdata.weight_view import coarse_bins
from tests.helpers.gui_helpers import open_wait


def _dequant(values: np.ndarray, scales, zps, axis: int) -> np.ndarray:
    shape = [1] * values.ndim
    shape[axis] = len(scales)
    return (values.astype(np.float64) - np.reshape(zps, shape)) * np.reshape(scales, shape)


def _data(item):
    x, y = item.getOriginalDataset()
    return np.asarray(x), np.asarray(y)


@pytest.fixture
def loaded(qtbot, window, fixture_path):
    f, q = fixture_path("float"), fixture_path("int8")
    open_wait(qtbot, window, "A", f)
    open_wait(qtbot, window, "B", q)
    return window, Model(f), Model(q)


def test_histogram_items_equal_core_and_numpy(qtbot, loaded):
    win, mf, mq = loaded
    conv = [op for op in mq.main.ops if op.type == "CONV_2D"][1]
    win.controller.select_op("B", conv.index)
    tq = mq.main.tensors[conv.inputs[1]]
    tf = mf.main.tensors[pair_models(mf, mq).float_for_quant(tq.index)]
    expect = analyze_tensors(mf, tf, mq, tq)
    view = win.features.weights_view
    # Zoomed out: coarse bins (cut at the clip lines), each the numpy count of its values.
    assert view.fine is False
    xa, ya = _data(view.curve_a)
    xb, yb = _data(view.curve_b)
    coarse = coarse_bins(expect)
    np.testing.assert_array_equal(xa, coarse.edges)
    np.testing.assert_array_equal(ya, coarse.a)
    np.testing.assert_array_equal(yb, coarse.b)
    # Zoomed to the grid: the grid-resolved bins.
    view.zoom_to_grid()
    assert view.fine is True
    xa, ya = _data(view.curve_a)
    xb, yb = _data(view.curve_b)
    np.testing.assert_array_equal(xa, expect.edges)
    np.testing.assert_array_equal(ya, expect.a_counts)
    np.testing.assert_array_equal(yb, expect.b_counts)
    # Independent: numpy histograms of the float and dequantized values on those edges.
    q = tq.quantization
    x = mf.tensor_data(tf).astype(np.float64)
    y = _dequant(mq.tensor_data(tq), q.scales, q.zero_points, q.quantized_dimension)
    np.testing.assert_array_equal(ya, np.histogram(x, bins=xa)[0])
    np.testing.assert_array_equal(yb, np.histogram(y, bins=xb)[0])
    sqnr = 10 * math.log10(np.sum(x**2) / np.sum((x - y) ** 2))
    assert f"SQNR {sqnr:.4g} dB" in view.summary.text()
    assert f"max |error| {np.max(np.abs(x - y)):.4g}" in view.summary.text()
    lo, hi = (line.value() for line in view.clip_lines)
    assert (lo, hi) == pytest.approx((-128 * max(q.scales), 127 * max(q.scales)))
    assert all(line.isVisible() for line in view.clip_lines)
    # Per-channel error plot: one point per channel, equal to numpy per-channel SQNR.
    cx, cy = _data(view.sqnr_points)
    xs, ys = np.moveaxis(x, 0, 0).reshape(q.num_channels, -1), y.reshape(q.num_channels, -1)
    per = 10 * np.log10(np.sum(xs**2, axis=1) / np.sum((xs - ys) ** 2, axis=1))
    np.testing.assert_array_equal(cx, np.arange(q.num_channels))
    np.testing.assert_allclose(cy, per, rtol=1e-9)
    np.testing.assert_allclose(_data(view.maxerr_points)[1], np.max(np.abs(xs - ys), axis=1))


def test_per_channel_view_one_point_per_channel(qtbot, loaded):
    win, mf, mq = loaded
    dw = next(op for op in mq.main.ops if op.type == "DEPTHWISE_CONV_2D")
    win.controller.select_op("B", dw.index)
    q = mq.main.tensors[dw.inputs[1]].quantization
    assert q.quantized_dimension == 3
    sx, sy = _data(win.features.per_channel_view.scale_points)
    zx, zy = _data(win.features.per_channel_view.zp_points)
    assert len(sx) == len(zx) == q.num_channels == mq.main.tensors[dw.inputs[1]].shape[3]
    np.testing.assert_array_equal(sy, np.asarray(q.scales, np.float64))
    np.testing.assert_array_equal(zy, np.asarray(q.zero_points, np.float64))
    assert "dimension 3" in win.features.per_channel_view.title.text()
    # A per-tensor activation: a single point.
    act = next(i for i in dw.outputs)
    win.controller.select_tensor("B", act)
    assert len(_data(win.features.per_channel_view.scale_points)[0]) == 1
    assert win.features.weights_view.analysis is None  # activations have no weight histogram


def test_channel_selection_shows_that_channels_grid(qtbot, loaded):
    win, mf, mq = loaded
    fc = next(op for op in mq.main.ops if op.type == "FULLY_CONNECTED")
    win.controller.select_op("B", fc.index)
    tq = mq.main.tensors[fc.inputs[1]]
    view = win.features.weights_view
    assert view.channel_combo.count() == tq.quantization.num_channels + 1
    view.channel_combo.setCurrentIndex(4)  # channel 3
    w = view.analysis
    assert win.controller.channel == 3 and w.channel == 3 and w.grid_step == tq.quantization.scales[3]
    view.zoom_to_grid()
    xb, yb = _data(view.curve_b)
    y = (mq.tensor_data(tq)[3].astype(np.float64) - tq.quantization.zero_points[3]) * tq.quantization.scales[3]
    np.testing.assert_array_equal(yb, np.histogram(y, bins=xb)[0])
    centres = 0.5 * (xb[:-1] + xb[1:])
    np.testing.assert_allclose(centres[np.nonzero(yb)[0]], np.unique(y), atol=1e-6 * w.grid_step)
    # Choosing another tensor resets to all channels.
    conv = next(op for op in mq.main.ops if op.type == "CONV_2D")
    win.controller.select_op("B", conv.index)
    assert win.controller.channel is None and view.channel_combo.currentIndex() == 0


def test_float16_and_dynamic_pairs(qtbot, window, fixture_path):
    open_wait(qtbot, window, "A", fixture_path("float"))
    open_wait(qtbot, window, "B", fixture_path("float16"))
    mq = Model(fixture_path("float16"))
    conv = next(op for op in mq.main.ops if op.type == "CONV_2D")
    window.controller.select_op("B", conv.index)  # weights behind DEQUANTIZE
    w = window.features.weights_view.analysis
    assert w is not None and w.b.dtype == "float16" and w.metrics.sqnr_db > 60
    assert not any(line.isVisible() for line in window.features.weights_view.clip_lines)
    open_wait(qtbot, window, "B", fixture_path("dynamic"))
    mq = Model(fixture_path("dynamic"))
    fc = next(op for op in mq.main.ops if op.type == "FULLY_CONNECTED" and mq.main.tensors[op.inputs[1]].dtype == "int8")
    window.controller.select_op("B", fc.index)
    w = window.features.weights_view.analysis
    assert w.b.dtype == "int8" and w.a.dtype == "float32" and 30 < w.metrics.sqnr_db < 70


def test_exact_channels_are_not_drawn_as_nan(qtbot, loaded):
    """A channel reproduced exactly (e.g. all-zero weights) has SQNR +inf: it is counted in the
    title, not handed to the plot as NaN (pyqtgraph warned 'All-NaN slice' and lost its range)."""
    import dataclasses
    import warnings

    win, mf, mq = loaded
    conv = [op for op in mq.main.ops if op.type == "CONV_2D"][1]
    win.controller.select_op("B", conv.index)
    view = win.features.weights_view
    w = view.analysis
    sq = np.array(w.per_channel_sqnr_db, np.float64)
    sq[[0, 2]] = np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        view.set_analysis(dataclasses.replace(w, per_channel_sqnr_db=sq))
        cx, cy = _data(view.sqnr_points)
        assert list(cx) == [c for c in range(len(sq)) if c not in (0, 2)] and np.all(np.isfinite(cy))
        assert "2 channels exact" in view.sqnr_plot.titleLabel.text
        view.set_analysis(dataclasses.replace(w, per_channel_sqnr_db=np.full_like(sq, np.inf)))
        xs_all_exact = view.sqnr_points.getOriginalDataset()[0]
        assert (xs_all_exact is None or len(xs_all_exact) == 0) and f"{len(sq)} channels exact" in view.sqnr_plot.titleLabel.text


@pytest.mark.parametrize("log", [False, True])
def test_zoom_to_grid_sets_the_core_window(qtbot, loaded, log):
    """'Zoom to grid' really zooms: the view range is the window core computed (a grid point
    in the middle, 16 steps wide), the y axis spans the counts in it, and the bins label flips
    from coarse to grid-resolved; Fit goes back to coarse."""
    from inspector.core.viewdata.weight_view import grid_zoom

    win, mf, mq = loaded
    conv = [op for op in mq.main.ops if op.type == "CONV_2D"][1]
    win.controller.select_op("B", conv.index)
    view = win.features.weights_view
    view.log_check.setChecked(log)
    assert "coarse" in view.detail_label.text()
    before = view.plot.getPlotItem().viewRange()[0]
    view.zoom_to_grid()
    qtbot.wait(50)  # let any deferred auto-range run: it must not undo the zoom
    r = grid_zoom(view.analysis, 16)
    (x0, x1), (y0, y1) = view.plot.getPlotItem().viewRange()
    assert (x0, x1) == pytest.approx((r.x0, r.x1), rel=1e-9, abs=1e-12)
    assert (x0, x1) != pytest.approx(before)
    step = float(np.median(view.analysis.quant.scales))  # per-channel, all channels: the median step
    assert (x1 - x0) == pytest.approx(16 * step, rel=1e-9)
    assert y1 == pytest.approx(r.y_max(log), rel=1e-9)
    assert y0 == pytest.approx(0.0, abs=1e-12)
    assert view.fine is True and view.detail_label.text() == "bins: grid-resolved"
    view.fit_button.click()
    qtbot.wait(50)
    assert view.fine is False and "coarse" in view.detail_label.text()


def _largest_channel_conv(mf: Model, mq: Model):
    """A per-channel int8 conv, its float weights and B's quantization (scale = max|w| / 127)."""
    conv = [op for op in mq.main.ops if op.type == "CONV_2D"][1]
    tq = mq.main.tensors[conv.inputs[1]]
    tf = mf.main.tensors[pair_models(mf, mq).float_for_quant(tq.index)]
    q = tq.quantization
    y = _dequant(mq.tensor_data(tq), q.scales, q.zero_points, q.quantized_dimension)
    return conv, mf.tensor_data(tf).astype(np.float64), q, y


def test_coarse_bins_end_at_the_clip_line(qtbot, loaded):
    """Issue 19 §2: with a channel's max exactly on the clip line ("clipped 0.00 %"), no coarse bar
    is drawn past the line: the bar holding the largest value ends within one grid-resolved bin
    of clip hi, and the bars beyond hold exactly the values numpy finds beyond (none)."""
    win, mf, mq = loaded
    conv, x, q, y = _largest_channel_conv(mf, mq)
    win.controller.select_op("B", conv.index)
    view = win.features.weights_view
    w = view.analysis
    assert view.fine is False and "clipped 0.00 %" in view.summary.text()
    fine_w = float(w.edges[1] - w.edges[0])
    top = float(np.max(x))
    per = np.max(np.abs(x.reshape(q.num_channels, -1)), axis=1)
    assert w.clip_hi == pytest.approx(127 * max(q.scales)) and np.max(per) == pytest.approx(127 * max(q.scales), rel=1e-6)
    xa, ya = _data(view.curve_a)
    k = int(np.searchsorted(xa, top, side="right")) - 1  # the bar holding A's largest value
    assert ya[k] > 0
    assert xa[k + 1] <= w.clip_hi + fine_w + 1e-12, f"bar ends at {xa[k + 1]}, {(xa[k + 1] - w.clip_hi) / fine_w:.1f} fine bins past the clip line"
    beyond = xa[:-1] >= w.clip_hi
    assert ya[beyond].sum() == np.count_nonzero(x >= xa[np.argmax(beyond)]) == 0
    lo = xa[1:] <= w.clip_lo
    assert ya[lo].sum() == np.count_nonzero(x < xa[1:][lo].max()) if lo.any() else True


def test_zoom_button_from_the_fitted_view_zooms_x_and_y(qtbot, loaded):
    """Issue 19 §2: the Zoom-to-grid button (not the method) after Fit: the x range is 16 grid
    steps around zero (median scale of the per-channel grid), y runs from 0 to the tallest
    grid-resolved bin in view (numpy) with 5 % headroom. Before, the button passed checked=False
    as the step count: x stayed at the fitted range and y went to 0..1, negative or cut."""
    from PySide6.QtCore import Qt

    win, mf, mq = loaded
    conv, x, q, y = _largest_channel_conv(mf, mq)
    win.controller.select_op("B", conv.index)
    view = win.features.weights_view
    qtbot.mouseClick(view.fit_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(view.zoom_button, Qt.MouseButton.LeftButton)
    qtbot.wait(50)
    (x0, x1), (y0, y1) = view.plot.getPlotItem().viewRange()
    step = float(np.median(q.scales))
    assert x1 - x0 == pytest.approx(16 * step, rel=1e-6)
    assert view.fine is True
    w = view.analysis
    lo, hi = np.searchsorted(w.edges, [x0, x1])
    tallest = max(int(np.histogram(v, bins=w.edges)[0][max(lo - 1, 0):hi].max()) for v in (x, y))
    assert (y0, y1) == (0.0, pytest.approx(1.05 * tallest))
