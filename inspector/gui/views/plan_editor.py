"""The requantize plan editor: base scheme, weight granularity, algorithm, and the chosen layers
each with a treatment (keep float, a16w8, int8 per-channel / per-tensor, weight-only int8/int4,
dynamic range) and, where the quantizer offers several for that op type, a calibration
algorithm. Layers are float-model op indices (model A), added from the current selection (layer
lists, layer error plot) or typed. Produces a `core.requant_plan.Plan`; runs nothing itself.
"""

from __future__ import annotations

import math
import re

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core.model import Model
from inspector.core.requant_choices import (
    ALGORITHM_LABELS,
    BASE_CHOICES,
    CHOICE_BY_KEY,
    TREATMENT_CHOICES,
    algorithms_for,
    op_rows,
    override_for,
    short_layer_name,
)
from inspector.core.requant_plan import Plan

LAYER_COLUMNS = ("#", "Layer", "SQNR", "Treatment", "Algorithm")
COL_TREATMENT, COL_ALGORITHM = 3, 4


def parse_ops(text: str) -> list[int]:
    """'11, 12 op:4 7-9' -> [11, 12, 4, 7, 8, 9]; ValueError naming the bad part."""
    out: list[int] = []
    for part in re.split(r"[\s,;]+", text.strip()):
        if not part:
            continue
        p = part[3:] if part.lower().startswith("op:") else part
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", p)
        if m is None:
            raise ValueError(f"'{part}' is not an op index (e.g. 11, op:12 or 7-9)")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        out += list(range(lo, hi + 1))
    return out


class PlanEditor(QWidget):
    run_requested = Signal(object)  # Plan
    cancel_requested = Signal()
    add_selected_requested = Signal()
    message = Signal(str)  # a user-facing problem (bad op index...)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.model: Model | None = None
        self.errors: dict[int, float] = {}
        self.base = QComboBox()
        for key, text in BASE_CHOICES:
            self.base.addItem(text, key)
        self.base.setToolTip("Scheme for every layer not listed below")
        self.base.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.base.setMinimumContentsLength(10)
        self.base_note = QLabel()
        self.per_channel = QCheckBox("per-channel weights", checked=True)
        self.algorithm = QComboBox()
        for key, text in ALGORITHM_LABELS.items():
            self.algorithm.addItem(text, key)
        self.algorithm.setToolTip("Range calibration for the base scheme (MSE: weights of conv / fully connected only)")
        base_row = QHBoxLayout()
        base_row.addWidget(self.base, 1)
        base_row.addWidget(self.base_note)
        opts_row = QHBoxLayout()
        opts_row.addWidget(self.per_channel)
        opts_row.addWidget(QLabel("algorithm"))
        opts_row.addWidget(self.algorithm, 1)
        form = QFormLayout()
        form.addRow("Base scheme", base_row)
        form.addRow("Weights", opts_row)

        self.table = QTableWidget(0, len(LAYER_COLUMNS))
        self.table.setHorizontalHeaderLabels(LAYER_COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for col, w in ((0, 30), (2, 48), (COL_TREATMENT, 118), (COL_ALGORITHM, 76)):
            self.table.setColumnWidth(col, w)
        self.new_choice = QComboBox()
        for c in TREATMENT_CHOICES:
            self.new_choice.addItem(c.label, c.key)
        self.new_choice.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.new_choice.setMinimumContentsLength(10)
        self.new_choice.setToolTip("Treatment for layers you add; with rows selected, also applied to them")
        self.new_choice.activated.connect(lambda _i: self._apply_to_selected())
        self.add_button = QPushButton("Add selected")
        self.add_button.setToolTip("Add the layer selected in the layer lists or the layer error plot (Ctrl+Shift+A)")
        self.add_button.clicked.connect(self.add_selected_requested.emit)
        self.ops_edit = QLineEdit()
        self.ops_edit.setPlaceholderText("op indices of A, e.g. 11, 12")
        self.ops_edit.returnPressed.connect(self._add_typed)
        self.remove_button = QPushButton("Remove")
        self.remove_button.clicked.connect(self.remove_selected)
        add_row = QHBoxLayout()
        add_row.addWidget(QLabel("Treatment"))
        add_row.addWidget(self.new_choice, 1)
        add_row.addWidget(self.add_button)
        edit_row = QHBoxLayout()
        edit_row.addWidget(self.ops_edit, 1)
        edit_row.addWidget(self.remove_button)

        self.calibration = QLabel()
        self.calibration.setWordWrap(True)
        self.run_button = QPushButton("Run requantize")
        self.run_button.setDefault(True)
        self.run_button.clicked.connect(lambda: self.run_requested.emit(self.plan()))
        self.cancel_button = QPushButton("Cancel", enabled=False)
        self.cancel_button.clicked.connect(self.cancel_requested.emit)
        self.bar = QProgressBar()
        self.bar.setTextVisible(False)
        self.bar.setRange(0, 1000)
        run_row = QHBoxLayout()
        run_row.addWidget(self.run_button)
        run_row.addWidget(self.cancel_button)
        run_row.addWidget(self.bar, 1)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(form)
        lay.addWidget(self.table, 1)
        lay.addLayout(add_row)
        lay.addLayout(edit_row)
        lay.addWidget(self.calibration)
        lay.addLayout(run_row)
        lay.addWidget(self.status)

    # ------------------------------------------------------------------ inputs
    def set_float_model(self, model: Model | None) -> None:
        if model is not self.model:
            self.model = model
            self.table.setRowCount(0)

    def set_base(self, base: str, note: str = "") -> None:
        self.base.setCurrentIndex(max(0, self.base.findData(base)))
        self.base_note.setText(note)

    def set_errors(self, errors: dict[int, float]) -> None:
        """SQNR (dB) of the current comparison per float op index, for the 'SQNR now' column."""
        self.errors = dict(errors)
        for r in range(self.table.rowCount()):
            self.table.setItem(r, 2, self._sqnr_item(self.row_op(r)))

    def set_calibration_text(self, text: str) -> None:
        self.calibration.setText(text)

    # ------------------------------------------------------------------ rows
    def row_op(self, row: int) -> int:
        return int(self.table.item(row, 0).text())

    def ops(self) -> list[int]:
        return [self.row_op(r) for r in range(self.table.rowCount())]

    def add_layers(self, ops: list[int], choice: str | None = None, algorithm: str | None = None) -> list[int]:
        """Add (or re-treat) float ops; returns the ops added or changed."""
        key = choice or self.new_choice.currentData()
        n = len(self.model.main.ops) if self.model is not None else 0
        bad = [i for i in ops if not 0 <= i < n]
        if bad:
            self.message.emit(f"model A has ops 0..{n - 1}; there is no op {bad[0]}")
            ops = [i for i in ops if 0 <= i < n]
        for op in ops:
            row = self.ops().index(op) if op in self.ops() else self._new_row(op)
            self.set_row_choice(row, key, algorithm)
        return ops

    def _new_row(self, op: int) -> int:
        sg = self.model.main  # type: ignore[union-attr]
        r = self.table.rowCount()
        self.table.insertRow(r)
        outs = [sg.tensors[o].name for o in sg.ops[op].outputs if o >= 0]
        num = QTableWidgetItem(str(op))
        num.setTextAlignment(int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter))
        name = QTableWidgetItem(f"{short_layer_name(self.model, op)} ({sg.ops[op].type})")  # type: ignore[arg-type]
        name.setToolTip(f"op {op} of model A: {sg.ops[op].type}\n" + "\n".join(outs))
        for it in (num, name):
            it.setFlags(Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled)
        self.table.setItem(r, 0, num)
        self.table.setItem(r, 1, name)
        self.table.setItem(r, 2, self._sqnr_item(op))
        treat = QComboBox()
        treat.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        for c in TREATMENT_CHOICES:
            treat.addItem(c.label, c.key)
        algo = QComboBox()
        algo.addItem("as base", "")
        for a in algorithms_for(sg.ops[op].type):
            algo.addItem(ALGORITHM_LABELS[a], a)
        algo.setToolTip(f"Calibration algorithms litert-quantizer offers for {sg.ops[op].type}")
        treat.currentIndexChanged.connect(lambda _i, t=treat, a=algo: a.setEnabled(CHOICE_BY_KEY[t.currentData()].takes_algorithm))
        self.table.setCellWidget(r, COL_TREATMENT, treat)
        self.table.setCellWidget(r, COL_ALGORITHM, algo)
        return r

    def _sqnr_item(self, op: int) -> QTableWidgetItem:
        v = self.errors.get(op)
        text = "" if v is None else ("∞" if math.isinf(v) else f"{v:.1f}")
        it = QTableWidgetItem(text)
        it.setTextAlignment(int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter))
        it.setFlags(Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled)
        it.setToolTip("SQNR (dB) of this layer's output in the current comparison")
        return it

    def set_row_choice(self, row: int, key: str, algorithm: str | None = None) -> None:
        treat: QComboBox = self.table.cellWidget(row, COL_TREATMENT)  # type: ignore[assignment]
        algo: QComboBox = self.table.cellWidget(row, COL_ALGORITHM)  # type: ignore[assignment]
        treat.setCurrentIndex(treat.findData(key))
        algo.setEnabled(CHOICE_BY_KEY[key].takes_algorithm)
        i = algo.findData(algorithm or "")
        algo.setCurrentIndex(i if i >= 0 else 0)

    def row_choice(self, row: int) -> tuple[str, str | None]:
        treat: QComboBox = self.table.cellWidget(row, COL_TREATMENT)  # type: ignore[assignment]
        algo: QComboBox = self.table.cellWidget(row, COL_ALGORITHM)  # type: ignore[assignment]
        return treat.currentData(), (algo.currentData() or None)

    def remove_selected(self) -> None:
        for r in sorted({i.row() for i in self.table.selectionModel().selectedRows()}, reverse=True):
            self.table.removeRow(r)

    def clear_layers(self) -> None:
        self.table.setRowCount(0)

    def _apply_to_selected(self) -> None:
        for i in self.table.selectionModel().selectedRows():
            self.set_row_choice(i.row(), self.new_choice.currentData())

    def _add_typed(self) -> None:
        try:
            ops = parse_ops(self.ops_edit.text())
        except ValueError as e:
            self.message.emit(str(e))
            return
        if self.model is None:
            self.message.emit("Open the float model (A) first.")
            return
        self.add_layers(ops)
        self.ops_edit.clear()

    # ------------------------------------------------------------------ plan
    def plan(self) -> Plan:
        overrides = [override_for(self.row_op(r), *self.row_choice(r)) for r in range(self.table.rowCount())]
        return Plan(base=self.base.currentData(), overrides=tuple(overrides),
                    per_channel=self.per_channel.isChecked(), algorithm=self.algorithm.currentData())  # fmt: skip

    def set_plan(self, plan: Plan) -> None:
        self.set_base(plan.base, self.base_note.text())
        self.per_channel.setChecked(plan.per_channel)
        self.algorithm.setCurrentIndex(max(0, self.algorithm.findData(plan.algorithm)))
        self.clear_layers()
        for op, key, algo in op_rows(plan):
            self.add_layers([op], key, algo)

    # ------------------------------------------------------------------ run state
    def set_running(self, running: bool, text: str = "") -> None:
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.bar.setRange(0, 0 if running else 1000)
        if not running:
            self.bar.setValue(0)
        if text:
            self.status.setText(text)

    def set_progress(self, fraction: float, text: str) -> None:
        if fraction < 0:
            self.bar.setRange(0, 0)
        else:
            self.bar.setRange(0, 1000)
            self.bar.setValue(int(1000 * fraction))
        if text:
            self.status.setText(text)
