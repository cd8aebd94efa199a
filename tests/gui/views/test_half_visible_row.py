"""Clicking a half-visible row at the bottom of B's op list selects that row, and the list shows
that row selected (it scrolled under the pointer during the press, and the release then
highlighted the next row while the app acted on the clicked one)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt

from inspector.paths import example_pair
from tests.helpers.gui_helpers import open_wait


def _half_visible_bottom_row(view) -> int | None:
    vp = view.viewport().rect()
    for row in range(view.model().rowCount()):
        r = view.visualRect(view.model().index(row, 0))
        if r.top() < vp.bottom() < r.bottom() and vp.bottom() - r.top() >= 4:
            return row
    return None


def test_clicking_a_half_visible_row_selects_and_shows_that_row(qtbot, window):
    a, b = example_pair()
    open_wait(qtbot, window, "A", a)
    open_wait(qtbot, window, "B", b)
    pane = window.panes["B"]
    view = pane.op_view
    row_h = view.verticalHeader().defaultSectionSize()
    total = sum(pane.splitter.sizes())
    for extra in range(row_h):  # an op list height that cuts a row in half at the bottom
        pane.splitter.setSizes([3 * row_h + row_h // 2 + extra, total - 3 * row_h])
        qtbot.wait(20)
        row = _half_visible_bottom_row(view)
        if row is not None and view.viewport().rect().bottom() - view.visualRect(view.model().index(row, 0)).top() <= row_h // 2:
            break
    assert row is not None and view.model().rowCount() > row + 1
    rect = view.visualRect(view.model().index(row, 0))
    pos = QPoint(rect.center().x(), rect.top() + 2)  # on the row's visible top part
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    qtbot.wait(50)
    assert window.controller.selection.op("B") == row  # what the app acts on
    assert pane.selected_op() == row  # what the list highlights
    assert view.currentIndex().row() == row
