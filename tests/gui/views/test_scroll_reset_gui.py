"""Issue 27 §12: scroll positions carried over between pairs. Opening another pair starts its
tables at the top (op lists, tensor tables, the worst-samples table and every other table of the
window); switching between versions of model B of the same pair keeps them (the same spot in v1
and v2 is what a user compares)."""

from __future__ import annotations

import shutil

from PySide6.QtWidgets import QAbstractItemView

from tests.helpers.gui_helpers import click_enabled, open_pair_checked


def _scrolled(window) -> dict[str, int]:
    return {f"{type(v.parentWidget()).__name__}.{v.objectName() or type(v).__name__}#{i}": v.verticalScrollBar().value()
            for i, v in enumerate(window.findChildren(QAbstractItemView)) if v.verticalScrollBar().value()}


def test_another_pair_starts_its_tables_at_the_top(qtbot, window, cnn_pair, tmp_path):
    window.resize(1280, 800)
    open_pair_checked(qtbot, window, *cnn_pair)
    window.features.compare_features.inputs.count.setValue(40)
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=120_000):
        click_enabled(qtbot, window.features.compare_features.inputs.run_button)
    worst = window.features.compare_features.worst.table
    window.tabs.setCurrentWidget(window.features.compare_features.page)
    qtbot.wait(50)
    views = {"A ops": window.panes["A"].op_view, "B ops": window.panes["B"].op_view,
             "B tensors": window.panes["B"].tensors.view, "worst samples": worst}
    for view in views.values():
        view.scrollToBottom()
    qtbot.wait(50)
    moved = {k: v.verticalScrollBar().value() for k, v in views.items()}
    assert all(moved.values()), moved  # each had something to scroll

    other = [tmp_path / "other_float.tflite", tmp_path / "other_int8.tflite"]  # another pair, the same ops
    for src, dst in zip(cnn_pair, other, strict=True):
        shutil.copy(src, dst)
    open_pair_checked(qtbot, window, *other)
    qtbot.wait(50)
    assert {k: v.verticalScrollBar().value() for k, v in views.items()} == dict.fromkeys(views, 0)
    assert _scrolled(window) == {}


def test_another_version_of_b_keeps_the_spot(qtbot, window, cnn_pair, tmp_path):

    from inspector.core.state.versions import Version

    window.resize(1280, 800)
    fa, fb = (str(p) for p in cnn_pair)
    open_pair_checked(qtbot, window, fa, fb)
    v1 = str(tmp_path / "v1.tflite")
    shutil.copyfile(fb, v1)  # a copy stands for an edited version
    rq = window.features.requantize
    rq.versions.append(Version(1, "v1 edit", v1, fa, "edited", source=fb))
    views = [window.panes["A"].op_view, window.panes["B"].op_view, window.panes["B"].tensors.view]
    for view in views:
        view.scrollToBottom()
    before = [v.verticalScrollBar().value() for v in views]
    assert all(before)
    with qtbot.waitSignal(window.controller.pair_changed, timeout=20_000):
        window.features.requantize_panel.versions.switch_requested.emit(1)  # as the versions table does
    qtbot.wait(50)
    assert window.controller.models["B"].path == v1
    assert [v.verticalScrollBar().value() for v in views] == before
