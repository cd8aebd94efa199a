"""Main window: open models (menu intents, drops, recent files), linked selection, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QThread, QUrl
from PySide6.QtGui import QDropEvent, QKeySequence
from PySide6.QtWidgets import QApplication

from inspector import __version__
from inspector.core.compare.pairing import pair_models
from inspector.core.tflite.model import Model
from inspector.gui.main_window import MainWindow
from tests.helpers.gui_helpers import open_wait


def _click_op(win: MainWindow, slot: str, op: int) -> None:
    """What a click on an op row does: make it current in the view."""
    view = win.panes[slot].op_view
    sm = view.selectionModel()
    sm.setCurrentIndex(win.panes[slot].ops.index(op, 0), sm.SelectionFlag.ClearAndSelect | sm.SelectionFlag.Rows)


def _click_tensor(win: MainWindow, slot: str, tensor: int) -> None:
    table = win.panes[slot].tensors
    idx = table.proxy.mapFromSource(table.model.index(tensor, 0))
    sm = table.view.selectionModel()
    sm.setCurrentIndex(idx, sm.SelectionFlag.ClearAndSelect | sm.SelectionFlag.Rows)


@pytest.mark.parametrize("pair", ["fixtures", "example"])
def test_linked_selection_both_ways(qtbot, window, fixture_path, example_pair, pair):
    fpath, qpath = (fixture_path("float"), fixture_path("int8")) if pair == "fixtures" else example_pair
    on_gui = []
    window.controller.slot_changed.connect(lambda _s: on_gui.append(QThread.currentThread() is QApplication.instance().thread()))
    open_wait(qtbot, window, "A", fpath)
    open_wait(qtbot, window, "B", qpath)
    assert on_gui == [True, True]
    mf, mq = Model(fpath), Model(qpath)
    pairing = pair_models(mf, mq)
    assert window.panes["A"].ops.rowCount() == len(mf.main.ops)
    assert window.panes["B"].tensors.model.rowCount() == len(mq.main.tensors)
    assert pairing.ops, "the fixture pair must have matched ops"
    for p in pairing.ops:  # every layer, from B to A and from A to B
        _click_op(window, "B", p.quant_op)
        assert window.panes["A"].selected_op() == p.float_op
        assert mf.main.ops[p.float_op].type == mq.main.ops[p.quant_op].type
        _click_op(window, "A", p.float_op)
        assert window.panes["B"].selected_op() == p.quant_op
    # QUANTIZE/DEQUANTIZE inserted by the converter have no float counterpart.
    q0 = mq.main.ops[0]
    if q0.type == "QUANTIZE":
        _click_op(window, "B", 0)
        assert window.panes["A"].selected_op() is None
    # Tensors: a weight tensor selected in A selects its quantized twin in B.
    conv = next(op for op in mf.main.ops if op.type == "CONV_2D")
    wt = conv.inputs[1]
    _click_tensor(window, "A", wt)
    qt = window.panes["B"].tensors.selected_tensor()
    assert qt == pairing.quant_for_float(wt)
    assert mq.main.tensors[qt].dtype == "int8" and mq.main.tensors[qt].shape == mf.main.tensors[wt].shape
    assert window.controller.selection.tensor_a == wt and window.controller.selection.tensor_b == qt


def test_selecting_a_layer_selects_its_weight_tensor(qtbot, window, example_pair):
    open_wait(qtbot, window, "A", example_pair[0])
    open_wait(qtbot, window, "B", example_pair[1])
    mq = Model(example_pair[1])
    dw = next(op for op in mq.main.ops if op.type == "DEPTHWISE_CONV_2D")
    _click_op(window, "B", dw.index)
    assert window.panes["B"].tensors.selected_tensor() == dw.inputs[1]
    assert window.features.weights_view.analysis.b.name == mq.main.tensors[dw.inputs[1]].name


@pytest.mark.parametrize("kind", ["not_tflite", "truncated", "missing", "empty"])
def test_bad_file_shows_error_and_keeps_the_other_model(qtbot, window, fixture_path, tmp_path, kind):
    open_wait(qtbot, window, "A", fixture_path("float"))
    open_wait(qtbot, window, "B", fixture_path("int8"))
    bad = tmp_path / f"{kind}.tflite"
    if kind == "not_tflite":
        bad.write_text("this is a text file, not a model\n" * 20)
    elif kind == "truncated":
        bad.write_bytes(Path(fixture_path("int8")).read_bytes()[:2000])
    elif kind == "empty":
        bad.write_bytes(b"")
    open_wait(qtbot, window, "B", bad)
    assert window.banner.isVisible()
    text = window.banner.text
    assert str(bad) in text and "model B" in text
    problem = {"missing": "cannot read", "empty": "empty"}.get(kind)
    if problem:
        assert problem in text
    # The previous B and A stay loaded and usable.
    assert window.controller.models["B"].path == str(fixture_path("int8"))
    assert window.controller.models["A"] is not None
    _click_op(window, "B", 1)
    assert window.panes["A"].selected_op() == window.controller.counterpart_op("B", 1) is not None
    # A good file afterwards clears the banner for that slot.
    open_wait(qtbot, window, "B", fixture_path("int8_per_tensor"))
    assert not window.banner.isVisible()


def test_lone_model_works(qtbot, window, fixture_path):
    w = window.open_model("B", fixture_path("int8"))  # in a worker, with progress in the status bar
    assert window.tasks.isVisible() and "Opening int8.tflite" in window.tasks.label.text()
    with qtbot.waitSignal(w.done, timeout=20_000):
        pass
    assert not window.tasks.isVisible() and window.controller.models["B"] is not None
    assert window.controller.models["A"] is None and window.panes["A"].stack.currentIndex() == 0
    mq = Model(fixture_path("int8"))
    conv = next(op for op in mq.main.ops if op.type == "CONV_2D")
    _click_op(window, "B", conv.index)
    w = window.features.weights_view.analysis
    assert w is not None and w.a is None and w.metrics is None
    assert not window.features.weights_view.curve_a.isVisible() and window.features.weights_view.curve_b.isVisible()
    q = mq.main.tensors[conv.inputs[1]].quantization
    assert len(window.features.per_channel_view.scale_points.getOriginalDataset()[1]) == q.num_channels
    assert window.panes["A"].selected_op() is None
    window.controller.close_model("B")
    assert window.features.weights_view.analysis is None and window.panes["B"].stack.currentIndex() == 0


def _drop(target, paths):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    ev = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    target.dropEvent(ev)


def test_drag_and_drop(qtbot, window, fixture_path):
    f, q = fixture_path("float"), fixture_path("int8")
    with qtbot.waitSignals([window.controller.slot_changed] * 2, timeout=20_000):
        _drop(window, [f, q])  # onto the window: first -> A, second -> B
    qtbot.waitUntil(lambda: all(window.controller.models.values()), timeout=20_000)
    assert window.controller.models["A"].path == str(f) and window.controller.models["B"].path == str(q)
    with qtbot.waitSignal(window.controller.slot_changed, timeout=20_000) as blocker:
        _drop(window.panes["B"], [fixture_path("dynamic")])  # onto a pane: that pane's slot
    assert blocker.args == ["B"] and window.controller.models["B"].path == str(fixture_path("dynamic"))
    assert window.controller.models["A"].path == str(f)


def test_recent_files_geometry_shortcuts_about(qtbot, window, settings, fixture_path):
    open_wait(qtbot, window, "A", fixture_path("float"))
    open_wait(qtbot, window, "B", fixture_path("int8"))
    entries = window.recent.entries()
    assert entries[:2] == [("B", str(Path(fixture_path("int8")).resolve())), ("A", str(Path(fixture_path("float")).resolve()))]
    window._fill_recent()
    acts = [a for a in window.recent_menu.actions() if a.text().endswith("(A)")]
    window.controller.close_model("A")
    with qtbot.waitSignal(window.controller.slot_changed, timeout=20_000):
        acts[0].trigger()
    assert window.controller.models["A"].path == str(Path(fixture_path("float")).resolve())
    assert window.act_open_a.shortcut() == QKeySequence("Ctrl+O")
    assert window.act_open_b.shortcut() == QKeySequence("Ctrl+Shift+O")
    assert window.act_quit.shortcut() == QKeySequence("Ctrl+Q")
    assert window.act_about.shortcut() == QKeySequence("F1")
    window.act_about.trigger()
    assert window._about.isVisible() and __version__ in window._about.text()
    window._about.close()
    window.resize(760, 560)  # within the offscreen screen (restoreGeometry keeps windows on screen)
    window.act_quit.trigger()  # closes and saves the layout
    assert not window.isVisible()
    again = MainWindow(settings=settings)
    qtbot.addWidget(again)
    assert (again.width(), again.height()) == (760, 560)


def test_cli_gui_passes_both_paths(monkeypatch, fixture_path):
    import inspector.gui.app as app
    from inspector.cli import main

    got = []
    monkeypatch.setattr(app, "run_app", lambda f, q: got.append((f, q)) or 0)
    f, q = str(fixture_path("float")), str(fixture_path("int8"))
    assert main(["gui", f, q]) == 0 and main([f, q]) == 0
    assert got == [(f, q), (f, q)]


def test_self_test_render(example_pair):
    from inspector.gui.app import render_self_test

    w, h, colours = render_self_test(str(example_pair[0]), str(example_pair[1]))
    # the grab is of the window as laid out (the size is what was asked) and painted: panes,
    # tables and the weight histogram give many colours; an unpainted grab has a handful
    assert (w, h) == (1400, 900) and colours > 100
