"""The layer-error plot draws what it says (issue 19 §2, issue 18 §1): the selected-layer ring
follows the metric, ∞ / ≥ 100 dB is one labelled stand-in line, integer shape ops are not on the
error curve, and clicks emit B's op index. Results are built by hand so every value is known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from inspector.core.compare.result import ComparisonResult, LayerResult
from inspector.core.stats.metrics import Metrics
from inspector.core.stats.sqnr_scale import EXACT_TICK
from inspector.gui.app import make_app
from inspector.gui.views.layer_error_plot import LayerErrorPlot


def _m(sqnr: float, clip: float | None = 0.0, use: float | None = 0.5) -> Metrics:
    mse = 0.0 if math.isinf(sqnr) else 10 ** (-sqnr / 10)
    return Metrics(mse=mse, sqnr_db=sqnr, max_abs=math.sqrt(mse) * 3, mean_error=0.0, cosine=0.99,
                   rmse_over_scale=None, clip_rate=clip, range_use=use, count=10)  # fmt: skip


def _layer(op: int, sqnr: float, op_type: str = "CONV_2D", dtype: str = "int8", **kw) -> LayerResult:
    scale = (0.1,) if dtype in ("int8", "int16") else None
    return LayerResult(op_index=op, op_type=op_type, tensor_name=f"t{op}", float_tensor=100 + op, quant_tensor=op,
                       match="name", metrics=_m(sqnr, **kw), dtype=dtype, scale=scale)  # fmt: skip


def _result(layers) -> ComparisonResult:
    return ComparisonResult("a.tflite", "b.tflite", "optimized", "", 4, tuple(layers), (), ())


@pytest.fixture
def plot(qtbot):
    make_app()
    w = LayerErrorPlot()
    qtbot.addWidget(w)
    w.resize(900, 400)
    w.show()
    return w


def test_ring_follows_the_metric_and_never_stretches_the_axis(plot):
    layers = [_layer(1, 35.0, clip=0.001, use=0.9), _layer(3, 12.0, clip=0.02, use=0.4), _layer(5, 48.0, clip=0.0, use=0.7)]
    plot.set_result(_result(layers))
    plot.set_selected(3)  # B's op index
    assert plot.ring.getData()[1].tolist() == [12.0]
    for key, want in (("range_use", 0.4), ("clip_rate", 0.02)):
        plot.set_metric(key)
        x, y = plot.ring.getData()
        assert (x.tolist(), y.tolist()) == ([3.0], [pytest.approx(want)]), key
        lo, hi = plot.plot.getPlotItem().getViewBox().childrenBounds()[1]
        assert hi < 1.5, f"{key}: the y extent reaches {hi} (the SQNR height of the ring)"


def test_exact_line_has_one_label_and_no_numeric_tick_at_or_above_it(plot):
    layers = [_layer(0, 22.0), _layer(1, math.inf, op_type="MAX_POOL_2D"), _layer(2, 140.0, op_type="RESHAPE"), _layer(3, 41.0)]
    plot.set_result(_result(layers))
    top = plot.exact_line.value()
    assert plot.exact_line.isVisible() and top == 60.0  # 10 dB above the best finite SQNR, rounded
    _x, y = plot.point_data()
    assert sorted(y.tolist()) == [22.0, 41.0, 60.0, 60.0]
    ticks = plot.plot.getPlotItem().getAxis("left")._tickLevels[0]
    labels = dict(ticks)
    assert labels[top] == EXACT_TICK
    assert all(float(v) < top - 1 for v, text in ticks if text != EXACT_TICK), ticks
    assert all(text != "60" and text != "100" for _v, text in ticks)
    plot.set_metric("mse")  # other metrics: the default numeric axis again
    assert plot.plot.getPlotItem().getAxis("left")._tickLevels is None


def test_integer_shape_ops_are_not_on_the_error_curve(plot):
    layers = [_layer(0, 30.0), _layer(1, math.inf, op_type="SHAPE", dtype="int32"),
              _layer(2, math.inf, op_type="STRIDED_SLICE", dtype="int32"), _layer(3, math.inf, op_type="PACK", dtype="int32"),
              _layer(4, 25.0), _layer(5, 20.0)]  # fmt: skip
    plot.set_result(_result(layers))
    x, y = plot.point_data()
    assert x.tolist() == [0.0, 4.0, 5.0] and y.tolist() == [30.0, 25.0, 20.0]
    cx, cy = plot.curves["accumulated"].getData()
    assert np.asarray(cx).tolist() == [0.0, 4.0, 5.0]
    assert not plot.exact_line.isVisible()  # no spike to a stand-in line either
    assert "3 integer shape ops (SHAPE, STRIDED_SLICE, PACK) not drawn" in plot.title.text()


def test_clicks_emit_b_op_index(plot, qtbot):
    layers = [_layer(2, 30.0), _layer(7, 25.0), _layer(9, 20.0)]
    plot.set_result(_result(layers))
    with qtbot.waitSignal(plot.layer_clicked) as blocker:
        plot.click_layer(1)
    assert blocker.args == [7] and plot.selected == 7
    assert plot.ring.getData()[0].tolist() == [7.0]
