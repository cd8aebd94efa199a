"""One model's pane: a header, the op/layer list in execution order, and the tensor table.

The pane accepts dropped .tflite files (they open in this pane's slot) and shows a hint while
empty. It only renders and forwards intents; the controller decides what is selected.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QStackedWidget,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.core.tflite.model import Model, Subgraph
from inspector.gui.views.file_drop import TfliteDropTarget
from inspector.gui.views.item_roles import MultiRoleTableModel
from inspector.gui.views.sizing import ElidedLabel
from inspector.gui.views.tensor_table import TensorTable

OP_COLUMNS = ("#", "Op", "Output", "Activation", "Pair", "SQNR", "Worst ch.", "Cause")
ERROR_COLUMN = 5  # filled after a comparison: (text, figure for its background colour, tooltip) per op
WORST_COLUMN = 6  # the lowest channel / slice SQNR after a comparison: (text, figure, tooltip)
CAUSE_COLUMN = 7  # the diagnosis after a comparison: (text, tooltip) per op
SLOT_TITLES = {"A": "A · float reference", "B": "B · quantized"}
OP_ROWS = 12  # the op list grows to this many rows before the tensor table grows past TENSOR_ROWS
TENSOR_ROWS = 7
SIZE_ROWS = 48  # rows measured when sizing the number columns
EXAMPLE_HINT = ("New here? File › Open the example pair: a digits classifier and its int8 twin, compared at once "
                "on labelled digits (or drop both files on the window).")


def op_rows(rows: int) -> int:
    """Of `rows` rows that fit in a pane, those the op list gets (the rest: the tensor table)."""
    return max(rows - rows // 2, min(OP_ROWS, rows - TENSOR_ROWS))


class OpListModel(MultiRoleTableModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.subgraph: Subgraph | None = None
        self.counterpart = lambda _i: None  # op index -> index in the other model, or None
        self.errors: dict[int, tuple] = {}  # op index -> (text, figure | None, tooltip)
        self.causes: dict[int, tuple[str, str]] = {}  # op index -> (text, tooltip)
        self.worst: dict[int, tuple] = {}  # op index -> (text, figure | None, tooltip)
        self.colour_of: Callable[[float], QColor | None] = lambda _v: None  # a cell's figure -> its background
        self.error_header = ("SQNR", "SQNR of the layer's output in the last comparison (green: good, red: large error)")

    def set_subgraph(self, sg: Subgraph | None, counterpart=None) -> None:
        self.beginResetModel()
        self.subgraph = sg
        self.counterpart = counterpart or (lambda _i: None)
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() or self.subgraph is None else len(self.subgraph.ops)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(OP_COLUMNS)

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or self.subgraph is None:
            return None
        sg, op, c = self.subgraph, self.subgraph.ops[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if c == 0:
                return str(op.index)
            if c == 1:
                return op.type + (" (custom)" if op.is_custom else "")
            if c == 2:
                outs = [sg.tensors[o].name for o in op.outputs if o >= 0]
                return outs[0] if outs else ""
            if c == 3:
                act = op.options.get("fused_activation_function")
                return "" if act in (None, "NONE") else str(act)
            if c == 4:
                other = self.counterpart(op.index)
                return "—" if other is None else f"↔ {other}"
            if c == ERROR_COLUMN:
                return self.errors.get(op.index, ("",))[0]
            if c == CAUSE_COLUMN:
                return self.causes.get(op.index, ("",))[0]
            if c == WORST_COLUMN:
                return self.worst.get(op.index, ("",))[0]
        if c == CAUSE_COLUMN and role == Qt.ItemDataRole.ToolTipRole and self.causes.get(op.index, ("", ""))[1]:
            return self.causes[op.index][1]
        cells = self.errors if c == ERROR_COLUMN else self.worst if c == WORST_COLUMN else {}
        if op.index in cells:
            text, figure, tip = cells[op.index]
            if role == Qt.ItemDataRole.BackgroundRole:
                return None if figure is None else self.colour_of(figure)  # the rows drawn only (1,500 ops)
            if role == Qt.ItemDataRole.ForegroundRole and figure is not None:
                return QColor("#111111")
            if role == Qt.ItemDataRole.ToolTipRole:
                return tip() if callable(tip) else tip  # made when asked for (1,500 rows)
            if role == Qt.ItemDataRole.TextAlignmentRole:
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            ins = ", ".join(sg.tensors[i].name if i >= 0 else "(none)" for i in op.inputs)
            out_names = ", ".join(sg.tensors[o].name for o in op.outputs if o >= 0)
            return f"{op.type} v{op.version}\ninputs: {ins}\noutputs: {out_names}"
        return None

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.error_header[0] if section == ERROR_COLUMN else OP_COLUMNS[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole and section == 4:
            return "Index of the matching op in the other model"
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole and section == ERROR_COLUMN:
            return self.error_header[1]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole and section == WORST_COLUMN:
            return ("Lowest SQNR of the layer's channels (last axis) or, for a concatenation, of its input slices; "
                    "⚠ where one reads 20 dB or more below the whole tensor (the tooltip has the figures)")
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole and section == CAUSE_COLUMN:
            return "Why the layer is bad (the diagnosis of the last comparison) and, in its tooltip, the edit that fixes it"
        return None


class ModelPane(TfliteDropTarget, QWidget):
    op_activated = Signal(str, int)  # slot, op index
    tensor_activated = Signal(str, int)  # slot, tensor index
    files_dropped = Signal(str, list)  # slot, paths
    close_requested = Signal(str)

    def __init__(self, slot: str, parent=None) -> None:
        super().__init__(parent)
        self.slot = slot
        self.accept_tflite_drops()  # onto a pane: that pane's slot
        self.title = QLabel(f"<b>{SLOT_TITLES[slot]}</b>")
        self.info = ElidedLabel()  # a long file name is cut in the middle (whole in the tooltip), never widens the window
        self.close_button = QToolButton(autoRaise=True)
        self.close_button.setText("✕")
        self.close_button.setToolTip(f"Close model {slot}")
        self.close_button.clicked.connect(lambda: self.close_requested.emit(self.slot))
        self.close_button.hide()
        head = QHBoxLayout()
        head.addWidget(self.title)
        head.addWidget(self.info, 1)
        head.addWidget(self.close_button)

        self.ops = OpListModel(self)
        self.op_view = QTableView()
        self.op_view.setModel(self.ops)
        self.op_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.op_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.op_view.verticalHeader().hide()
        self.op_view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.op_view.setAlternatingRowColors(True)
        self.op_view.setWordWrap(False)
        self.op_view.horizontalHeader().setStretchLastSection(False)
        self.op_view.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        for col, width in ((0, 36), (1, 150), (3, 80), (4, 50), (ERROR_COLUMN, 72), (WORST_COLUMN, 72), (CAUSE_COLUMN, 96)):
            self.op_view.setColumnWidth(col, width)
        for col in (ERROR_COLUMN, WORST_COLUMN):  # numbers: as wide as their text (and the header), never cut
            self.op_view.horizontalHeader().setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        # measured over the rows in view and SIZE_ROWS more, not every row: a 1,500-op list measured
        # 225,000 cells on each resize (1.2 s); # and Pair are sized from the largest op index
        self.op_view.horizontalHeader().setResizeContentsPrecision(SIZE_ROWS)
        self.tensors = TensorTable()
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.op_view)
        split.addWidget(self.tensors)
        split.setSizes([300, 400])
        self.splitter = split

        self.empty_text = (
            f"No model in {slot}.\n\nDrop a .tflite file (or a .litertlm bundle) here, or use File › "
            + ("Open float… (Ctrl+O)" if slot == "A" else "Open quantized… (Ctrl+Shift+O)")
            + f".\n\n{EXAMPLE_HINT}"
        )
        self.placeholder = QLabel(self.empty_text)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.placeholder)
        self.stack.addWidget(split)
        self.column = lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(head)
        lay.addWidget(self.stack, 1)

        self._quiet = False
        self.op_view.selectionModel().currentRowChanged.connect(self._op_changed)
        self.tensors.tensor_activated.connect(lambda i: self.tensor_activated.emit(self.slot, i))

    # ------------------------------------------------------------------ rendering
    def set_waiting(self, text: str | None) -> None:
        """While a model is being prepared (a Keras model's conversion), the empty pane says what
        is happening instead of "No model in A"; None restores the empty text."""
        self.placeholder.setText(self.empty_text if text is None else text)

    def set_model(self, model: Model | None, counterpart=None) -> None:
        sg = model.main if model is not None else None
        self.ops.set_subgraph(sg, counterpart)
        self.tensors.set_subgraph(sg, model)
        self.stack.setCurrentIndex(0 if model is None else 1)
        self.close_button.setVisible(model is not None)
        self._fit_index_columns()
        self.fit_ops()
        if model is None:
            self.info.setText("")
            self.info.setToolTip("")
            return
        sg = model.main
        sig = f"signature '{model.signature_key}', " if model.signature_key else ""
        extra = f", {sig}subgraph {sg.index} of {len(model.subgraphs)}" if len(model.subgraphs) > 1 else ""
        self.info.setText(
            f"{Path(model.path).name} — {model.size_bytes / 1024:,.0f} KiB, "
            f"{len(sg.ops)} ops, {len(sg.tensors)} tensors{extra}"
        )
        self.info.setToolTip(model.path)

    def _fit_index_columns(self) -> None:
        """# and Pair as wide as the largest op index (of either model: up to five digits)."""
        fm, hdr = self.op_view.fontMetrics(), self.op_view.horizontalHeader()
        n = max(self.ops.rowCount(), 10)
        digits = len(str(max(n * 2, 99)))  # the other model may have more ops
        pad = 2 * self.op_view.style().pixelMetric(self.op_view.style().PixelMetric.PM_FocusFrameHMargin) + 12
        for col, text in ((0, "8" * digits), (4, "↔ " + "8" * digits)):
            head = hdr.fontMetrics().horizontalAdvance(OP_COLUMNS[col]) + 16
            self.op_view.setColumnWidth(col, max(fm.horizontalAdvance(text) + pad, head))

    def ops_height(self) -> int:
        """Height that shows every op row (header and frame included)."""
        v = self.op_view
        rows = self.ops.rowCount() * v.verticalHeader().defaultSectionSize()
        return v.horizontalHeader().sizeHint().height() + rows + 2 * v.frameWidth() + v.horizontalScrollBar().sizeHint().height()

    def fit_ops(self) -> None:
        """The op list gets the height of all its rows when that leaves the tensor table at
        least 40 % of the pane; else the rows that fit are shared: the op list gets half of them,
        or up to OP_ROWS while the tensor table keeps TENSOR_ROWS (at 1920×1080 an even share
        left the op list 8 rows; at 1280×800 a 60 % share had left the tensor table two rows).
        The splitter handle moves it further."""
        total = sum(self.splitter.sizes())
        n = self.ops.rowCount()
        if total <= 0 or n == 0:
            return
        every = self.ops_height()
        if every <= total * 0.6:
            top = every
        else:
            row = self.op_view.verticalHeader().defaultSectionSize()
            rows = max(0, (total - self._ops_frame() - self.tensors.frame_height()) // row)
            top = min(every, self._ops_frame() + op_rows(rows) * row)
        self.splitter.setSizes([top, total - top])

    def _ops_frame(self) -> int:
        """Height of the op list without its rows (header, frame, scroll bar)."""
        return self.ops_height() - self.ops.rowCount() * self.op_view.verticalHeader().defaultSectionSize()

    def height_for(self, op_rows_wanted: int = OP_ROWS, tensor_rows: int = TENSOR_ROWS) -> int:
        """Pane height at which the op list shows `op_rows_wanted` rows and the tensor table
        `tensor_rows` (the main window's default share for the panes asks for this)."""
        m = self.column.contentsMargins()
        head = max(w.sizeHint().height() for w in (self.title, self.info, self.close_button))
        row = self.op_view.verticalHeader().defaultSectionSize()
        return (m.top() + m.bottom() + head + self.column.spacing() + self.splitter.handleWidth()
                + self._ops_frame() + op_rows_wanted * row + self.tensors.frame_height() + tensor_rows * row)

    def table_rows_shown(self) -> tuple[int, int]:
        """Whole rows visible in (op list, tensor table): what a user sees of each."""
        out = []
        for view in (self.op_view, self.tensors.view):
            out.append(view.viewport().height() // view.verticalHeader().defaultSectionSize())
        return out[0], out[1]

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        if e.oldSize().height() != e.size().height():
            self.fit_ops()

    def refresh_pairs(self, counterpart) -> None:
        """Re-render the Pair column after the other model changed."""
        self.ops.beginResetModel()
        self.ops.counterpart = counterpart or (lambda _i: None)
        self.ops.endResetModel()

    def set_errors(self, errors: dict[int, tuple], colour_of: Callable[[float], QColor | None] | None = None) -> None:
        """Fill the error column: op index -> (text, figure | None, tooltip); a cell's background
        is `colour_of(figure)`, asked for the rows drawn (none without a figure)."""
        if colour_of is not None:
            self.ops.colour_of = colour_of
        self.ops.errors = dict(errors)
        n = self.ops.rowCount()
        if n:
            self.ops.dataChanged.emit(self.ops.index(0, ERROR_COLUMN), self.ops.index(n - 1, ERROR_COLUMN))

    def set_causes(self, causes: dict[int, tuple[str, str]]) -> None:
        """Fill the Cause column: op index -> (text, tooltip)."""
        self.ops.causes = dict(causes)
        n = self.ops.rowCount()
        if n:
            self.ops.dataChanged.emit(self.ops.index(0, CAUSE_COLUMN), self.ops.index(n - 1, CAUSE_COLUMN))

    def set_worst_channels(self, cells: dict[int, tuple], colour_of: Callable[[float], QColor | None] | None = None) -> None:
        """Fill the worst-channel column: op index -> (text, figure | None, tooltip), as `set_errors`."""
        if colour_of is not None:
            self.ops.colour_of = colour_of
        self.ops.worst = dict(cells)
        n = self.ops.rowCount()
        if n:
            self.ops.dataChanged.emit(self.ops.index(0, WORST_COLUMN), self.ops.index(n - 1, WORST_COLUMN))

    def set_error_header(self, text: str, tip: str) -> None:
        """Title and tooltip of the error column (accumulated or isolated SQNR)."""
        if (text, tip) != self.ops.error_header:
            self.ops.error_header = (text, tip)
            self.ops.headerDataChanged.emit(Qt.Orientation.Horizontal, ERROR_COLUMN, ERROR_COLUMN)

    def set_loading(self, path: str) -> None:
        self.info.setText(f"opening {Path(path).name}…")

    def show_selection(self, op: int | None, tensor: int | None) -> None:
        self._quiet = True
        try:
            sm = self.op_view.selectionModel()
            if op is None:
                sm.clearSelection()
                sm.setCurrentIndex(QModelIndex(), sm.SelectionFlag.NoUpdate)
            else:
                idx = self.ops.index(op, 0)
                sm.setCurrentIndex(idx, sm.SelectionFlag.ClearAndSelect | sm.SelectionFlag.Rows)
                if not self.op_view.visualRect(idx).intersects(self.op_view.viewport().rect()):
                    # only a row out of sight scrolls into view: scrolling a half-visible row the
                    # user is pressing moves the next row under the pointer, which the release selects
                    self.op_view.scrollTo(idx)
        finally:
            self._quiet = False
        self.tensors.select_tensor(tensor)

    def selected_op(self) -> int | None:
        rows = self.op_view.selectionModel().selectedRows()
        return rows[0].row() if rows else None

    def _op_changed(self, cur: QModelIndex, _prev: QModelIndex) -> None:
        if not self._quiet and cur.isValid():
            self.op_activated.emit(self.slot, cur.row())

    def files_dropped_here(self, paths: list[str]) -> None:
        self.files_dropped.emit(self.slot, paths)
