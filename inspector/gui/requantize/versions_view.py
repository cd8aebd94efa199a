"""Versions of model B and what changed between two of them.

Top: the versions (name, size, output SQNR; the current model B in bold), double-click to make
one model B; "compare [before] → [after]" picks any two ('after' becomes model B). Below: a one-line summary (output SQNR
and size before → after) and the per-layer SQNR table before / after / delta of a
`core.requantize.delta.VersionDelta`. Renders only; intents go out as signals.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core.requantize.delta import VersionDelta
from inspector.core.viewdata.layer_series import format_value
from inspector.gui.binding import quietly
from inspector.gui.turns import later
from inspector.gui.views.item_roles import MultiRoleTableModel
from inspector.gui.views.sizing import CappedLabel, table_height

VERSION_COLUMNS = ("Version", "Size", "Output SQNR")
DELTA_COLUMNS = ("#", "Layer", "Edit", "SQNR before", "SQNR after", "Δ dB", "Type (before → after)")
COL_EDIT, COL_DELTA = 2, 5
UP, DOWN = QColor("#2ca02c"), QColor("#d62728")


def db_text(v: float | None) -> str:
    return "n/a" if v is None else format_value(v, "sqnr_db")


def delta_text(v: float | None) -> str:
    if v is None:
        return "n/a"
    if math.isinf(v):
        return "+∞" if v > 0 else "−∞"
    return f"{v:+.2f}"


def kib(n: int) -> str:
    return f"{n / 1024:,.1f} KiB"


def summary_text(d: VersionDelta) -> str:
    ratio = d.size_ratio
    size = f"size {kib(d.size_before)} → {kib(d.size_after)}" + ("" if ratio is None else f" ({100 * (ratio - 1):+.1f} %)")
    moved = sum(1 for r in d.rows if (x := r.delta_db) is not None and abs(x) >= 0.05)  # d.changed()'s count, unsorted
    edited = d.edited()
    what = ""
    if edited:
        what = " · edited: " + ", ".join(f"op {r.op_index} {r.edit}" for r in edited)
    return (f"<b>{d.before_name}</b> → <b>{d.after_name}</b>: output SQNR {db_text(d.output_before_db)} → "
            f"<b>{db_text(d.output_after_db)}</b> ({delta_text(d.output_delta_db)} dB) · {size}{what} · "
            f"{moved} of {len(d.rows)} layers moved by ≥ 0.05 dB")


def _item(text: str, align_right: bool = False, tip: str = "") -> QTableWidgetItem:
    it = QTableWidgetItem(text)
    it.setFlags(Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled)
    if align_right:
        it.setTextAlignment(int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter))
    if tip:
        it.setToolTip(tip)
    return it


class DeltaModel(MultiRoleTableModel):
    """The per-layer delta rows, made when a row is drawn: a 1,500-layer delta built 10,500
    QTableWidgetItems on the GUI thread (up to 0.4 s after every Apply fix)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list[Any] = []
        self.bold = QFont()
        self.bold.setBold(True)

    def set_rows(self, rows: Sequence[Any]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(DELTA_COLUMNS)

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return DELTA_COLUMNS[section]
        return None

    def text(self, r: int, c: int) -> str:
        row = self.rows[r]
        if c == 0:
            beside = "" if row.float_op_index in (None, row.op_index) else f" (A: {row.float_op_index})"
            return "" if row.op_index is None else f"{row.op_index}{beside}"
        if c == 1:
            return row.tensor_name
        if c == COL_EDIT:
            return row.edit
        if c == 3:
            return db_text(row.before_db)
        if c == 4:
            return db_text(row.after_db)
        if c == COL_DELTA:
            return delta_text(row.delta_db)
        dt = row.before_dtype if row.before_dtype == row.after_dtype else f"{row.before_dtype or '—'} → {row.after_dtype or '—'}"
        return f"{row.op_type} · {dt}"

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        r, c = index.row(), index.column()
        row = self.rows[r]
        if role == Qt.ItemDataRole.DisplayRole:
            return self.text(r, c)
        if role == Qt.ItemDataRole.TextAlignmentRole and c in (0, 3, 4, COL_DELTA):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            if c == 0:
                return "op index in model B (the 'after' version); A's op beside it where it differs"
            if c == 1:
                return row.tensor_name
            if c == COL_EDIT:
                return "the edit applied to this layer's op" if row.edit else "not edited"
        if role == Qt.ItemDataRole.ForegroundRole and c == COL_DELTA:
            d = row.delta_db
            if d is not None and abs(d) >= 0.05:
                return QBrush(UP if d > 0 else DOWN)
        if role == Qt.ItemDataRole.FontRole and row.edit:
            return self.bold
        return None


class DeltaTable(QTableView):
    """The delta rows' view (`rowCount` / `text` as a table widget's). New rows are laid in (the
    model reset, the number columns sized) in a turn of the event loop of their own
    (`turns.later`), or when the table is shown if it is hidden, or when they are read: a
    1,500-row delta did that within the result's arrival after every Apply fix (15 ms)."""

    def __init__(self) -> None:
        super().__init__()
        self.delta_model = DeltaModel(self)
        self.setModel(self.delta_model)
        self._pending: tuple[list[Any], QFont, bool] | None = None

    def set_rows(self, rows: Sequence[Any], bold: QFont, edits: bool) -> None:
        """The delta's rows (`bold`: the font of edited rows; `edits`: show the Edit column)."""
        self._pending = (list(rows), bold, edits)
        if self.isVisible():
            later(self, "rows", self._lay_in)  # in a turn of its own, after the result's first drawing

    def showEvent(self, e) -> None:  # noqa: N802
        self._lay_in()
        super().showEvent(e)

    def _lay_in(self) -> None:
        if self._pending is None:
            return
        rows, bold, edits = self._pending
        self._pending = None
        self.setColumnHidden(COL_EDIT, not edits)  # only surgical versions edit ops
        self.delta_model.bold = bold
        self.delta_model.set_rows(rows)
        self.horizontalHeader().setResizeContentsPrecision(64)  # measured over 64 rows, not 1,500
        for c in (0, 2, 3, 4):  # numbers: as wide as their values and header, never cut
            self.resizeColumnToContents(c)

    def rowCount(self) -> int:  # noqa: N802
        self._lay_in()
        return self.delta_model.rowCount()

    def setRowCount(self, n: int) -> None:  # noqa: N802
        if n == 0:
            self._pending = None
            self.delta_model.set_rows([])

    def text(self, r: int, c: int) -> str:
        self._lay_in()
        return self.delta_model.text(r, c)

    def item(self, r: int, c: int) -> QTableWidgetItem:
        """Cell (r, c) as a table widget's item (made when asked for: text, tooltip, font, colour)."""
        self._lay_in()
        m = self.delta_model
        idx = m.index(r, c)
        it = QTableWidgetItem(m.text(r, c))
        for role, setter in ((Qt.ItemDataRole.ToolTipRole, it.setToolTip), (Qt.ItemDataRole.FontRole, it.setFont),
                             (Qt.ItemDataRole.ForegroundRole, it.setForeground)):  # fmt: skip
            v = m.data(idx, role)
            if v is not None:
                setter(v)
        return it


class VersionsView(QWidget):
    switch_requested = Signal(int)  # version index
    compare_requested = Signal(int, int)  # before, after

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.table = QTableWidget(0, len(VERSION_COLUMNS))
        self.table.setHorizontalHeaderLabels(VERSION_COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setToolTip("Double-click a version to make it model B (its comparison is shown)")
        self.table.cellDoubleClicked.connect(lambda r, _c: self.switch_requested.emit(r))
        self.before = QComboBox()
        self.after = QComboBox()
        for combo in (self.before, self.after):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(10)
        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip("Show 'after' as model B with 'before' as the baseline series and the deltas below")
        self.compare_button.clicked.connect(lambda: self.compare_requested.emit(self.before.currentIndex(), self.after.currentIndex()))
        row = QHBoxLayout()
        row.addWidget(QLabel("Compare"))
        row.addWidget(self.before, 1)
        row.addWidget(QLabel("→"))
        row.addWidget(self.after, 1)
        row.addWidget(self.compare_button)
        self.summary = CappedLabel("Run requantize to compare a new version of model B with the current one.", lines=3)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.reason = QLabel()  # why the baseline is what it is (quantizer route)
        self.reason.setWordWrap(True)
        self.reason.setStyleSheet("font-style: italic")
        self.reason.hide()
        self.deltas = DeltaTable()
        self.deltas.verticalHeader().hide()
        self.deltas.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.deltas.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.deltas.setWordWrap(False)
        self.deltas.horizontalHeader().setStretchLastSection(True)
        self.deltas.horizontalHeader().setMinimumSectionSize(28)
        for col, w in ((0, 56), (1, 150), (COL_EDIT, 96), (3, 80), (4, 80), (COL_DELTA, 54), (6, 180)):
            self.deltas.setColumnWidth(col, w)
        fm = self.deltas.horizontalHeader().fontMetrics()
        for col in (0, 2, 3, 4):  # headers whole even before the first delta
            self.deltas.setColumnWidth(col, max(self.deltas.columnWidth(col), fm.horizontalAdvance(DELTA_COLUMNS[col]) + 16))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.table.setMinimumHeight(table_height(self.table, 2))  # 2 at least; it takes the room first (4 versions at 1280×800)
        self.deltas.setMinimumHeight(table_height(self.deltas, 1))  # 1280×800: 4 versions and the Save buttons first
        lay.addWidget(self.table, 3)
        lay.addLayout(row)
        lay.addWidget(self.summary)
        lay.addWidget(self.reason)
        lay.addWidget(self.deltas, 2)
        self.delta: VersionDelta | None = None

    def set_versions(self, rows: list[tuple[str, int, float | None]], current: int | None, reference: int | None) -> None:
        """(name, size bytes, output SQNR dB or None) per version; `current` is model B."""
        self.table.setRowCount(len(rows))
        bold = QFont(self.font())
        bold.setBold(True)
        for r, (name, size, sqnr) in enumerate(rows):
            items = [_item(("▶ " if r == current else "") + name, tip=name), _item(kib(size), True),
                     _item(db_text(sqnr) if sqnr is not None else "not compared yet", True)]
            for c, it in enumerate(items):
                if r == current:
                    it.setFont(bold)
                self.table.setItem(r, c, it)
        self.table.resizeColumnToContents(1)
        self.table.resizeColumnToContents(2)
        for combo, pick in ((self.before, reference), (self.after, current)):
            with quietly(combo):
                combo.clear()
                combo.addItems([name for name, _, _ in rows])
                if pick is not None and 0 <= pick < len(rows):
                    combo.setCurrentIndex(pick)
        self.compare_button.setEnabled(len(rows) >= 2)

    def set_baseline_reason(self, text: str) -> None:
        self.reason.setText(text)
        self.reason.setVisible(bool(text))

    def set_delta(self, d: VersionDelta | None) -> None:
        self.delta = d
        if d is None:
            self.summary.setText("Pick two versions that have both been compared to see their deltas.")
            self.deltas.setRowCount(0)
            return
        self.summary.setText(summary_text(d))
        bold = QFont(self.font())
        bold.setBold(True)
        self.deltas.set_rows(d.rows, bold, bool(d.edited()))
