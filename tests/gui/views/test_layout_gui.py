"""Layout: the model panes collapse so the tabs take the height; number columns are as wide
as their text (full values in tooltips); the SQNR column can show the isolated error."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.samples.settings import SampleSettings
from inspector.gui.views.tensor_table import COLUMNS, NUMBER_COLUMNS
from tests.helpers.gui_helpers import open_wait


@pytest.fixture(scope="module")
def isolated_result(fixture_path):
    fp, qp = fixture_path("float"), fixture_path("int8")
    return compare_models(str(fp), str(qp), CompareOptions(samples=SampleSettings(count=2), threads=1, isolated=True))


def test_panes_collapse_and_come_back(qtbot, window):
    window.resize(1280, 720)
    qtbot.wait(20)
    tabs_before = window.tabs.height()
    window.act_panes.trigger()  # F9
    qtbot.wait(20)
    assert window.panes_collapsed() and not window.act_panes.isChecked()
    assert window.tabs.height() > tabs_before + 150
    window.act_panes.trigger()
    qtbot.wait(20)
    assert not window.panes_collapsed() and window.act_panes.isChecked()
    assert window.main_splitter.sizes()[0] > 100
    # Dragging the handle to the top collapses too, and the menu follows.
    window.main_splitter.moveSplitter(0, 1)
    qtbot.wait(20)
    assert window.panes_collapsed() and not window.act_panes.isChecked()
    assert window.main_splitter.sizes()[1] > 0  # the tabs never collapse


def test_number_columns_fit_their_text(qtbot, window, fixture_path):
    window.resize(1280, 720)
    open_wait(qtbot, window, "B", fixture_path("int8"))
    table = window.panes["B"].tensors
    view, proxy = table.view, table.proxy
    fm = view.fontMetrics()
    for col in NUMBER_COLUMNS:
        texts = [proxy.index(r, col).data() for r in range(proxy.rowCount())]
        widest = max(fm.horizontalAdvance(t) for t in texts)
        assert view.columnWidth(col) >= widest + 8, (COLUMNS[col], widest, view.columnWidth(col))
        long = max(texts, key=len)
        if long and col >= 3:  # shape, scale, zero-point, channels, range: full value in the tooltip
            r = texts.index(long)
            assert long in proxy.index(r, col).data(Qt.ItemDataRole.ToolTipRole)


def test_sqnr_column_can_show_isolated_error(qtbot, window, fixture_path, isolated_result):
    open_wait(qtbot, window, "A", fixture_path("float"))
    open_wait(qtbot, window, "B", fixture_path("int8"))
    act = window.features.compare_features.act_isolated
    assert not act.isEnabled()
    window.features.compare.set_result(isolated_result)
    assert act.isEnabled() and not act.isChecked()
    ops = window.panes["B"].ops
    layer = next(la for la in isolated_result.layers if la.isolated is not None and la.isolated.sqnr_db < 90
                 and abs(la.isolated.sqnr_db - la.metrics.sqnr_db) > 0.01)  # fmt: skip
    cell = lambda: ops.data(ops.index(layer.op_index, 5))  # noqa: E731
    assert cell() == f"{layer.metrics.sqnr_db:.4g}" and ops.headerData(5, Qt.Orientation.Horizontal) == "SQNR"
    act.setChecked(True)
    assert cell() == f"{layer.isolated.sqnr_db:.4g}" and ops.headerData(5, Qt.Orientation.Horizontal) == "SQNR iso"
    act.setChecked(False)
    assert cell() == f"{layer.metrics.sqnr_db:.4g}"
    act.setChecked(True)
    window.features.compare.set_result(None)  # no isolated figures: back to the accumulated header, action off
    assert not act.isEnabled() and ops.headerData(5, Qt.Orientation.Horizontal) == "SQNR"


def test_plots_have_margins_and_empty_plots_no_axes(qtbot, window):
    """Every plot keeps a margin from the window edge; an empty plot shows its hint without axes."""
    from inspector.gui.views.plot_style import PLOT_MARGINS

    cf, rq = window.features.compare_features, window.features.requantize_panel
    plots = [window.features.weights_view.plot, cf.plot.plot, rq.tradeoff.plot, cf.activations.hist_plot, cf.activations.scatter_plot]
    for w in plots:
        item = w.getPlotItem()
        assert tuple(item.layout.getContentsMargins()) == pytest.approx(PLOT_MARGINS)
        assert not item.getAxis("left").isVisible() and not item.getAxis("bottom").isVisible()
    assert not window.features.weights_view.legend.isVisible() and not cf.activations.legend.isVisible()


@pytest.mark.parametrize("size", [(1280, 720), (1600, 1000)])
def test_op_math_tables_show_all_tensor_rows_and_whole_headers(qtbot, window, fixture_path, size):
    window.resize(*size)
    open_wait(qtbot, window, "A", fixture_path("float"))
    open_wait(qtbot, window, "B", fixture_path("int8"))
    panel = window.features.opmath.op_math_panel
    window.tabs.setCurrentWidget(panel)
    conv = next(op for op in window.controller.subgraph("B").ops if op.type == "CONV_2D")
    window.controller.select_op("B", conv.index)
    qtbot.wait(30)
    t = panel.tensor_table
    assert t.rowCount() >= 4  # input, weights, bias, output
    shown = t.viewport().height()
    assert shown >= sum(t.rowHeight(r) for r in range(t.rowCount())), "every tensor row visible"
    for table in (t, panel.detail_table):
        fm = table.horizontalHeader().fontMetrics()
        for c in range(table.columnCount()):
            head = table.horizontalHeaderItem(c).text()
            assert table.columnWidth(c) >= fm.horizontalAdvance(head), head  # header text not cut
            for r in range(table.rowCount()):
                text = table.cell_text(r, c)
                if text and table.columnWidth(c) < fm.horizontalAdvance(text):
                    assert table.item(r, c).toolTip() == text  # a cut value has its full text in the tooltip


@pytest.mark.parametrize("size", [(1280, 720), (1600, 1000)])
def test_exact_line_label_has_room_above_the_data(qtbot, window, fixture_path, isolated_result, size):
    """The '∞ or ≥ 100 dB' line sits at the top of the data; its label must fit inside the plot."""
    window.resize(*size)
    open_wait(qtbot, window, "A", fixture_path("float"))
    open_wait(qtbot, window, "B", fixture_path("int8"))
    cf = window.features.compare_features
    window.tabs.setCurrentWidget(cf.page)
    window.features.compare.set_result(isolated_result)
    qtbot.wait(50)
    plot = cf.plot
    if not plot.exact_line.isVisible():
        pytest.skip("no exact layer in this comparison")
    vb = plot.plot.getPlotItem().getViewBox()
    (_, _), (y0, y1) = vb.viewRange()
    px_per_unit = vb.height() / (y1 - y0)
    room_px = (y1 - plot.exact_line.value()) * px_per_unit
    assert room_px >= plot.fontMetrics().height()


def test_delta_table_numbers_and_headers_whole(qtbot, fixture_path, isolated_result):
    from inspector.core.requantize.delta import version_delta
    from inspector.gui.requantize.versions_view import DELTA_COLUMNS, VersionsView

    fp, qp = fixture_path("float"), fixture_path("int8")
    other = compare_models(str(fp), str(qp), CompareOptions(samples=SampleSettings(count=3, seed=4), threads=1))
    view = VersionsView()
    qtbot.addWidget(view)
    view.resize(640, 400)
    view.show()
    view.set_delta(version_delta(isolated_result, other, 1000, 900, ("v0", "v1")))
    t = view.deltas
    assert t.rowCount() == len(other.layers)
    fm = t.fontMetrics()
    for c in (DELTA_COLUMNS.index(h) for h in ("#", "SQNR before", "SQNR after", "Δ dB")):
        assert t.columnWidth(c) >= t.horizontalHeader().fontMetrics().horizontalAdvance(DELTA_COLUMNS[c]), DELTA_COLUMNS[c]
        for r in range(t.rowCount()):
            assert t.columnWidth(c) >= fm.horizontalAdvance(t.item(r, c).text()), (r, c, t.item(r, c).text())


def test_op_list_shows_all_rows_when_the_pane_has_room(qtbot, window, fixture_path):
    window.resize(1600, 1000)
    open_wait(qtbot, window, "B", fixture_path("int8"))
    pane = window.panes["B"]
    window.main_splitter.setSizes([760, 240])  # a tall pane (as after dragging the handle down)
    qtbot.wait(30)
    v = pane.op_view
    rows = pane.ops.rowCount() * v.verticalHeader().defaultSectionSize()
    assert v.viewport().height() >= rows, "every op visible"
    assert pane.tensors.height() > 0.3 * pane.splitter.height()  # the tensor table keeps its share
    window.main_splitter.setSizes([300, 700])  # short pane: the op list takes at most 60 %
    qtbot.wait(30)
    assert pane.splitter.sizes()[0] <= 0.61 * sum(pane.splitter.sizes())


def test_three_banners_take_one_line_each_at_1280x720(qtbot, window):
    """An error, a pair warning and the random-inputs notice at once: each one line (elided,
    whole text in the tooltip and `text`), "More" unfolds one, "Less" folds it back."""
    from inspector.gui.pair.feature import RANDOM_TEXT

    window.resize(1280, 720)
    long_warning = "Not a float model and its quantized twin: " + "; ".join(f"reason {i} with its figures" for i in range(12)) + "."
    window.banner.show_message("model.tflite: the worker process was killed (signal SIGKILL)")
    window.features.pair.pair_banner.show_message(long_warning)
    window.features.pair.random_banner.show_message(RANDOM_TEXT)
    qtbot.waitUntil(lambda: window.features.pair.pair_banner.label.width() > 0)
    banners = (window.banner, window.features.pair.pair_banner, window.features.pair.random_banner)
    line = window.banner.label.fontMetrics().lineSpacing()
    for b in banners:
        assert b.isVisible() and b.label.height() < 2 * line, b.text
    warn = window.features.pair.pair_banner
    assert warn.text == long_warning and warn.label.toolTip() == long_warning
    assert warn.label.text().endswith("…") and warn.label.text() != long_warning
    assert warn.more_button.isVisible() and not window.banner.more_button.isVisible()  # the short error fits
    qtbot.mouseClick(warn.more_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: warn.label.height() >= 2 * line)
    assert warn.label.text() == long_warning and warn.more_button.text() == "Less"
    qtbot.mouseClick(warn.more_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: warn.label.height() < 2 * line)
    assert warn.label.text().endswith("…")
