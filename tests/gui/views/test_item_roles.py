"""Tables answer a cell's roles in one call into Python (`gui/views/item_roles.py`): the same
pixels as Qt's role-by-role path, one call per painted cell instead of about ten, and no call
per row when a new model arrives and no tensor filter is on (issue 35: each call into Python
waited for the interpreter lock while a Worker thread ran Python)."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTableView

from inspector.core.tflite.model import Model
from inspector.gui.views.item_roles import ForwardingFilterProxy, MultiRoleTableModel
from inspector.gui.views.model_pane import OpListModel
from inspector.gui.views.tensor_table import FILTER_ROLE, TensorTableModel
from tests.helpers.many_op_fixtures import residual_pair
from tests.helpers.paths import REPO


class _Cells:
    """Cells with text, colours and alignment: what a delegate asks for."""

    calls = 0

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else 60

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else 5

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        type(self).calls += 1
        r, c = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{r}·{c}" if c != 3 else f"{r * 1.25:.2f}"
        if role == Qt.ItemDataRole.BackgroundRole and (r + c) % 4 == 0:
            return QColor("#d9534f")
        if role == Qt.ItemDataRole.ForegroundRole and c == 2:
            return QColor("#1f4e9e")
        if role == Qt.ItemDataRole.TextAlignmentRole and c == 3:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class PerRole(_Cells, QAbstractTableModel):
    calls = 0


class OneCall(_Cells, MultiRoleTableModel):
    calls = 0


def _shown(qtbot, model) -> QTableView:
    view = QTableView()
    view.setModel(model)
    view.resize(420, 300)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    return view


def test_one_call_per_cell_paints_the_same_pixels(qtbot):
    """Qt's own role-by-role path is the reference: the same cells, pixel for pixel."""
    per_role, one_call = _shown(qtbot, PerRole()), _shown(qtbot, OneCall())
    PerRole.calls = OneCall.calls = 0
    a, b = per_role.grab().toImage(), one_call.grab().toImage()
    assert a == b
    assert PerRole.calls > 0 and OneCall.calls > 0  # both painted their cells


def test_a_filter_proxy_passes_the_one_call_on(qtbot):
    src = OneCall()
    proxy = ForwardingFilterProxy()
    proxy.setSourceModel(src)
    plain = QSortFilterProxyModel()
    plain.setSourceModel(PerRole())
    assert _shown(qtbot, proxy).grab().toImage() == _shown(qtbot, plain).grab().toImage()


def test_painting_the_op_list_of_1500_ops_calls_python_once_per_cell(qtbot):
    """Counted from C++: calls of `multiData` plus calls of `data` not made by it. Before: about
    ten per painted cell (the delegate's roles), each a take of the interpreter lock."""
    _fa, fb = residual_pair(REPO / ".fixture-cache")
    sg = Model(fb).main
    entries = {"multi": 0, "data": 0}
    inside = [False]

    class Counted(OpListModel):
        def multiData(self, index, span) -> None:  # noqa: N802
            entries["multi"] += 1
            inside[0] = True
            try:
                super().multiData(index, span)
            finally:
                inside[0] = False

        def data(self, index, role=Qt.ItemDataRole.DisplayRole):
            if not inside[0]:
                entries["data"] += 1
            return super().data(index, role)

    model = Counted()
    model.set_subgraph(sg)
    view = _shown(qtbot, model)
    view.resize(900, 600)
    qtbot.wait(20)
    entries.update(multi=0, data=0)
    view.viewport().repaint()
    first, last = view.rowAt(0), view.rowAt(view.viewport().height() - 1)
    rows = (last if last >= 0 else model.rowCount() - 1) - first + 1
    cells = rows * model.columnCount()
    assert rows > 5 and len(sg.ops) == 1502
    assert entries["multi"] <= cells, entries  # one call per painted cell
    assert entries["data"] <= rows, entries  # role-by-role questions from C++: almost none left


def test_no_call_per_row_without_a_tensor_filter(qtbot):
    """A new 1,500-op model through the tensor filter: with no filter on, Qt's filter lets every
    row through without asking Python; with one on, it asks each row once and keeps those the
    filter accepts."""
    from inspector.gui.views.tensor_table import TensorFilter

    _fa, fb = residual_pair(REPO / ".fixture-cache")
    m = Model(fb)
    asked = {"filter": 0}

    class Counted(TensorTableModel):
        def data(self, index, role=Qt.ItemDataRole.DisplayRole):
            if role == FILTER_ROLE:
                asked["filter"] += 1
            return super().data(index, role)

    src = Counted()
    proxy = TensorFilter()
    proxy.setSourceModel(src)
    src.set_subgraph(m.main, m)
    assert proxy.rowCount() == len(m.main.tensors) > 3000 and asked["filter"] == 0
    proxy.set_filter(kind="Constants")
    expect = [t.index for t in m.main.tensors if t.is_constant]
    shown = [src.tensor_at(proxy.mapToSource(proxy.index(r, 0)).row()) for r in range(proxy.rowCount())]
    assert sorted(shown) == expect and asked["filter"] == len(m.main.tensors)
    proxy.set_filter(kind="All tensors")
    asked["filter"] = 0
    src.set_subgraph(m.main, m)
    assert proxy.rowCount() == len(m.main.tensors) and asked["filter"] == 0
    assert np.all(np.diff(shown) > 0)


def test_the_sqnr_colours_of_1500_ops_are_made_for_the_rows_drawn(qtbot):
    """A result's SQNR and worst-channel columns take figures; their colours are made when a row
    is drawn: a result arriving made 6,000 colours up front on the GUI thread (25 ms)."""
    from inspector.gui.compare.feature import sqnr_color
    from inspector.gui.views.model_pane import ERROR_COLUMN

    _fa, fb = residual_pair(REPO / ".fixture-cache")
    sg = Model(fb).main
    made: list[float] = []

    def colour(v: float) -> QColor | None:
        made.append(v)
        return sqnr_color(v)

    model = OpListModel()
    model.set_subgraph(sg)
    model.errors = {op.index: (f"{op.index % 40} dB", float(op.index % 40), "") for op in sg.ops}
    model.colour_of = colour
    view = _shown(qtbot, model)
    view.resize(900, 600)
    qtbot.wait(20)
    first, last = view.rowAt(0), view.rowAt(view.viewport().height() - 1)
    rows = last - first + 1
    assert 5 < rows and len(made) <= 3 * rows, (rows, len(made))  # the rows drawn, not 1,502
    idx = model.index(first, ERROR_COLUMN)
    assert model.data(idx, Qt.ItemDataRole.BackgroundRole) == sqnr_color(float(sg.ops[first].index % 40))
