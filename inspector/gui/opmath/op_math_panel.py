"""Op math panel: the integer arithmetic of the selected op, as `core.opmath.op_math` computed it.

Renders an `OpMath` (computes nothing): the kernel path in words, S1/Z1, S2 per channel, S3/Z3,
M = S1·S2/S3 and its fixed-point form (M0, shift) per channel in a table and a small plot, the
bias scale expected vs stored, the rescaling multipliers of ADD/SUB/MUL, each tensor's
representable float range and, after a comparison, the observed range use and clipped share.
Every number is selectable; "Copy as text" puts the whole panel on the clipboard.
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from inspector.core.quantmath.opmath import OpMath
from inspector.core.viewdata import op_math_format as fmt
from inspector.gui.views.plot_style import COLOR_B, COLOR_SECOND, style_plot

MAX_COLUMN_WIDTH = 260
EMPTY_TEXT = "Select an op (layer) of the quantized model B to see its integer math."
PATH_COLORS = {
    "full_integer_int8": "#2ca02c", "full_integer_16x8": "#17becf", "hybrid": "#f28c28",
    "weight_only": "#9467bd", "float16_weights": "#8c564b", "float": "#7f7f7f", "other": "#7f7f7f",
}


def mono_font():
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


class CopyableTable(QTableWidget):
    """A read-only table whose selected cells copy as tab-separated text (Ctrl+C)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 4)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.horizontalHeader().setStretchLastSection(True)

    def set_rows(self, headers: list[str], rows: list[list[str]], tips: list[str] | None = None) -> None:
        self.clear()
        self.setColumnCount(len(headers))
        self.setRowCount(len(rows))
        self.setHorizontalHeaderLabels(headers)
        for c, tip in enumerate(tips or []):
            if tip and (head := self.horizontalHeaderItem(c)) is not None:
                head.setToolTip(tip)
        font = mono_font()
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                it = QTableWidgetItem(text)
                it.setFont(font)
                it.setToolTip(text)
                it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                                    if fmt.is_number(text) else Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
                self.setItem(r, c, it)
        self.resizeColumnsToContents()
        for c in range(self.columnCount()):  # long tensor names elide; the tooltip has them whole
            self.setColumnWidth(c, min(self.columnWidth(c), MAX_COLUMN_WIDTH))

    def cell_text(self, row: int, col: int) -> str:
        it = self.item(row, col)
        return "" if it is None else it.text()

    def column_of(self, header: str) -> int:
        """The column headed `header` (KeyError if none)."""
        for c in range(self.columnCount()):
            if (head := self.horizontalHeaderItem(c)) is not None and head.text() == header:
                return c
        raise KeyError(header)

    def selected_text(self) -> str:
        cells = sorted((i.row(), i.column()) for i in self.selectedIndexes())
        if not cells:
            return ""
        rows: dict[int, list[str]] = {}
        for r, c in cells:
            rows.setdefault(r, []).append(self.cell_text(r, c))
        return "\n".join("\t".join(v) for v in rows.values())

    def keyPressEvent(self, e) -> None:
        if e.matches(QKeySequence.StandardKey.Copy):
            QGuiApplication.clipboard().setText(self.selected_text())
            return
        super().keyPressEvent(e)


class OpMathPanel(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.math: OpMath | None = None
        self.header = QLabel(EMPTY_TEXT)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.header.setWordWrap(True)
        self.copy_button = QPushButton("Copy as text")
        self.copy_button.setToolTip("Copy the whole op math (parameters, tables, explanation) to the clipboard")
        self.copy_button.clicked.connect(self.copy_all)
        top = QHBoxLayout()
        top.addWidget(self.header, 1)
        top.addWidget(self.copy_button)

        self.summary = QTextBrowser()
        self.summary.setOpenLinks(False)
        self.tensor_caption = QLabel("<b>Tensors</b> — representable float range [S·(qmin − Z), S·(qmax − Z)]")
        self.tensor_table = CopyableTable()
        self.detail_caption = QLabel()
        self.detail_table = CopyableTable()
        self.plot = pg.PlotWidget()
        self.plot.setMinimumWidth(220)
        self.plot_item = self.plot.getPlotItem()
        self.plot_item.setLabel("bottom", "output channel")
        self.points = pg.PlotDataItem(pen=pg.mkPen(COLOR_B, width=1), symbol="o", symbolSize=5,
                                      symbolBrush=COLOR_B, symbolPen=None)
        self.plot_item.addItem(self.points)
        style_plot(self.plot)

        self.qat_caption = QLabel()  # optional: another feature's section (QAT ranges → scales)
        self.qat_table = CopyableTable()
        self._qat_text = ""
        tensors_box = _boxed(self.tensor_caption, self.tensor_table)
        self.qat_box = _boxed(self.qat_caption, self.qat_table)
        self.qat_box.hide()
        self.detail_box = _boxed(self.detail_caption, self.detail_table)
        self.detail_split = QSplitter(Qt.Orientation.Horizontal)
        self.detail_split.addWidget(self.detail_box)
        self.detail_split.addWidget(self.plot)
        self.detail_split.setSizes([520, 300])
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(tensors_box)
        right.addWidget(self.qat_box)
        right.addWidget(self.detail_split)
        right.setSizes([170, 280])
        self.right = right
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.summary)
        self.splitter.addWidget(right)
        self.splitter.setSizes([430, 970])  # the tables get the width: their numbers and headers are not cut
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.splitter, 1)
        self.set_math(None)

    # ------------------------------------------------------------------ rendering
    def set_math(self, math: OpMath | None, context: str = "", message: str = "") -> None:
        """Show `math` (None: the hint, or `message` when the op math could not be computed)."""
        self.math = math
        self.set_section(None)  # a section belongs to one op: its feature sets it again
        if math is None:
            self.header.setText(html.escape(message) if message else EMPTY_TEXT)
            self.splitter.hide()
            self.copy_button.setEnabled(False)
            return
        self.splitter.show()
        self.copy_button.setEnabled(True)
        color = PATH_COLORS.get(math.kernel_path, "#7f7f7f")
        where = f"{html.escape(context)} · " if context else ""
        self.header.setText(
            f"{where}op {math.op_index} <b>{html.escape(math.op_type)}</b> — kernel path: "
            f"<span style='color:{color}; font-weight:bold'>{html.escape(math.kernel_label)}</span>"
        )
        self.summary.setHtml(fmt.summary_html(math))
        headers, rows, tips = fmt.tensor_rows(math)
        self.tensor_table.set_rows(headers, rows, tips)
        caption, headers, rows, tips = fmt.detail_rows(math)
        self.detail_caption.setText(caption)
        self.detail_table.set_rows(headers, rows, tips)
        self.detail_box.setVisible(bool(rows))
        self._plot(math)
        self.fit_tensor_rows()

    def set_section(self, section: tuple[str, list[str], list[list[str]], list[str], str, str] | None) -> None:
        """An extra table below the tensors, from another feature: (caption, headers, rows, tips,
        plain text for "Copy as text", HTML note shown above the parameters); None or no rows hides it."""
        if section is None or not section[2]:
            if self._qat_text and self.math is not None:
                self.summary.setHtml(fmt.summary_html(self.math))
            self._qat_text = ""
            self.qat_box.hide()
            return
        caption, headers, rows, tips, text, note = section
        self.qat_caption.setText(caption)
        if self.math is not None:
            self.summary.setHtml(note + fmt.summary_html(self.math))
        self.qat_table.set_rows(headers, rows, tips)
        self._qat_text = text
        self.qat_box.show()
        self.fit_tensor_rows()

    def tensor_box_height(self) -> int:
        """Height that shows every row of the tensor table (caption, header, rows, scroll bar)."""
        t = self.tensor_table
        rows = sum(t.rowHeight(r) for r in range(t.rowCount()))
        bar = t.horizontalScrollBar().sizeHint().height()
        cap = self.tensor_caption.heightForWidth(max(self.right.width(), 200))
        cap = cap if cap > 0 else self.tensor_caption.sizeHint().height()
        return cap + t.horizontalHeader().height() + rows + bar + 2 * t.frameWidth() + 6

    def fit_tensor_rows(self) -> None:
        """Give the tensor table the height of all its rows (at most two thirds of the column),
        the per-channel table the rest."""
        total = sum(self.right.sizes()) or self.right.height()
        if total <= 0 or not self.detail_box.isVisibleTo(self):
            return
        top = min(self.tensor_box_height(), int(total * 2 / 3))
        if not self.qat_box.isVisibleTo(self):
            self.right.setSizes([top, 0, total - top])
            return
        # The QAT rows first (they repeat B's scale and zero point beside the QAT values), then the
        # tensors (at least a row), the per-channel table the rest (a row or two, more with its plot).
        w = self.right.width()
        detail = min(_table_height(self.detail_caption, self.detail_table, w), 150 if self.plot.isVisibleTo(self) else 90)
        qat = min(_table_height(self.qat_caption, self.qat_table, w), total - detail - 60)
        top = min(top, max(total - qat - detail, 60))
        self.right.setSizes([top, qat, max(0, total - top - qat)])

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        if self.math is not None:
            self.fit_tensor_rows()

    def showEvent(self, e) -> None:  # set while the tab was hidden: fit once it has its real size
        super().showEvent(e)
        if self.math is not None:
            self.fit_tensor_rows()

    def _plot(self, math: OpMath) -> None:
        series = fmt.plot_series(math)
        if series is None:
            self.plot.hide()
            self.points.setData([], [])
            return
        title, ylabel, values, color = series
        self.plot.show()
        color = COLOR_B if color == "B" else COLOR_SECOND
        self.points.setPen(pg.mkPen(color, width=1))
        self.points.setSymbolBrush(color)
        self.points.setData(np.arange(len(values)), np.asarray(values, np.float64))
        self.plot_item.setTitle(title)
        self.plot_item.setLabel("left", ylabel)
        lo, hi = float(np.min(values)), float(np.max(values))
        if lo == hi:  # a flat line would otherwise get a degenerate axis
            pad = abs(lo) * 0.05 or 1e-9
            self.plot_item.setYRange(lo - pad, hi + pad, padding=0)
            self.plot_item.enableAutoRange(axis="x")
        else:
            self.plot_item.enableAutoRange()
        style_plot(self.plot)

    # ------------------------------------------------------------------ copy
    def as_text(self) -> str:
        if self.math is None:
            return ""
        return fmt.as_text(self.math) + (f"\n{self._qat_text}" if self._qat_text else "")

    def copy_all(self) -> None:
        QGuiApplication.clipboard().setText(self.as_text())


def _table_height(caption: QLabel, t: QTableWidget, width: int) -> int:
    """Height that shows a captioned table's every row (caption, header, rows, scroll bar)."""
    rows = sum(t.rowHeight(r) for r in range(t.rowCount()))
    cap = caption.heightForWidth(max(width, 200))
    cap = cap if cap > 0 else caption.sizeHint().height()
    return cap + t.horizontalHeader().height() + rows + t.horizontalScrollBar().sizeHint().height() + 2 * t.frameWidth() + 6


def _boxed(caption: QLabel, table: QTableWidget) -> QWidget:
    w = QWidget()
    lay = QVBoxLayout(w)
    lay.setContentsMargins(0, 0, 0, 0)
    caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    caption.setWordWrap(True)
    lay.addWidget(caption)
    lay.addWidget(table, 1)
    return w
