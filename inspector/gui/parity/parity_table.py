"""The runtime parity table: one row per layer of B (op index, type, tensor, share of elements
that differ, max LSB, and each side against the spec's integer math), the first divergence
marked ◆ and highlighted. Selecting a row emits `op_clicked(op index of B)`."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from inspector.core.compare.parity_result import LayerParity, RuntimeParityResult
from inspector.core.viewdata.parity_series import format_lsb, format_share, spec_cells

COLUMNS = ("Op", "Type", "Tensor", "Differ", "Max LSB", "Spec: side 1", "Spec: side 2")
FIRST_BG, FIRST_FG = QColor("#fde2e1"), QColor("#5c0b0b")


class ParityTable(QTableWidget):
    op_clicked = Signal(int)  # op index of B

    def __init__(self, parent=None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setHorizontalHeaderLabels(COLUMNS)
        self.verticalHeader().hide()
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setWordWrap(False)
        self.setAlternatingRowColors(True)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        head = self.horizontalHeader()
        head.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        head.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)  # full name in the tooltip
        head.setStretchLastSection(False)
        self.setColumnWidth(2, 120)
        self.ops: list[int] = []
        self._quiet = False
        self.itemSelectionChanged.connect(self._selected)

    def set_result(self, result: RuntimeParityResult | None) -> None:
        labels = result.labels if result is not None else ("side 1", "side 2")
        layers = result.layers if result is not None else ()
        self._quiet = True
        try:
            self.setHorizontalHeaderLabels([*COLUMNS[:5], f"Spec: {labels[0]}", f"Spec: {labels[1]}"])
            self.setRowCount(len(layers))
            self.ops = [layer.op_index for layer in layers]
            bold = QFont()
            bold.setBold(True)
            for r, layer in enumerate(layers):
                cells = (("◆ " if layer.first_divergence else "") + str(layer.op_index), layer.op_type,
                         layer.tensor_name, format_share(layer.differ_share), format_lsb(layer.max_lsb),
                         *spec_cells(layer, labels))
                for c, text in enumerate(cells):
                    item = QTableWidgetItem(text)
                    item.setToolTip(_tip(layer, c, text))
                    if c in (0, 3, 4):
                        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    if layer.first_divergence:
                        item.setBackground(QBrush(FIRST_BG))
                        item.setForeground(QBrush(FIRST_FG))
                        item.setFont(bold)
                    self.setItem(r, c, item)
        finally:
            self._quiet = False

    def select_op(self, op_index: int | None) -> None:
        """Highlight the row of B's op `op_index` (none: clear), without emitting op_clicked."""
        row = self.ops.index(op_index) if op_index in self.ops else None
        self._quiet = True
        try:
            if row is None:
                self.clearSelection()
            else:
                self.selectRow(row)
                if (item := self.item(row, 0)) is not None:
                    self.scrollToItem(item)
        finally:
            self._quiet = False

    def _selected(self) -> None:
        rows = self.selectionModel().selectedRows()
        if not self._quiet and rows:
            self.op_clicked.emit(self.ops[rows[0].row()])


def _tip(layer: LayerParity, col: int, text: str) -> str:
    if col >= 5:
        if layer.spec_mismatch is None:
            return "No integer reimplementation of this op (only CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD)"
        return "This side's output against the spec's integer math (M0/shift, zero-points) on its own inputs"
    if col == 0 and layer.first_divergence:
        return "◆ first divergence: the first op (in execution order) whose output differs between the sides"
    if col == 3:
        return f"{100 * layer.differ_share:.6g} % of the elements differ between the two sides"
    return text
