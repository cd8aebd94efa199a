"""Runtime parity tab: runs model B on two runtimes in the worker process; the plot and table
show the same values as an independent `compare_runtimes` call; clicking selects the layer."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from inspector.core.compare.parity_result import ParityOptions
from inspector.core.compare.runtime_parity import compare_runtimes
from inspector.core.samples.settings import ALL, SampleSettings
from inspector.paths import example_inputs
from tests.helpers.gui_helpers import click_enabled, open_wait

RUN_MS = 60_000


def _run(qtbot, win):
    view = win.features.parity.view
    with qtbot.waitSignal(win.features.parity.controller.result_changed, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, view.run_button)
    qtbot.waitUntil(view.run_button.isEnabled, timeout=RUN_MS)  # the worker's done arrived
    return blocker.args[0]


def _click_point(qtbot, view, x: float, y: float) -> None:
    """A real mouse click at data point (x, y) of the share plot, through the scene."""
    from PySide6.QtCore import QPoint, QPointF

    vb = view.share_plot.getViewBox()
    qtbot.waitUntil(lambda: vb.viewRect().contains(QPointF(x, y)), timeout=5000)
    pos = view.plots.mapFromScene(vb.mapViewToScene(QPointF(x, y)))
    qtbot.mouseClick(view.plots.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(pos.x(), pos.y()))


def test_parity_tab_matches_core_and_selects_layers(qtbot, window, example_pair):
    fa, fb = (str(p) for p in example_pair)
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    view = window.features.parity.view
    window.tabs.setCurrentWidget(view)
    assert view.table.rowCount() == 0 and view.point_data()[0].size == 0  # empty state
    assert window.state.samples.source == str(example_inputs())  # the example's inputs
    assert "example_inputs.npz" in view.samples.text()
    view.side1.runtime.setCurrentIndex(view.side1.runtime.findData("reference"))
    view.side2.runtime.setCurrentIndex(view.side2.runtime.findData("optimized"))
    result = _run(qtbot, window)

    want = compare_runtimes(fb, ParityOptions(("reference", "optimized"), (1, 1),
                                              SampleSettings(count=ALL, source=str(example_inputs()))))  # fmt: skip
    assert result.to_json() == want.to_json()
    assert result.samples == len(np.load(example_inputs())["labels"]) and not result.samples_are_random
    assert len(want.layers) >= 10 and any(layer.differ_share > 0 for layer in want.layers)

    # table: one row per layer, the numbers of the independent run
    t = view.table
    assert t.rowCount() == len(want.layers)
    first = want.first_divergence
    assert first is not None
    for r, layer in enumerate(want.layers):
        op_cell = t.item(r, 0).text()
        assert op_cell == (f"◆ {layer.op_index}" if layer is first else str(layer.op_index))
        assert t.item(r, 1).text() == layer.op_type and t.item(r, 2).text() == layer.tensor_name
        share = t.item(r, 3).text()
        assert share.endswith(" %"), share  # one format in the column
        if layer.differ_share == 0:
            assert share == "0.00 %"
        else:
            assert share.endswith(" %") and abs(float(share.split()[0]) - 100 * layer.differ_share) <= 0.005
        assert t.item(r, 4).text() == ("n/a" if layer.max_lsb is None else f"{layer.max_lsb:g}")
        for col, side in ((5, "reference"), (6, "optimized")):
            cell = t.item(r, col).text()
            if layer.spec_mismatch is None:
                assert cell == "—"
            else:
                d = layer.spec_mismatch[side]
                assert (cell == "exact") == (d.differ_share == 0)
    assert t.horizontalHeaderItem(5).text() == "Spec: reference"
    assert any(t.item(r, 5).text() == "exact" for r in range(t.rowCount()))  # CONV/FC/ADD recomputed

    # plot: x = B's op index, y = share in % and max LSB
    x, y = view.point_data("share")
    np.testing.assert_array_equal(x, [layer.op_index for layer in want.layers])
    np.testing.assert_allclose(y, [100 * layer.differ_share for layer in want.layers], rtol=1e-12)
    _, lsb = view.point_data("lsb")
    np.testing.assert_allclose(lsb, [layer.max_lsb or 0.0 for layer in want.layers], rtol=1e-12)
    assert view.first_lines[0].isVisible() and view.first_lines[0].value() == first.op_index
    assert f"first divergence at op {first.op_index}" in view.headline.text()
    # its label is the plot's title, above the axes: never a text item over the points
    assert f"first divergence: op {first.op_index} {first.op_type}" in view.share_plot.titleLabel.text
    over = [it for it in view.share_plot.getViewBox().addedItems if isinstance(it, pg.TextItem) and it.isVisible()]
    assert not over, [it.textItem.toPlainText() for it in over]

    # clicking a layer (plot point, then a table row) selects B's op; selection elsewhere shows here
    target = want.layers[3]
    _click_point(qtbot, view, float(target.op_index), 100 * target.differ_share)
    assert window.controller.selection.op("B") == target.op_index
    assert t.selectionModel().selectedRows()[0].row() == 3
    assert list(view.rings[0].getData()[0]) == [target.op_index]
    t.selectRow(5)
    assert window.controller.selection.op("B") == want.layers[5].op_index
    window.controller.select_op("B", want.layers[2].op_index)
    assert t.selectionModel().selectedRows()[0].row() == 2

    # a new model B drops the result
    open_wait(qtbot, window, "B", fa)
    qtbot.waitUntil(lambda: window.features.parity.controller.result is None, timeout=5000)
    assert t.rowCount() == 0


def test_thread_counts_and_same_sides(qtbot, window, example_pair):
    open_wait(qtbot, window, "B", example_pair[1])
    view = window.features.parity.view
    for side in (view.side1, view.side2):
        side.runtime.setCurrentIndex(side.runtime.findData("optimized"))
    qtbot.mouseClick(view.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(window.banner.isVisible, timeout=5000)
    assert "Both sides are the same" in window.banner.text
    view.side2.threads.setValue(2)
    result = _run(qtbot, window)
    assert result.threads == (1, 2) and result.labels == ("optimized@1", "optimized@2")
    assert view.table.horizontalHeaderItem(6).text() == "Spec: optimized@2"
    assert view.table.rowCount() == len(result.layers) > 0


def test_cancel_keeps_the_previous_result(qtbot, window, example_pair):
    from tests.helpers.gui_helpers import use_random_samples

    open_wait(qtbot, window, "A", example_pair[0])
    open_wait(qtbot, window, "B", example_pair[1])
    view, pc = window.features.parity.view, window.features.parity.controller
    first = _run(qtbot, window)
    use_random_samples(window)
    window.features.compare_features.inputs.count.setValue(100_000)  # long
    assert window.state.samples.count == 100_000
    with qtbot.waitSignal(pc.cancelled, timeout=RUN_MS):
        with qtbot.waitSignal(pc.progress, timeout=RUN_MS):
            click_enabled(qtbot, view.run_button)
        assert view.cancel_button.isEnabled()
        qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(view.run_button.isEnabled, timeout=RUN_MS)  # after the worker's done
    assert pc.result is first and view.table.rowCount() == len(first.layers)
    assert view.run_button.isEnabled() and "Cancelled" in view.run_row.status.text()


def test_session_keeps_the_runtime_parity(qtbot, window, settings, example_pair, tmp_path):
    """Saved with the session, shown again when it is reopened in a new window (same numbers as
    the run); not restored for another model B; dropped when another B opens."""
    from inspector.core.state.session import load_session, save_session
    from inspector.gui.main_window import MainWindow

    fa, fb = (str(p) for p in example_pair)
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    result = _run(qtbot, window)
    path = tmp_path / "s.tqi.json"
    window.features.session.save(path)
    assert load_session(path)["results"]["parity"]["model"] == fb

    other = MainWindow(settings=settings)
    qtbot.addWidget(other)
    with qtbot.waitSignal(other.features.session.restored, timeout=RUN_MS):
        other.features.session.open(path)
    restored = other.features.parity.controller.result
    assert restored is not None and restored == result  # every field, the labels and inputs too
    view = other.features.parity.view
    assert view.table.rowCount() == len(result.layers)
    x, y = view.point_data()
    assert list(x) == [layer.op_index for layer in result.layers]
    np.testing.assert_allclose(y, [100 * layer.differ_share for layer in result.layers])
    assert "Restored" in other.statusBar().currentMessage() and other.banner.isHidden()

    # a session whose parity describes another model B: not shown, and said so
    state = load_session(path)
    state["results"]["parity"]["model"] = fa
    save_session(tmp_path / "other.tqi.json", state)
    third = MainWindow(settings=settings)
    qtbot.addWidget(third)
    with qtbot.waitSignal(third.features.session.restored, timeout=RUN_MS):
        third.features.session.open(tmp_path / "other.tqi.json")
    assert third.features.parity.controller.result is None and "runtime parity was not restored" in third.banner.text

    open_wait(qtbot, other, "B", fa)  # another model B: its parity is gone
    assert other.features.parity.controller.result is None and other.features.parity.view.table.rowCount() == 0
