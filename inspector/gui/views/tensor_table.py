"""Tensor table of one model: name, dtype, shape, scale, zero-point, channels, range.

A QAbstractTableModel whose rows are formatted lazily (and cached), so a model with tens of
thousands of tensors opens at once; sorting uses numeric keys, filtering matches the tensor
name or the type of an op that reads or writes it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from inspector.core.quantmath.blockwise import BlockwiseError, BlockwiseParams, blockwise_params
from inspector.core.quantmath.quant import tensor_range
from inspector.core.text.numbers import number
from inspector.core.tflite.dtypes import INT_LIMITS
from inspector.core.tflite.model import Model, Subgraph, Tensor
from inspector.gui.views.item_roles import ForwardingFilterProxy, MultiRoleTableModel

COLUMNS = ("#", "Name", "Dtype", "Shape", "Scale", "Zero pt", "Chan.", "Range")
TOOLTIPS = {
    "Scale": "Quantization scale S (per-channel tensors: smallest … largest; blockwise: of the block scales)",
    "Zero pt": "Quantization zero-point Z (per-channel tensors: smallest … largest)",
    "Chan.": "Number of quantization channels (1 = per-tensor); blockwise: blocks × block size",
    "Range": "Representable float range [S·(qmin−Z), S·(qmax−Z)], union over channels (or blocks)",
}
KINDS = ("All tensors", "Constants", "Activations", "Quantized", "Per-channel")
FILTER_ROLE = Qt.ItemDataRole.UserRole + 41  # "1": the row passes the tensor filter (`TensorFilter`)
NUMBER_COLUMNS = (0, 2, 3, 4, 5, 6, 7)  # sized to their content (dtype too: short and fixed)
SIZE_ROWS = 48  # rows measured when sizing columns (2,000 took 0.3 s per model on the GUI thread; 120 took 15 ms)
FLAGGED_BG = QColor(255, 170, 60, 70)  # extra columns' rows with a finding


class ExtraColumns(Protocol):
    """Columns another feature adds after the table's own (e.g. QAT ranges beside B's scales):
    display cells (None: the tensor has none), sort keys, and which rows carry a finding."""

    @property
    def headers(self) -> tuple[str, ...]: ...
    @property
    def tips(self) -> dict[str, str]: ...

    def cells(self, tensor: int) -> tuple[str, ...] | None: ...

    def sort_key(self, tensor: int, column: int) -> Any: ...

    def flagged(self, tensor: int) -> bool: ...


def _spread(values, fmt=number) -> str:
    lo, hi = min(values), max(values)
    return fmt(lo) if lo == hi else f"{fmt(lo)} … {fmt(hi)}"


def blockwise_of(model: Model | None, t: Tensor) -> BlockwiseParams | str | None:
    """A blockwise tensor's per-block parameters (core), the problem with them, or None."""
    if t.quantization is None or t.quantization.blockwise is None:
        return None
    if model is None:
        return f"blockwise, block size {t.quantization.blockwise.block_size}"
    try:
        return blockwise_params(model, t)
    except BlockwiseError as e:
        return str(e)


def _blockwise_cells(t: Tensor, bw: BlockwiseParams | str) -> tuple[str, str, str, str]:
    """Scale, zero-point, channel and range cells of a blockwise tensor."""
    if isinstance(bw, str):
        return bw, "", "", ""
    qmin, qmax = INT_LIMITS.get(t.dtype, (0, 0))
    z = np.zeros_like(bw.scales) if bw.zero_points is None else bw.zero_points
    lo, hi = float(np.min(bw.scales * (qmin - z))), float(np.max(bw.scales * (qmax - z)))
    zp = "0" if bw.zero_points is None else _spread(bw.zero_points.ravel().tolist(), str)
    return (_spread(bw.scale_range), zp, f"{bw.num_blocks}×{bw.block_size}", f"[{number(lo)}, {number(hi)}]")


def blockwise_tip(t: Tensor, bw: BlockwiseParams | str | None) -> str | None:
    """Tooltip of a blockwise tensor's quantization cells: the parameters in words."""
    if bw is None:
        return None
    if isinstance(bw, str):
        return bw
    zp = "zero-point 0 (symmetric)" if bw.zero_point_tensor is None else f"zero-points in '{bw.zero_point_tensor}'"
    return (f"{t.dtype} blockwise: {bw.num_blocks:,} blocks of {bw.block_size} inputs ({bw.blocks_per_row} per output "
            f"channel); block scales {_spread(bw.scale_range)} in '{bw.scale_tensor}'; {zp}")


def format_row(t: Tensor, bw: BlockwiseParams | str | None = None) -> tuple[str, ...]:
    """Display strings of one tensor (formatting only: the numbers come from core).

    `bw`: what `blockwise_of` returned for a blockwise tensor (its block scales replace S and Z).
    """
    q = t.quantization
    rng = tensor_range(t)
    shape = "×".join(str(d) if d >= 0 else "?" for d in t.shape_signature) if t.shape_signature else "scalar"
    if q is not None and q.blockwise is not None:
        cells = _blockwise_cells(t, bw if bw is not None else f"blockwise, block size {q.blockwise.block_size}")
        return (str(t.index), t.name, t.dtype, f"[{shape}]", *cells)
    text = (
        str(t.index),
        t.name,
        t.dtype,
        f"[{shape}]",
        _spread(q.scales) if q else "",
        _spread(q.zero_points, str) if q else "",
        str(q.num_channels) if q else "",
        f"[{number(rng[0])}, {number(rng[1])}]" if rng else "",
    )
    return text


def sort_key(t: Tensor, column: int):
    """Sort key of a tensor for a column; numeric where the column is a number."""
    q = t.quantization
    if column == 0:
        return t.index
    if column == 1:
        return t.name.lower()
    if column == 2:
        return t.dtype
    if column == 3:
        return t.num_elements
    if column == 4:
        return min(q.scales) if q and q.scales else math.inf
    if column == 5:
        return min(q.zero_points) if q and q.zero_points else math.inf
    if column == 6:
        return q.num_channels if q else 0
    rng = tensor_range(t)
    return (rng[1] - rng[0]) if rng else math.inf


class TensorTableModel(MultiRoleTableModel):
    """Rows are tensors in a sort order kept here (argsort of keys, fast for 10k+ rows);
    cells are formatted on first display and cached."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.subgraph: Subgraph | None = None
        self._model: Model | None = None
        self._rows: dict[int, tuple[str, ...]] = {}
        self._ops_text: list[str] | None = []
        self._order = np.arange(0)  # row -> tensor index
        self._pos = np.arange(0)  # tensor index -> row
        self.extra: ExtraColumns | None = None
        # The filter's test of a tensor, asked (as `FILTER_ROLE`) only while a filter is on:
        # with none, the proxy lets every row through without a call into Python per row.
        self.row_filter: Callable[[int], bool] = lambda _ti: True

    def set_extra_columns(self, extra: ExtraColumns | None) -> None:
        """Add (or remove, with None) columns after the table's own; kept across set_subgraph."""
        self.beginResetModel()
        self.extra = extra
        self.endResetModel()

    def _extra_text(self, tensor: int, column: int) -> str:
        cells = self.extra.cells(tensor) if self.extra is not None else None
        return "" if cells is None else cells[column - len(COLUMNS)]

    def header(self, column: int) -> str:
        if column < len(COLUMNS):
            return COLUMNS[column]
        assert self.extra is not None, "a column after COLUMNS is an extra one"
        return self.extra.headers[column - len(COLUMNS)]

    def set_subgraph(self, sg: Subgraph | None, model: Model | None = None) -> None:
        """`model` (the file `sg` belongs to) lets blockwise tensors show their block scales."""
        self.beginResetModel()
        self.subgraph, self._rows, self._model = sg, {}, model
        n = len(sg.tensors) if sg is not None else 0
        self._order = self._pos = np.arange(n)
        self._ops_text = None  # made when a filter first asks (not on each new model)
        self.endResetModel()

    def tensor_at(self, row: int) -> int:
        return int(self._order[row])

    def row_of(self, tensor: int) -> int:
        return int(self._pos[tensor])

    def text(self, tensor: int) -> tuple[str, ...]:
        hit = self._rows.get(tensor)
        if hit is None:
            assert self.subgraph is not None, "rows exist with a subgraph only"
            t = self.subgraph.tensors[tensor]
            hit = self._rows[tensor] = format_row(t, blockwise_of(self._model, t))
        return hit

    def ops_text(self, tensor: int) -> str:
        """The types of the ops touching `tensor` (what the filter box also matches)."""
        if self._ops_text is None:
            sg = self.subgraph
            n = len(sg.tensors) if sg is not None else 0
            touching: list[set[str]] = [set() for _ in range(n)]
            for op in sg.ops if sg is not None else ():
                for i in (*op.inputs, *op.outputs):
                    if 0 <= i < n:
                        touching[i].add(op.type.lower())
            self._ops_text = [" ".join(sorted(s)) for s in touching]
        return self._ops_text[tensor]

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        if self.subgraph is None:
            return
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        old_tensors = [self.tensor_at(i.row()) for i in old]
        if column <= 0:
            perm = np.arange(len(self.subgraph.tensors))
        elif column >= len(COLUMNS) and self.extra is not None:
            extra, k = self.extra, column - len(COLUMNS)
            keys = [extra.sort_key(t.index, k) for t in self.subgraph.tensors]
            perm = np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)
        else:
            keys = [sort_key(t, column) for t in self.subgraph.tensors]
            perm = np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)
        if order == Qt.SortOrder.DescendingOrder:
            perm = perm[::-1].copy()
        self._order = perm
        self._pos = np.empty_like(perm)
        self._pos[perm] = np.arange(len(perm))
        self.changePersistentIndexList(old, [self.index(self.row_of(t), i.column()) for t, i in zip(old_tensors, old, strict=True)])
        self.layoutChanged.emit()

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008 (Qt signature)
        return 0 if parent.isValid() or self.subgraph is None else len(self.subgraph.tensors)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS) + (len(self.extra.headers) if self.extra is not None else 0)

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or self.subgraph is None:
            return None
        ti, c = self.tensor_at(index.row()), index.column()
        if role == FILTER_ROLE:
            return "1" if self.row_filter(ti) else "0"
        if c >= len(COLUMNS):
            return self._extra_data(ti, c, role)
        if role == Qt.ItemDataRole.BackgroundRole and self.extra is not None and self.extra.flagged(ti):
            return QBrush(FLAGGED_BG)
        if role == Qt.ItemDataRole.DisplayRole:
            return self.text(ti)[c]
        if role == Qt.ItemDataRole.ToolTipRole and c >= 3:  # the full value, should the column be narrow
            t = self.subgraph.tensors[ti]
            full = f"{COLUMNS[c]}: {self.text(ti)[c]}" if self.text(ti)[c] else None
            tip = blockwise_tip(t, blockwise_of(self._model, t)) if t.quantization is not None and c >= 4 else None
            return "\n".join(x for x in (full, tip) if x) or None
        if role == Qt.ItemDataRole.ToolTipRole and c == 1:
            t = self.subgraph.tensors[ti]
            kind = "constant" if t.is_constant else "variable" if t.is_variable else "activation"
            return f"{t.name}\n{kind}, {t.num_elements:,} values; ops: {self.ops_text(ti) or '—'}"
        if role == Qt.ItemDataRole.TextAlignmentRole and c in (0, 4, 5, 6):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _extra_data(self, ti: int, c: int, role):
        text = self._extra_text(ti, c)
        if role == Qt.ItemDataRole.DisplayRole:
            return text
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{self.header(c)}: {text}" if text else None
        if role == Qt.ItemDataRole.BackgroundRole and self.extra is not None and self.extra.flagged(ti):
            return QBrush(FLAGGED_BG)
        if role == Qt.ItemDataRole.TextAlignmentRole and text[:1] in tuple("0123456789.-−"):  # numbers right
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal or section >= self.columnCount():
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.header(section)
        if role == Qt.ItemDataRole.ToolTipRole:
            if section < len(COLUMNS):
                return TOOLTIPS.get(COLUMNS[section])
            return self.extra.tips.get(self.header(section)) if self.extra is not None else None
        return None


class TensorFilter(ForwardingFilterProxy):
    """Rows whose name or op type contains the text, of the chosen kind. Sorting is done by
    the source model (argsort), so this proxy only filters.

    Filtering goes through Qt's own filter on `FILTER_ROLE` (the source answers "1" for a row
    `accepts`), not a Python `filterAcceptsRow`: with no filter on, Qt then lets every row
    through without calling Python per row (3,000 calls on each new 1,500-op model, each one a
    wait for the interpreter lock while another thread of the app runs Python)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.text = ""
        self.kind = KINDS[0]
        self.setFilterRole(FILTER_ROLE)
        self.setFilterKeyColumn(0)

    def setSourceModel(self, source: QAbstractItemModel) -> None:  # noqa: N802 - Qt's name
        if isinstance(source, TensorTableModel):
            source.row_filter = self.accepts
        super().setSourceModel(source)

    def set_filter(self, text: str | None = None, kind: str | None = None) -> None:
        if text is not None:
            self.text = text.strip().lower()
        if kind is not None:
            self.kind = kind
        wanted = "1" if self.text or self.kind != KINDS[0] else ""
        if self.filterRegularExpression().pattern() != wanted:
            self.setFilterFixedString(wanted)  # which filters anew
        elif wanted:
            self.invalidateFilter()  # the same "1" with another text or kind: the rows are asked again

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        self.sourceModel().sort(column, order)

    def accepts(self, ti: int) -> bool:
        """Whether tensor `ti` of the source's subgraph passes the filter."""
        src = self.sourceModel()
        if not isinstance(src, TensorTableModel) or src.subgraph is None:
            return False
        t = src.subgraph.tensors[ti]
        kind_ok = {
            "Constants": t.is_constant,
            "Activations": not t.is_constant,
            "Quantized": t.quantization is not None,
            "Per-channel": t.quantization is not None and t.quantization.per_channel,
        }.get(self.kind, True)
        return kind_ok and (not self.text or self.text in t.name.lower() or self.text in src.ops_text(ti))


class TensorTable(QWidget):
    """Filter box + kind selector + the table. Emits the tensor index the user picked."""

    tensor_activated = Signal(int)

    def frame_height(self) -> int:
        """Height of everything but the rows: filter row, spacing, header, frame, scroll bar."""
        from inspector.gui.views.sizing import table_height

        return self.filter_edit.sizeHint().height() + self.column.spacing() + table_height(self.view, 0)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.model = TensorTableModel(self)
        self.proxy = TensorFilter(self)
        self.proxy.setSourceModel(self.model)
        self.filter_edit = QLineEdit(placeholderText="Filter tensors by name or op type (e.g. conv, bias)")
        self.filter_edit.setClearButtonEnabled(True)
        self.kind_combo = QComboBox()
        self.kind_combo.addItems(KINDS)
        self.view = QTableView()
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setAlternatingRowColors(True)
        self.view.setWordWrap(False)
        self.view.verticalHeader().hide()
        self.view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        h = self.view.horizontalHeader()
        h.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        h.setStretchLastSection(True)
        for col, width in enumerate((36, 170, 56, 92, 84, 56, 56, 140)):
            self.view.setColumnWidth(col, width)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.kind_combo)
        self.column = lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(top)
        lay.addWidget(self.view)
        self.filter_edit.textChanged.connect(lambda s: self.proxy.set_filter(text=s))
        self.kind_combo.currentTextChanged.connect(lambda k: self.proxy.set_filter(kind=k))
        self.view.selectionModel().currentRowChanged.connect(self._current_changed)
        self._quiet = False

    def set_subgraph(self, sg: Subgraph | None, model: Model | None = None) -> None:
        """Show `sg`'s tensors in the order the header shows (another version of B kept the sort
        arrow while its rows came in # order)."""
        self.model.set_subgraph(sg, model)
        h = self.view.horizontalHeader()
        if h.sortIndicatorSection() > 0:
            self.model.sort(h.sortIndicatorSection(), h.sortIndicatorOrder())
        self.fit_columns()

    def reset_view(self) -> None:
        """No filter, every kind, sorted by # ascending: what another pair starts with (the old
        pair's filter and sort carried over and hid its tensors). Another version of B keeps them."""
        self.filter_edit.clear()
        self.kind_combo.setCurrentIndex(0)
        self.view.sortByColumn(0, Qt.SortOrder.AscendingOrder)

    def set_extra_columns(self, extra: ExtraColumns | None) -> None:
        """Columns after the table's own (see `ExtraColumns`); None removes them."""
        if extra is None and self.model.extra is None:
            return  # nothing to remove (every model change asked: a 4,500-tensor reset and resize)
        self.model.set_extra_columns(extra)
        self.fit_columns()

    def cell_text(self, tensor: int, column: str) -> str:
        """The text shown for `tensor` under the header `column` (own or extra column)."""
        m = self.model
        c = next(i for i in range(m.columnCount()) if m.header(i) == column)
        return m.text(tensor)[c] if c < len(COLUMNS) else m._extra_text(tensor, c)

    def fit_columns(self) -> None:
        """Number columns (#, shape, scale, zero-point, channels, range) as wide as their widest
        text, measured over the first SIZE_ROWS tensors (a huge model opens at once); the name
        column keeps what is left, and every cell's tooltip holds its full value."""
        m = self.model
        if m.subgraph is None:
            return
        fm = self.view.fontMetrics()
        rows = range(min(m.rowCount(), SIZE_ROWS))
        hdr = self.view.horizontalHeader()
        pad = 2 * self.view.style().pixelMetric(self.view.style().PixelMetric.PM_FocusFrameHMargin) + 14
        for col in NUMBER_COLUMNS:
            widest = max((fm.horizontalAdvance(m.text(m.tensor_at(r))[col]) for r in rows), default=0)
            head = hdr.fontMetrics().horizontalAdvance(COLUMNS[col]) + 20  # room for the sort arrow
            self.view.setColumnWidth(col, max(widest + pad, head))
        self._fit_name()
        QTimer.singleShot(0, lambda: self._fit_name() if isValid(self) else None)  # again once laid out
        for col in range(len(COLUMNS), m.columnCount()):  # extra columns: as wide as their text, within reason
            widest = max((fm.horizontalAdvance(m._extra_text(m.tensor_at(r), col)) for r in rows), default=0)
            head = hdr.fontMetrics().horizontalAdvance(m.header(col)) + 20
            self.view.setColumnWidth(col, min(max(widest + pad, head), 320))

    def _fit_name(self) -> None:
        """The Name column gives up width (down to 100 px; its tooltip has it whole) so the columns
        up to Zero pt stay in view: B's at 1280×800 cut its zero points."""
        width = self.view.viewport().width()
        if width <= 0:
            return
        others = sum(self.view.columnWidth(c) for c in (0, 2, 3, 4, 5))
        self.view.setColumnWidth(1, max(100, min(170, width - others - 2)))

    def resizeEvent(self, e) -> None:  # noqa: N802
        super().resizeEvent(e)
        if self.model.subgraph is not None:
            self._fit_name()

    def visible_tensors(self) -> list[int]:
        """Tensor indices in the table's current order (after filter and sort)."""
        return [self.model.tensor_at(self.proxy.mapToSource(self.proxy.index(r, 0)).row()) for r in range(self.proxy.rowCount())]

    def selected_tensor(self) -> int | None:
        idx = self.view.selectionModel().currentIndex()
        return self.model.tensor_at(self.proxy.mapToSource(idx).row()) if idx.isValid() else None

    def select_tensor(self, index: int | None) -> None:
        """Show a selection made elsewhere, without emitting tensor_activated."""
        self._quiet = True
        try:
            sm = self.view.selectionModel()
            if index is None:
                sm.clearSelection()
                sm.setCurrentIndex(QModelIndex(), sm.SelectionFlag.NoUpdate)
                return
            pidx = self.proxy.mapFromSource(self.model.index(self.model.row_of(index), 0))
            if not pidx.isValid():  # filtered out
                sm.clearSelection()
                return
            sm.setCurrentIndex(pidx, sm.SelectionFlag.ClearAndSelect | sm.SelectionFlag.Rows)
            if not self.view.visualRect(pidx).intersects(self.view.viewport().rect()):  # a half-visible row stays put (see ModelPane.show_selection)
                self.view.scrollTo(pidx, QAbstractItemView.ScrollHint.EnsureVisible)
        finally:
            self._quiet = False

    def _current_changed(self, cur: QModelIndex, _prev: QModelIndex) -> None:
        if not self._quiet and cur.isValid():
            self.tensor_activated.emit(self.model.tensor_at(self.proxy.mapToSource(cur).row()))
