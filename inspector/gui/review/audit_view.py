"""Audit view: the `core.audit.audit_model` findings of model B, sortable and filterable.

Each row: severity (icon and colour), op, tensor, rule, observed vs expected, message.
Activating a row emits `finding_selected(Finding)`; the window then selects that op / tensor in
every view. Renders findings only; the audit itself runs in `gui.review`.
"""

from __future__ import annotations

import html
import math

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSplitter,
    QStyle,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from inspector.core.review.audit import SEVERITY_RANK, Finding
from inspector.gui.views.item_roles import ForwardingFilterProxy, MultiRoleTableModel
from inspector.gui.views.plot_style import brush, is_dark

COLUMNS = ("Severity", "Op", "Tensor", "Rule", "Observed", "Expected", "Message")
SEVERITY_COLORS = {"error": "#d62728", "warning": "#e08a00", "info": "#2f7ed8"}
SEVERITY_ICONS = {
    "error": QStyle.StandardPixmap.SP_MessageBoxCritical,
    "warning": QStyle.StandardPixmap.SP_MessageBoxWarning,
    "info": QStyle.StandardPixmap.SP_MessageBoxInformation,
}
SORT_ROLE = Qt.ItemDataRole.UserRole + 1
EMPTY_TEXT = "Open a quantized model (B) to audit it against the TFLite quantization rules."


def value_text(v, limit: int = 6) -> str:
    """Observed / expected values in a cell: numbers to 5 significant digits, long lists cut."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return "∞" if math.isinf(v) else f"{v:.5g}"
    if isinstance(v, list | tuple):
        items = [value_text(x, limit) for x in v[:limit]]
        more = f", … ({len(v)} values)" if len(v) > limit else ""
        return "[" + ", ".join(items) + more + "]"
    if isinstance(v, dict):
        return ", ".join(f"{k}: {value_text(x, limit)}" for k, x in v.items())
    return str(v)


def detail_html(f: Finding) -> str:
    """The selected finding in full: severity, rule, where, message, observed vs expected."""
    where = "the whole model" if f.op_index is None else f"op {f.op_index} {f.op_type or ''}"
    if f.tensor_name:
        where += f", tensor {f.tensor_index} '{f.tensor_name}'"
    if f.subgraph:
        where += f" (subgraph {f.subgraph})"
    color = SEVERITY_COLORS.get(f.severity, "#7f7f7f")
    return (f"<p><b style='color:{color}'>{f.severity.upper()}</b> · <b>{html.escape(f.rule)}</b> · {html.escape(where)}</p>"
            f"<p>{html.escape(f.message)}</p>"
            f"<p><b>observed:</b> <code>{html.escape(value_text(f.observed, 64))}</code><br>"
            f"<b>expected:</b> <code>{html.escape(value_text(f.expected, 64))}</code></p>")


class FindingsModel(MultiRoleTableModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.findings: list[Finding] = []
        self._icons: dict = {}
        self.shown_subgraph = 0  # the subgraph the panes show: other findings name theirs
        self.subgraph_labels: dict[int, str] = {}  # subgraph -> "signature 'decode'"

    def set_findings(self, findings: list[Finding]) -> None:
        self.beginResetModel()
        self.findings = list(findings)
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.findings)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def text(self, f: Finding, col: int) -> str:
        if col == 0:
            return f.severity
        if col == 1:
            if f.op_index is None:
                return "model"
            return f"{f.op_index} {f.op_type or ''}{self.where(f)}"
        if col == 2:
            return f.tensor_name or ""
        if col == 3:
            return f.rule
        if col == 4:
            return value_text(f.observed)
        if col == 5:
            return value_text(f.expected)
        return f.message

    def where(self, f: Finding) -> str:
        """' (signature 'decode', subgraph 0)' for a finding outside the subgraph shown, else ''."""
        if f.subgraph == self.shown_subgraph:
            return ""
        label = self.subgraph_labels.get(f.subgraph)
        return f" ({label}, subgraph {f.subgraph})" if label else f" (subgraph {f.subgraph})"

    def set_shown_subgraph(self, subgraph: int, labels: dict[int, str] | None = None) -> None:
        self.layoutAboutToBeChanged.emit()
        self.shown_subgraph, self.subgraph_labels = subgraph, dict(labels or {})
        self.layoutChanged.emit()

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        f, col = self.findings[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.text(f, col)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{f.severity}: {f.rule}\n{f.message}\nobserved: {value_text(f.observed, 32)}\nexpected: {value_text(f.expected, 32)}"
        if role == SORT_ROLE:
            if col == 0:
                return SEVERITY_RANK.get(f.severity, -1)
            if col == 1:
                return -1 if f.op_index is None else f.subgraph * 1_000_000 + f.op_index
            return self.text(f, col).lower()
        if role == Qt.ItemDataRole.DecorationRole and col == 0:
            if f.severity not in self._icons and f.severity in SEVERITY_ICONS:
                self._icons[f.severity] = QApplication.style().standardIcon(SEVERITY_ICONS[f.severity])
            return self._icons.get(f.severity)
        if role == Qt.ItemDataRole.ForegroundRole and col == 0:
            return QColor(SEVERITY_COLORS.get(f.severity, "#7f7f7f"))
        if role == Qt.ItemDataRole.BackgroundRole and f.severity in ("error", "warning"):
            return brush(SEVERITY_COLORS[f.severity], 60 if is_dark() else 28)
        return None

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None


class FindingsFilter(ForwardingFilterProxy):
    """Hides severities that are switched off and rows not containing the filter text."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.severities = set(SEVERITY_RANK)
        self.text = ""
        self.setSortRole(SORT_ROLE)

    def set_filter(self, severities: set[str] | None = None, text: str | None = None) -> None:
        if severities is not None:
            self.severities = set(severities)
        if text is not None:
            self.text = text.strip().lower()
        self.invalidateFilter()

    def filterAcceptsRow(self, row: int, parent: QModelIndex | QPersistentModelIndex) -> bool:
        model = self.sourceModel()
        if not isinstance(model, FindingsModel):
            return False
        f = model.findings[row]
        if f.severity not in self.severities:
            return False
        if not self.text:
            return True
        return any(self.text in model.text(f, c).lower() for c in range(len(COLUMNS)))


class AuditView(QWidget):
    finding_selected = Signal(object)  # Finding

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.summary = QLabel(EMPTY_TEXT)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setWordWrap(True)
        self.checks = {s: QCheckBox(label) for s, label in (("error", "errors"), ("warning", "warnings"), ("info", "info"))}
        self.search = QLineEdit()
        self.search.setPlaceholderText("Filter: op, tensor, rule, message…")
        self.search.setClearButtonEnabled(True)
        self.search.setMaximumWidth(320)
        bar = QHBoxLayout()
        bar.addWidget(self.summary, 1)
        for s, cb in self.checks.items():
            cb.setChecked(True)
            cb.setStyleSheet(f"QCheckBox {{ color: {SEVERITY_COLORS[s]}; font-weight: bold; }}")
            cb.toggled.connect(self._filter_changed)
            bar.addWidget(cb)
        bar.addWidget(self.search)
        self.search.textChanged.connect(self._filter_changed)

        self.model = FindingsModel(self)
        self.proxy = FindingsFilter(self)
        self.proxy.setSourceModel(self.model)
        self.view = QTableView()
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(1, Qt.SortOrder.AscendingOrder)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.verticalHeader().hide()
        self.view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.view.setWordWrap(False)
        self.view.setTextElideMode(Qt.TextElideMode.ElideRight)
        hh = self.view.horizontalHeader()
        hh.setStretchLastSection(True)
        for col, width in enumerate((90, 170, 200, 190, 150, 150)):
            self.view.setColumnWidth(col, width)
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.view.selectionModel().currentRowChanged.connect(self._current_changed)
        self.detail = QTextBrowser()
        self.detail.setPlaceholderText("Select a finding to see its full message, observed and expected values.")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.view)
        split.addWidget(self.detail)
        split.setSizes([260, 120])
        lay = QVBoxLayout(self)
        lay.addLayout(bar)
        lay.addWidget(split, 1)

    # ------------------------------------------------------------------ rendering
    def set_findings(self, findings: list[Finding] | None, source: str = "", note: str = "") -> None:
        """Show findings of the model `source` names (None: nothing audited, show the hint / note)."""
        self.model.set_findings(findings or [])
        if findings is None:
            self.summary.setText(note or EMPTY_TEXT)
            return
        n = {s: sum(1 for f in findings if f.severity == s) for s in SEVERITY_COLORS}
        parts = [f"<span style='color:{SEVERITY_COLORS[s]}'><b>{n[s]}</b> {s}{'s' if n[s] != 1 else ''}</span>"
                 for s in SEVERITY_COLORS]
        clean = " — no rule violations" if not n["error"] and not n["warning"] else ""
        self.summary.setText(f"Audit of <b>{source}</b>: {', '.join(parts)}{clean}" + (f" <i>({note})</i>" if note else ""))

    def visible_findings(self) -> list[Finding]:
        """Findings in the order and filter the table shows them."""
        return [self.model.findings[self.proxy.mapToSource(self.proxy.index(r, 0)).row()] for r in range(self.proxy.rowCount())]

    def select_row(self, row: int) -> None:
        """Select the `row`-th visible finding (as a click does)."""
        sm = self.view.selectionModel()
        sm.setCurrentIndex(self.proxy.index(row, 0), sm.SelectionFlag.ClearAndSelect | sm.SelectionFlag.Rows)

    def _filter_changed(self, *_args) -> None:
        self.proxy.set_filter({s for s, cb in self.checks.items() if cb.isChecked()}, self.search.text())

    def _current_changed(self, cur: QModelIndex, _prev: QModelIndex) -> None:
        if not cur.isValid():
            self.detail.clear()
            return
        f = self.model.findings[self.proxy.mapToSource(cur).row()]
        self.detail.setHtml(detail_html(f))
        self.finding_selected.emit(f)

    def keyPressEvent(self, e) -> None:
        if e.matches(QKeySequence.StandardKey.Copy):
            rows = sorted({i.row() for i in self.view.selectionModel().selectedRows()})
            fs = [self.model.findings[self.proxy.mapToSource(self.proxy.index(r, 0)).row()] for r in rows]
            QGuiApplication.clipboard().setText("\n".join("\t".join(self.model.text(f, c) for c in range(len(COLUMNS))) for f in fs))
            return
        super().keyPressEvent(e)
