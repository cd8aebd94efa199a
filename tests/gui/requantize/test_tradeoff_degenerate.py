"""Issue 19 §2: the trade-off plot when every point coincides (one size, one SQNR): a readable
axis around the point (no '-1e-296' ticks) and labels that do not overlap."""

from __future__ import annotations

import pytest

from inspector.core.requantize.plan import Plan
from inspector.core.requantize.suggest import SuggestResult, TradeoffPoint
from inspector.gui.app import make_app
from inspector.gui.requantize.tradeoff_plot import TradeoffPlot


@pytest.fixture
def plot(qtbot):
    make_app()
    w = TradeoffPlot()
    qtbot.addWidget(w)
    w.resize(640, 360)
    w.show()
    return w


def _suggest(points) -> SuggestResult:
    return SuggestResult(target_sqnr_db=None, max_layers=2, treatment="keep_float", base="int8", met=False,
                         layers=[], plan=Plan(base="int8"), points=points)  # fmt: skip


def test_coinciding_points_get_a_readable_axis_and_separate_labels(plot, qtbot):
    size = 91_234
    pts = [TradeoffPoint("b.tflite (given)", (), size, 31.5), TradeoffPoint("keep", (3,), size, 31.5),
           TradeoffPoint("keep", (7,), size, 31.5), TradeoffPoint("keep", (3, 7), size, 31.5)]  # fmt: skip
    plot.set_suggestion(_suggest(pts))
    qtbot.wait(20)
    (x0, x1), (y0, y1) = plot.plot.getPlotItem().viewRange()
    assert x0 < size / 1024 < x1 and x1 - x0 >= 1.0, (x0, x1)
    assert y0 < 31.5 < y1 and y1 - y0 >= 2.0, (y0, y1)
    for name in ("bottom", "left"):
        axis = plot.plot.getPlotItem().getAxis(name)
        lo, hi = (x0, x1) if name == "bottom" else (y0, y1)
        for _spacing, values in axis.tickValues(lo, hi, 600):
            assert not any(0 < abs(v) < 1e-6 for v in values), values
    # every drawn label in its own box: pixel rectangles of the text items do not intersect
    rects = [t.mapRectToScene(t.boundingRect()) for t in plot.labels]
    assert len(rects) >= 2
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert not a.intersects(b), (a, b)


def test_labels_placed_again_when_the_plot_is_shown_at_its_size(qtbot):
    """Filled while hidden (default size), then shown small: the labels are placed for the size
    shown and do not overlap (Suggest fills the plot before its tab is made current)."""
    make_app()
    w = TradeoffPlot()
    qtbot.addWidget(w)
    pts = [TradeoffPoint("b.tflite (given)", (), 80_000, 30.0)] + [
        TradeoffPoint("keep", (k,), 80_000 + 300 * k, 30.0 + 0.2 * k) for k in range(1, 9)]  # fmt: skip
    w.set_suggestion(_suggest(pts))  # hidden: laid out for the default size
    w.resize(380, 260)
    w.show()
    qtbot.waitExposed(w)
    qtbot.wait(20)
    rects = [t.mapRectToScene(t.boundingRect()) for t in w.labels]
    assert rects
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert not a.intersects(b), (a, b)
