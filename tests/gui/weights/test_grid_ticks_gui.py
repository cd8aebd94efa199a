"""Issue 27 §12: after "Zoom to grid" the weight histogram's x ticks sit on the quantization
grid r = S·(q − Z) of the shown channel (they were pyqtgraph's 0.001-multiples)."""

from __future__ import annotations

import numpy as np

from inspector.core.tflite.model import Model
from tests.helpers.gui_helpers import open_wait


def test_zoom_to_grid_puts_the_ticks_on_the_grid(qtbot, window, fixture_path):
    f, q = fixture_path("float"), fixture_path("int8")
    open_wait(qtbot, window, "A", f)
    open_wait(qtbot, window, "B", q)
    mq = Model(q)
    fc = next(op for op in mq.main.ops if op.type == "FULLY_CONNECTED")
    window.controller.select_op("B", fc.index)
    view = window.features.weights_view
    window.tabs.setCurrentWidget(view)
    view.channel_combo.setCurrentIndex(4)  # channel 3: its own grid
    quant = mq.main.tensors[fc.inputs[1]].quantization
    s, z = float(quant.scales[3]), int(quant.zero_points[3])
    view.zoom_to_grid()
    qtbot.wait(50)
    view.plot.grab()  # draw the axis
    axis = view.plot.getPlotItem().getAxis("bottom")
    x0, x1 = view.plot.getPlotItem().viewRange()[0]
    levels = axis.tickValues(x0, x1, axis.geometry().width())
    major = np.asarray(levels[0][1], np.float64)
    k = major / s + z
    assert major.size >= 3 and np.all(np.abs(k - np.round(k)) < 1e-6), (major, s, z)
    assert major[0] - x0 < levels[0][0] + 1e-12 and x1 - major[-1] < levels[0][0] + 1e-12  # the whole range
    labels = axis.tickStrings(list(major), 1.0, levels[0][0])
    assert np.allclose([float(t) for t in labels], major, atol=0.06 * levels[0][0])
    step = round(levels[0][0] / s)
    assert abs(levels[0][0] / s - step) < 1e-9 and np.all(np.round(k).astype(int) % step == 0)
    # zoomed out to the whole tensor, the usual ticks again
    view.fit_button.click()
    qtbot.wait(50)
    x0, x1 = view.plot.getPlotItem().viewRange()[0]
    if (x1 - x0) / s > 64:
        assert axis.tickValues(x0, x1, axis.geometry().width()) != levels
