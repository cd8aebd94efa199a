"""Comparison GUI: run in the worker, layer error plot vs an independent compare_models call,
clicking a point selects the layer in both panes and shows its activations, SQNR column,
output summary, baseline series, Cancel, and a custom-op model failing with a clear message."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import Model
from inspector.core.viewdata.layer_series import error_grade, is_shape_only
from inspector.gui.compare.feature import BAD, GOOD, MID, grade_color
from inspector.gui.views.model_pane import ERROR_COLUMN
from tests.helpers.gui_helpers import click_enabled, open_wait, use_random_samples

RUN_MS = 60_000


def _run(qtbot, window, count: int = 4, seed: int = 3, isolated: bool = False):
    panel = window.features.compare_features.inputs
    use_random_samples(window)
    panel.count.setValue(count)
    panel.seed.setValue(seed)
    panel.isolated.setChecked(isolated)
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, panel.run_button)
    return blocker.args[0]


def _click_point(qtbot, plot, x: float, y: float) -> None:
    """A real mouse click at data point (x, y), through the plot's scene."""
    vb = plot.plot.getPlotItem().getViewBox()
    qtbot.waitUntil(lambda: vb.viewRect().contains(pg_point(x, y)), timeout=5000)  # auto-range applied
    scene_pos = vb.mapViewToScene(pg_point(x, y))
    view_pos = plot.plot.mapFromScene(scene_pos)
    qtbot.mouseClick(plot.plot.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(view_pos.x(), view_pos.y()))


def pg_point(x: float, y: float):
    from PySide6.QtCore import QPointF

    return QPointF(x, y)


@pytest.fixture
def example_window(qtbot, window, example_pair):
    open_wait(qtbot, window, "A", example_pair[0])
    open_wait(qtbot, window, "B", example_pair[1])
    return window


@pytest.fixture
def cnn_window(qtbot, window, fixture_path):
    """The fixture CNN pair (conv, depthwise, residual add, pool, dense, softmax; a flatten that
    computes its shape with SHAPE / STRIDED_SLICE / PACK): the structure these tests read, which
    the bundled example (a digits CNN with static shapes) no longer has."""
    open_wait(qtbot, window, "A", fixture_path("float"))
    open_wait(qtbot, window, "B", fixture_path("int8"))
    return window


def test_run_plot_click_selects_layer_and_shows_activations(qtbot, cnn_window, fixture_path):
    win = cnn_window
    fa, fb = str(fixture_path("float")), str(fixture_path("int8"))
    result = _run(qtbot, win, count=4, seed=3, isolated=True)
    qm = Model(fb)
    indep = compare_models(fa, fb, CompareOptions(samples=SampleSettings(count=4, seed=3), isolated=True, keep_values=frozenset(range(len(qm.main.tensors)))))
    assert result.runtime == "optimized" and result.samples == 4 and result.isolated
    assert [lay.tensor_name for lay in result.layers] == [lay.tensor_name for lay in indep.layers]

    # One point per matched layer; drawn SQNR = the independent run's (inf drawn above the finite ones).
    plot = win.features.compare_features.plot
    assert plot.metric_key == "sqnr_db"
    x, y = plot.point_data("accumulated")
    # integer shape ops (SHAPE, STRIDED_SLICE, PACK: equal by construction) are not on the error curve
    drawn = [lay for lay in result.layers if not is_shape_only(lay)]
    indep_drawn = [lay for lay in indep.layers if not is_shape_only(lay)]
    assert len(result.layers) == len(indep.layers) == 13 and len(x) == len(drawn) == 10
    assert {lay.op_type for lay in indep.layers if is_shape_only(lay)} == {"SHAPE", "STRIDED_SLICE", "PACK"}
    assert list(x) == [lay.op_index for lay in drawn]  # B's op index: the layer identifier everywhere
    assert "op index in model B" in plot.plot.getPlotItem().getAxis("bottom").labelText
    want = np.array([lay.metrics.sqnr_db for lay in indep_drawn])
    assert np.isfinite(want).all()
    np.testing.assert_allclose(y, want, rtol=1e-9)
    xi, yi = plot.point_data("isolated")
    iso = [lay for lay in indep_drawn if lay.isolated is not None and lay.isolated.sqnr_db < 100]
    exact = [lay for lay in indep_drawn if lay.isolated is not None and lay.isolated.sqnr_db >= 100]
    assert len(iso) >= 6 and exact  # e.g. MAX_POOL alone is exact up to float rounding
    for lay in iso:
        k = lay.op_index
        assert yi[list(xi).index(k)] == pytest.approx(lay.isolated.sqnr_db, rel=1e-9)
    top = plot.exact_line.value()  # the "equal" line, shared by both series
    assert top > max(lay.isolated.sqnr_db for lay in iso) and plot.exact_line.isVisible()
    for lay in exact:
        assert yi[list(xi).index(lay.op_index)] == top

    # Click the depthwise conv's point: both panes and the activation view follow.
    k = next(i for i, lay in enumerate(drawn) if lay.op_type == "DEPTHWISE_CONV_2D")
    layer = drawn[k]
    win.tabs.setCurrentWidget(win.features.compare_features.page)
    qtbot.waitUntil(lambda: plot.plot.isVisible())
    with qtbot.waitSignal(win.controller.selection_changed, timeout=5000):
        _click_point(qtbot, plot, x[k], y[k])
    sel = win.controller.selection
    assert sel.op_b == layer.op_index and sel.op_a == layer.float_op_index
    assert win.panes["B"].selected_op() == layer.op_index
    assert win.panes["A"].selected_op() == layer.float_op_index
    rx, _ry = plot.ring.getData()
    assert list(rx) == [layer.op_index]  # the ring sits at B's op index

    view = win.features.compare_features.activations
    assert view.layer is layer and layer.tensor_name in view.title.text()
    view.log_check.setChecked(False)
    edges, fc, qc = view.histogram_data()
    kept = indep.kept[layer.quant_tensor]
    assert len(kept.float_values) == 4096 and kept.total == 4 * 32 * 32 * 16
    q = qm.main.tensors[layer.quant_tensor].quantization
    s, zp = float(q.scales[0]), int(q.zero_points[0])
    steps = edges / s + zp + 0.5  # bin edges half a step around grid points
    np.testing.assert_allclose(steps, np.round(steps), atol=1e-6)
    np.testing.assert_array_equal(fc, np.histogram(kept.float_values, edges)[0])
    np.testing.assert_array_equal(qc, np.histogram(kept.quant_values, edges)[0])
    assert fc.sum() == qc.sum() == 4096
    sx, sy = view.points.getData()
    assert 0 < len(sx) <= 2000 and np.all(np.isin(sx, kept.float_values))

    # SQNR column in both layer lists; green for a good layer, the worst layer not green.
    ops_b, ops_a = win.panes["B"].ops, win.panes["A"].ops
    txt = ops_b.data(ops_b.index(layer.op_index, ERROR_COLUMN))
    assert txt == f"{indep.layers[k].metrics.sqnr_db:.4g}"
    assert ops_a.data(ops_a.index(layer.float_op_index, ERROR_COLUMN)) == txt
    assert bg_colour(win, layer) == grade_color(error_grade(indep.layers[k].metrics.sqnr_db))

    # Output summary at the top.
    out = indep.outputs[0].metrics
    assert win.features.compare_features.summary.isVisible()
    assert f"{out.sqnr_db:.4g} dB" in win.features.compare_features.summary.text and "runtime optimized" in win.features.compare_features.summary.text

    # Metric switch: MSE on a log axis, values log10 of the independent MSE.
    plot.set_metric("mse")
    _x, ym = plot.point_data("accumulated")
    mse = np.array([lay.metrics.mse for lay in indep_drawn])
    pos = mse > 0
    np.testing.assert_allclose(ym[pos], np.log10(mse[pos]), rtol=1e-9)


def bg_colour(win, layer):
    ops_b = win.panes["B"].ops
    return ops_b.data(ops_b.index(layer.op_index, ERROR_COLUMN), Qt.ItemDataRole.BackgroundRole)


def test_sqnr_column_colours_good_and_bad_layers(qtbot, example_window, example_pair):
    """Green for a good layer, the worst layer not green (the example's worst layers are far below)."""
    fa, fb = (str(p) for p in example_pair)
    _run(qtbot, example_window, count=4, seed=3)
    indep = compare_models(fa, fb, CompareOptions(samples=SampleSettings(count=4, seed=3)))
    best = max((lay for lay in indep.layers if math.isfinite(lay.metrics.sqnr_db)), key=lambda lay: lay.metrics.sqnr_db)
    worst = min(indep.layers, key=lambda lay: lay.metrics.sqnr_db)
    assert best.metrics.sqnr_db >= 30 and worst.metrics.sqnr_db < 25
    bg = lambda lay: bg_colour(example_window, lay)  # noqa: E731
    assert bg(best) == GOOD and bg(worst) == grade_color(error_grade(worst.metrics.sqnr_db)) and bg(worst).red() > GOOD.red() + 60
    assert grade_color(1.0) == BAD and grade_color(0.5) == MID


def test_baseline_series_and_stale_result(qtbot, example_window, example_pair):
    win = example_window
    first = _run(qtbot, win, count=2)
    win.features.compare.set_baseline(first, "before: int8")
    second = _run(qtbot, win, count=3, seed=5)
    plot = win.features.compare_features.plot
    bx, by = plot.point_data("baseline")
    ax, ay = plot.point_data("accumulated")
    first_drawn = [lay for lay in first.layers if not is_shape_only(lay)]
    assert len(bx) == len(ax) == len([lay for lay in second.layers if not is_shape_only(lay)]) == len(first_drawn)
    finite = [i for i, lay in enumerate(first_drawn) if math.isfinite(lay.metrics.sqnr_db)]
    np.testing.assert_allclose(by[finite], [first_drawn[i].metrics.sqnr_db for i in finite], rtol=1e-9)
    assert not np.allclose(by[finite], ay[finite])  # different samples, different errors
    labels = plot.legend_labels
    assert "before: int8" in plot.legend.text()
    assert "before: int8" in labels and "accumulated (end to end)" in labels
    # Closing model B makes the result stale: views clear, the baseline (of the closed pair) too;
    # the summary strip keeps its place (no layout jump) and shows the hint.
    height = win.features.compare_features.summary.height()
    win.controller.close_model("B")
    assert win.features.compare.result is None and win.features.compare.baseline is None
    assert len(plot.point_data("accumulated")[0]) == 0 and len(plot.point_data("baseline")[0]) == 0
    assert win.features.compare_features.summary.isVisible() and win.features.compare_features.summary.text == ""
    assert win.features.compare_features.summary.height() == height
    assert win.panes["A"].ops.errors == {}


def test_cancel_keeps_the_app_usable(qtbot, example_window):
    win = example_window
    panel = win.features.compare_features.inputs
    use_random_samples(win)  # the example opens with its bundled inputs: too few to still be running
    panel.count.setValue(100_000)  # minutes of work
    with qtbot.waitSignal(win.features.compare.progress, timeout=RUN_MS):
        click_enabled(qtbot, panel.run_button)
    assert win.features.compare.running, panel.status.text()
    assert panel.cancel_button.isEnabled() and not panel.run_button.isEnabled()
    with qtbot.waitSignal(win.features.compare.cancelled, timeout=15_000):
        qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.run_button.isEnabled(), timeout=5000)
    assert win.features.compare.result is None and "Cancelled" in panel.status.text()
    result = _run(qtbot, win, count=2)
    assert result.samples == 2


def test_custom_op_fails_with_a_message_naming_the_op(qtbot, window, fixture_path, example_pair):
    path = fixture_path("custom_op")
    custom = next(op.type for op in Model(path).main.ops if op.is_custom)
    open_wait(qtbot, window, "A", path)
    open_wait(qtbot, window, "B", path)
    with qtbot.waitSignal(window.features.compare.failed, timeout=RUN_MS) as blocker:
        window.features.compare.run(CompareOptions(samples=SampleSettings(count=2)))
    msg = blocker.args[0]
    assert custom in msg and str(path.name) in msg
    assert window.banner.isVisible() and custom in window.banner.text
    assert "Failed" in window.features.compare_features.inputs.status.text() and window.features.compare_features.inputs.run_button.isEnabled()
    # Still usable: the example pair compares fine afterwards.
    open_wait(qtbot, window, "A", example_pair[0])
    open_wait(qtbot, window, "B", example_pair[1])
    assert _run(qtbot, window, count=2).samples == 2


def test_large_model_keeps_selected_values_and_collects_others(qtbot, cnn_window, monkeypatch):
    """Over the keep budget only the selected tensor (and outputs) keep values; another layer's
    values come from a re-run started by the activation view's button."""
    import inspector.gui.compare.controller as cc_mod
    from inspector.core.viewdata.activations import keep_plan

    monkeypatch.setattr(cc_mod, "keep_plan", lambda qm, selected=None: keep_plan(qm, selected, budget=0))
    win = cnn_window
    cf = win.features.compare_features
    q = win.controller.models["B"].main
    conv = next(op for op in q.ops if op.type == "CONV_2D")
    win.controller.select_op("B", conv.index, tensor=conv.outputs[0])
    result = _run(qtbot, win, count=2)
    assert set(result.kept) == {conv.outputs[0], *q.outputs} & {lay.quant_tensor for lay in result.layers}
    assert cf.activations.hist is not None and cf.activations.layer.quant_tensor == conv.outputs[0]
    k = next(i for i, lay in enumerate(result.layers) if lay.op_type == "ADD")
    cf.plot.click_layer(k)
    add = result.layers[k]
    assert cf.activations.hist is None and cf.activations.collect.isVisibleTo(cf.activations)
    assert "not kept" in cf.activations.title.text()
    with qtbot.waitSignal(win.features.compare.result_changed, timeout=RUN_MS) as blocker:
        qtbot.mouseClick(cf.activations.collect, Qt.MouseButton.LeftButton)
    again = blocker.args[0]
    assert add.quant_tensor in again.kept and conv.outputs[0] in again.kept and again.samples == 2
    assert cf.activations.layer.quant_tensor == add.quant_tensor and cf.activations.hist is not None
    assert cf.activations.hist.used == len(again.kept[add.quant_tensor].float_values)


def test_dynamic_range_model_every_metric_and_float_activations(qtbot, window, fixture_path):
    """Hybrid (dynamic-range) layers have float outputs: no grid, no RMSE/scale; nothing breaks."""
    open_wait(qtbot, window, "A", fixture_path("float"))
    open_wait(qtbot, window, "B", fixture_path("dynamic"))
    result = _run(qtbot, window, count=2)
    plot = window.features.compare_features.plot
    n = len(result.layers)
    for key in ("sqnr_db", "mse", "max_abs", "cosine", "rmse_over_scale", "clip_rate", "range_use"):
        plot.set_metric(key)
        x, _y = plot.point_data()
        drawable = [lay for lay in result.layers if getattr(lay.metrics, key) is not None and not is_shape_only(lay)]
        assert len(x) == len(drawable) <= n, key
    fc = next(i for i, lay in enumerate(result.layers) if lay.op_type == "FULLY_CONNECTED")
    plot.click_layer(fc)
    view = window.features.compare_features.activations
    assert view.hist is not None and view.hist.rep_lo is None and view.hist.steps_per_bin is None
    assert "no quantization grid" in view.title.text() and not view.range_lines[0].isVisible()
