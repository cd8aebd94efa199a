"""The "Keras / QAT" tab: the Keras model open as A, its QAT ranges beside the TFLite scales,
each Keras layer's error against model B (the first departure from the QAT simulation
highlighted) and every QAT variable with what it becomes in the .tflite. A thin view: rows and values come from `core.keras.rows` and the results."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from inspector.core.keras.qat_variables import VARIABLE_COLUMNS
from inspector.core.keras.rows import LAYER_COLUMNS, QAT_COLUMNS

FINDING_BG = QColor(255, 170, 60, 90)
DEPARTURE_BG = QColor(230, 60, 60, 110)


def _table(columns) -> QTableWidget:
    t = QTableWidget(0, len(columns))
    t.setHorizontalHeaderLabels(list(columns))
    t.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    t.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
    t.verticalHeader().setVisible(False)
    t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    t.horizontalHeader().setStretchLastSection(True)
    t.setWordWrap(False)
    t.setMinimumHeight(48)  # the tab must not raise the window's minimum height
    return t


def _fill(table: QTableWidget, rows, highlight: dict[int, QColor]) -> None:
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            item = QTableWidgetItem(text)
            item.setToolTip(text)
            if c not in (0, 1, 2) and c != len(row) - 1:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if r in highlight:
                item.setBackground(QBrush(highlight[r]))
            table.setItem(r, c, item)


class KerasView(QWidget):
    compare_requested = Signal()
    twins_requested = Signal()
    tensor_activated = Signal(int)  # a QAT row's TFLite tensor (model B's, or the QAT int8 twin's)
    op_activated = Signal(int)  # a layer row's op of model B

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.header = QLabel("No Keras model open. Open a .keras / .h5 file or a SavedModel folder as A, "
                             "or make TFLite twins of one (File › Make TFLite twins…).")
        self.header.setWordWrap(True)
        self.compare_button = QPushButton("Compare Keras model with B")
        self.compare_button.setEnabled(False)
        self.compare_button.clicked.connect(self.compare_requested.emit)
        self.twins_button = QPushButton("Make TFLite twins…")
        self.twins_button.clicked.connect(self.twins_requested.emit)
        self.qat_title = QLabel("<b>QAT ranges → scales</b> (by r = S(q − Z); beside the converted TFLite tensors)")
        self.qat_table = _table(QAT_COLUMNS)
        self.var_title = QLabel("<b>QAT variables</b> (every variable of each QAT layer, as model.summary() counts them, "
                                "and what it becomes in the .tflite)")
        self.var_table = _table(VARIABLE_COLUMNS)
        self.var_counts = QLabel("")
        self.var_counts.setWordWrap(True)
        self.layer_title = QLabel("<b>Keras layers vs model B</b> (accumulated and isolated SQNR)")
        self.layer_table = _table(LAYER_COLUMNS)
        self._row_tensors: list[int | None] = []
        self._row_ops: list[int | None] = []
        self.qat_table.cellClicked.connect(lambda r, _c: self._emit(self._row_tensors, r, self.tensor_activated))
        self.layer_table.cellClicked.connect(lambda r, _c: self._emit(self._row_ops, r, self.op_activated))
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.header, 1)
        top.addWidget(self.compare_button)
        top.addWidget(self.twins_button)
        upper, middle, lower = QWidget(), QWidget(), QWidget()
        ul, ml, ll = QVBoxLayout(upper), QVBoxLayout(middle), QVBoxLayout(lower)
        for w in (self.qat_title, self.qat_table):
            ul.addWidget(w)
        for w in (self.var_title, self.var_counts, self.var_table):
            ml.addWidget(w)
        for w in (self.layer_title, self.summary, self.layer_table):
            ll.addWidget(w)
        for lay in (ul, ml, ll):
            lay.setContentsMargins(0, 0, 0, 0)
        self.header.setMinimumWidth(100)
        self.qat_pages = QTabWidget()  # ranges and variables share the upper half: the layer table keeps room
        self.qat_pages.setDocumentMode(True)
        self.qat_pages.addTab(upper, "QAT ranges → scales")
        self.qat_pages.addTab(middle, "QAT variables")
        split = QSplitter(Qt.Orientation.Vertical)
        split.setChildrenCollapsible(True)
        split.addWidget(self.qat_pages)
        split.addWidget(lower)
        for label in (self.qat_title, self.var_title, self.layer_title):
            label.setWordWrap(True)  # a long title must not widen the window
        scroll = QScrollArea()  # the tables' rows must not raise the window's minimum height
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(split)
        split.setMinimumHeight(300)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(scroll, 1)

    def set_source(self, text: str, can_compare: bool) -> None:
        self.header.setText(text)
        self.compare_button.setEnabled(can_compare)

    @staticmethod
    def _emit(targets: list[int | None], row: int, signal) -> None:
        if 0 <= row < len(targets) and targets[row] is not None:
            signal.emit(targets[row])

    def set_qat(self, rows, tensors: list[int | None] | None = None) -> None:
        self._row_tensors = list(tensors or [])
        _fill(self.qat_table, rows, {i: FINDING_BG for i, r in enumerate(rows) if r[-1]})

    def set_variables(self, rows, caption: str = "") -> None:
        _fill(self.var_table, rows, {})
        self.var_counts.setText(caption)

    def set_layers(self, rows, departure: int | None, summary: str, ops: list[int | None] | None = None) -> None:
        self._row_ops = list(ops or [])
        _fill(self.layer_table, rows, {} if departure is None else {departure: DEPARTURE_BG})
        self.summary.setText(summary)
