"""Issue 35, item 9: the tensor tables' filter and sort carried over to another pair (a filter
typed for the old pair hid the new pair's tensors). Another pair starts unfiltered, sorted by #;
another version of model B of the same pair keeps them, like the scroll positions, its rows in
the order the sort arrow shows."""

from __future__ import annotations

import shutil

from PySide6.QtCore import Qt

from inspector.core.state.versions import Version
from tests.helpers.gui_helpers import open_pair_checked


def _narrow(table) -> None:
    table.filter_edit.setText("conv")
    table.kind_combo.setCurrentIndex(table.kind_combo.findText("Constants"))
    table.view.sortByColumn(1, Qt.SortOrder.DescendingOrder)


def _state(table) -> tuple[str, str, int, Qt.SortOrder, int]:
    h = table.view.horizontalHeader()
    return table.filter_edit.text(), table.kind_combo.currentText(), h.sortIndicatorSection(), h.sortIndicatorOrder(), table.proxy.rowCount()


def test_another_pair_starts_unfiltered_and_another_version_keeps_the_filter(qtbot, window, cnn_pair, tmp_path):
    fa, fb = (str(p) for p in cnn_pair)
    open_pair_checked(qtbot, window, fa, fb)
    tables = [window.panes[s].tensors for s in "AB"]
    every = [len(window.controller.models[s].main.tensors) for s in "AB"]
    for t in tables:
        _narrow(t)
    narrowed = [_state(t) for t in tables]
    assert all(st[:4] == ("conv", "Constants", 1, Qt.SortOrder.DescendingOrder) for st in narrowed)
    assert all(0 < st[4] < n for st, n in zip(narrowed, every, strict=True))  # the filter hides tensors

    v1 = str(tmp_path / "v1.tflite")  # another version of B (a copy stands for an edit): kept
    shutil.copyfile(fb, v1)
    window.features.requantize.state.add_version(Version(1, "v1 edit", v1, fa, "edited", source=fb))
    with qtbot.waitSignal(window.controller.pair_changed, timeout=20_000):
        window.features.requantize.switch_to(1)
    assert [_state(t) for t in tables] == narrowed
    b = window.controller.models["B"].main
    names = [b.tensors[i].name for i in tables[1].visible_tensors()]
    assert names == sorted(names, reverse=True)  # and its rows in that order (they came in # order)

    other = [tmp_path / "other_float.tflite", tmp_path / "other_int8.tflite"]  # another pair
    for src, dst in zip(cnn_pair, other, strict=True):
        shutil.copy(src, dst)
    open_pair_checked(qtbot, window, *other)
    assert [_state(t) for t in tables] == [("", "All tensors", 0, Qt.SortOrder.AscendingOrder, n) for n in every]
    assert tables[1].visible_tensors() == list(range(every[1]))  # in # order, none hidden
