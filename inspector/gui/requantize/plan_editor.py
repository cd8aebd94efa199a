"""The requantize plan editor: the route, and the chosen layers each with an edit.

Route "edit model B" (surgical, the default): each layer gets one edit of B's op (keep float,
per-channel weights, MSE weight rounding, bias correction, a16w8, output re-calibration by
min/max, MSE or a percentile); produces a `SurgicalPlan` addressed by B's op index. Route
"regenerate from the float file" (litert-quantizer): base scheme, weight granularity, algorithm,
and per layer a treatment (keep float, a16w8, int8 per-channel / per-tensor, weight-only,
dynamic range) with a calibration algorithm; produces a `Plan` on A's ops. Each row holds B's op
(the layer identity of the GUI, what a surgical edit names; also an op of B without a counterpart
in A, such as the input QUANTIZE) and A's match when there is one (the quantizer route's op, and
what re-finds B's op when another version renumbers B). Runs nothing itself.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

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
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core.requantize.choices import (
    ALGORITHM_LABELS,
    BASE_CHOICES,
    CHOICE_BY_KEY,
    EDIT_BY_KEY,
    EDIT_CHOICES,
    TREATMENT_CHOICES,
    algorithms_for,
    edit_choice_of,
    edit_for,
    op_rows,
    override_for,
    short_layer_name,
)
from inspector.core.requantize.plan import Plan
from inspector.core.requantize.suggest_surgical import applicable
from inspector.core.requantize.surgical_plan import KINDS, SurgicalPlan
from inspector.core.tflite.equalize_pair import refusal as equalize_refusal
from inspector.core.tflite.model import Model
from inspector.gui.views.run_row import RunRow
from inspector.gui.views.sizing import table_height

LAYER_COLUMNS = ("#", "Layer", "SQNR", "Treatment", "Algorithm")
ROLE_A, ROLE_B = Qt.ItemDataRole.UserRole, Qt.ItemDataRole.UserRole + 1  # a row's op of A / of B (-1: none)
COL_TREATMENT, COL_ALGORITHM = 3, 4
SURGICAL, QUANTIZER = "surgical", "quantizer"
ROUTES = (
    (SURGICAL, "edit model B (surgical: every other op stays as it is)"),
    (QUANTIZER, "regenerate from the float file (litert-quantizer)"),
)
ROUTE_TIPS = {
    SURGICAL: "Each listed op of the quantized model B gets the chosen edit, using model A's float weights; "
              "every other op, tensor and buffer of B is left byte-identical.",
    QUANTIZER: "litert-quantizer quantizes model A again, calibration seeded from B's ranges; a no-change "
               "run is made first and used as the baseline, so the deltas show only the plan's effect.",
}


def route_choices(route: str) -> list[tuple[str, str, str]]:
    """(key, label, tooltip) of the per-layer choices of a route."""
    if route == SURGICAL:
        return [(c.key, c.label, c.tip) for c in EDIT_CHOICES]
    return [(c.key, c.label, "") for c in TREATMENT_CHOICES]


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
        self.quant_model: Model | None = None  # model B (which edits apply to which op)
        self.quant_ops = 0  # ops in model B's main subgraph (0: no B open)
        self.b_to_a: Callable[[int], int | None] = lambda i: i  # B's op index -> A's (the plan's)
        self.a_to_b: Callable[[int], int | None] = lambda i: i
        self.errors: dict[int, float] = {}
        self.route = QComboBox()
        for key, text in ROUTES:
            self.route.addItem(text, key)
        self.route.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.route.setMinimumContentsLength(12)
        self.route.setToolTip(ROUTE_TIPS[SURGICAL])
        self.route.currentIndexChanged.connect(lambda _i: self._route_changed())
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
        form.addRow("Route", self.route)
        form.addRow("Base scheme", base_row)
        form.addRow("Weights", opts_row)
        self.form = form

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
        _fill(self.new_choice, route_choices(SURGICAL), None)
        self.new_choice.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.new_choice.setMinimumContentsLength(10)
        self.new_choice.setToolTip("Edit (or treatment) for layers you add; with rows selected, also applied to them")
        self.new_choice.activated.connect(lambda _i: self._apply_to_selected())
        self.add_button = QPushButton("Add selected")
        self.add_button.setToolTip("Add the layer selected in the layer lists or the layer error plot (Ctrl+Shift+A)")
        self.add_button.clicked.connect(self.add_selected_requested.emit)
        self.ops_edit = QLineEdit()
        self.ops_edit.setPlaceholderText("op indices of B (as in the plot and tables), e.g. 11, 12")
        self.ops_edit.returnPressed.connect(self._add_typed)
        self.remove_button = QPushButton("Remove")
        self.remove_button.clicked.connect(self.remove_selected)
        add_row = QHBoxLayout()
        self.choice_label = QLabel("Edit")
        add_row.addWidget(self.choice_label)
        add_row.addWidget(self.new_choice, 1)
        add_row.addWidget(self.add_button)
        edit_row = QHBoxLayout()
        edit_row.addWidget(self.ops_edit, 1)
        edit_row.addWidget(self.remove_button)

        self.calibration = QLabel()
        self.calibration.setWordWrap(True)
        self.run_row = RunRow("Run requantize", bar_beside=True)
        self.run_button, self.cancel_button = self.run_row.run_button, self.run_row.cancel_button
        self.bar, self.status = self.run_row.bar, self.run_row.status
        self.run_button.clicked.connect(lambda: self.run_requested.emit(self.plan()))
        self.cancel_button.clicked.connect(self.cancel_requested.emit)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(form)
        self.table.setMinimumHeight(table_height(self.table, 4))  # a long status never squeezes the rows away
        lay.addWidget(self.table, 1)
        lay.addLayout(add_row)
        lay.addLayout(edit_row)
        lay.addWidget(self.calibration)
        lay.addWidget(self.run_row)
        self._route_changed()

    def take_run_row(self) -> RunRow:
        """The Run / Cancel / progress / status row, out of this editor's layout: the panel pins
        it below its scroll area, so Run is never scrolled or cut away in a small window."""
        self.layout().removeWidget(self.run_row)
        return self.run_row

    # ------------------------------------------------------------------ route
    def current_route(self) -> str:
        return self.route.currentData()

    def set_route(self, route: str) -> None:
        self.route.setCurrentIndex(max(0, self.route.findData(route)))

    def _route_changed(self) -> None:
        """Swap the per-layer choices (rows keep their layers, mapped to the closest choice)."""
        route = self.current_route()
        quantizer = route == QUANTIZER
        self.route.setToolTip(ROUTE_TIPS[route])
        for row in (1, 2):
            self.form.setRowVisible(row, quantizer)
        self.choice_label.setText("Treatment" if quantizer else "Edit")
        self.table.setColumnHidden(COL_ALGORITHM, not quantizer)
        self.table.setColumnWidth(COL_TREATMENT, 118 if quantizer else 164)
        self.table.horizontalHeaderItem(COL_TREATMENT).setText("Treatment" if quantizer else "Edit")
        keep = self.new_choice.currentData()
        _fill(self.new_choice, route_choices(route), keep)
        for r in range(self.table.rowCount()):
            treat: QComboBox = self.table.cellWidget(r, COL_TREATMENT)  # type: ignore[assignment]
            _fill(treat, route_choices(route), treat.currentData())
            algo = self.table.cellWidget(r, COL_ALGORITHM)
            algo.setEnabled(quantizer and CHOICE_BY_KEY[treat.currentData()].takes_algorithm)
            self._mark_applicable(r)

    # ------------------------------------------------------------------ inputs
    def set_float_model(self, model: Model | None) -> None:
        if model is not self.model:
            self.model = model
            self.table.setRowCount(0)

    def set_op_maps(self, quant_ops: int, b_to_a: Callable[[int], int | None], a_to_b: Callable[[int], int | None]) -> None:
        """The layer identifier is B's op index: rows show it (A's beside it where it differs),
        the typed field takes it; the plan itself is on A's ops (requantize starts from A)."""
        self.quant_ops, self.b_to_a, self.a_to_b = quant_ops, b_to_a, a_to_b
        for r in range(self.table.rowCount()):
            a = self.row_op(r)
            if a is not None:  # B's op of a row with a float op: re-found in the B now open
                b = a_to_b(a) if quant_ops else a
                self.table.item(r, 0).setData(ROLE_B, -1 if b is None else b)
            self._label_row(r)
            self._mark_applicable(r)

    def set_quant_model(self, model: Model | None) -> None:
        self.quant_model = model
        for r in range(self.table.rowCount()):
            self._mark_applicable(r)

    def applicable_edits(self, a_op: int) -> set[str] | None:
        """Edit kinds that apply to the B op of A's op `a_op` (None: not known, no B open)."""
        return self.applicable_to_b(self.a_to_b(a_op) if self.quant_ops else None)

    def applicable_to_b(self, b: int | None) -> set[str] | None:
        """Edit kinds that apply to B's op `b` (None: not known, no B open)."""
        qm = self.quant_model
        if qm is None or b is None or not 0 <= b < len(qm.main.ops):
            return None
        kinds = set(applicable(qm, b, [k for k in KINDS if k != "weight_mse"]))
        return kinds | ({"weight_mse"} if "per_channel" in kinds else set())

    def _mark_applicable(self, r: int) -> None:
        """Grey out the edits that do not apply to the row's op (surgical route)."""
        treat: QComboBox = self.table.cellWidget(r, COL_TREATMENT)  # type: ignore[assignment]
        kinds = self.applicable_to_b(self.row_b_op(r)) if self.current_route() == SURGICAL and self.quant_ops else None
        model = treat.model()
        for i in range(treat.count()):
            c = EDIT_BY_KEY.get(treat.itemData(i))
            model.item(i).setEnabled(kinds is None or c is None or c.kind in kinds)  # type: ignore[attr-defined]

    def set_base(self, base: str, note: str = "") -> None:
        self.base.setCurrentIndex(max(0, self.base.findData(base)))
        self.base_note.setText(note)

    def set_errors(self, errors: dict[int, float]) -> None:
        """SQNR (dB) of the current comparison per float op index, for the 'SQNR now' column."""
        self.errors = dict(errors)
        for r in range(self.table.rowCount()):
            self.table.setItem(r, 2, self._sqnr_item(self.row_op(r)))  # keyed by A's op; none without one

    def set_calibration_text(self, text: str) -> None:
        self.calibration.setText(text)

    # ------------------------------------------------------------------ rows
    def row_op(self, row: int) -> int | None:
        """The row's op of model A (what the quantizer route's plan names); None: B's op has none."""
        a = int(self.table.item(row, 0).data(ROLE_A))
        return None if a < 0 else a

    def row_b_op(self, row: int) -> int | None:
        """The row's op of model B (what a surgical edit names); None: A's op has no counterpart."""
        b = int(self.table.item(row, 0).data(ROLE_B))
        return None if b < 0 else b

    def ops(self) -> list[int]:
        """A's ops of the rows that have one."""
        return [a for r in range(self.table.rowCount()) if (a := self.row_op(r)) is not None]

    def b_ops(self) -> list[int]:
        """B's ops of the rows that have one (the surgical plan's ops, in row order)."""
        return [b for r in range(self.table.rowCount()) if (b := self.row_b_op(r)) is not None]

    def _row_of(self, a: int | None = None, b: int | None = None) -> int | None:
        for r in range(self.table.rowCount()):
            if (a is not None and self.row_op(r) == a) or (b is not None and self.row_b_op(r) == b):
                return r
        return None

    def add_layers(self, ops: list[int], choice: str | None = None, algorithm: str | None = None) -> list[int]:
        """Add (or re-treat) float ops; returns the ops added or changed."""
        key = choice or self.new_choice.currentData()
        n = len(self.model.main.ops) if self.model is not None else 0
        bad = [i for i in ops if not 0 <= i < n]
        if bad:
            self.message.emit(f"model A has ops 0..{n - 1}; there is no op {bad[0]}")
            ops = [i for i in ops if 0 <= i < n]
        for op in ops:
            row = self._row_of(a=op)
            if row is None:
                b = self.a_to_b(op) if self.quant_ops else op
                row = self._new_row(op, b)
            self.set_row_choice(row, key, algorithm)
            self._mark_applicable(row)
            kinds = self.applicable_edits(op) if self.current_route() == SURGICAL else None
            if kinds is not None and key in EDIT_BY_KEY and EDIT_BY_KEY[key].kind not in kinds:
                self.message.emit(self._not_applicable(self.a_to_b(op), key))  # type: ignore[arg-type]
        return ops

    def add_b_layers(self, b_ops: list[int], choice: str | None = None) -> list[int]:
        """Add (or re-edit) B's ops on the surgical route, also those without a counterpart in A
        (the input QUANTIZE...); returns the ops added or changed."""
        key = choice or self.new_choice.currentData()
        n = self.quant_ops or (len(self.quant_model.main.ops) if self.quant_model is not None else 0)
        bad = [i for i in b_ops if not 0 <= i < n]
        if bad:
            self.message.emit(f"model B has ops 0..{n - 1}; there is no op {bad[0]}")
            b_ops = [i for i in b_ops if 0 <= i < n]
        for b in b_ops:
            row = self._row_of(b=b)
            if row is None:
                row = self._new_row(self.b_to_a(b) if self.quant_ops else b, b)
            self.set_row_choice(row, key)
            self._mark_applicable(row)
            kinds = self.applicable_to_b(b)
            if kinds is not None and key in EDIT_BY_KEY and EDIT_BY_KEY[key].kind not in kinds:
                self.message.emit(self._not_applicable(b, key))
        return b_ops

    def _not_applicable(self, b: int, key: str) -> str:
        """Why the edit `key` does not apply to B's op `b` (equalize says its reason)."""
        qm = self.quant_model
        op_type = qm.main.ops[b].type if qm is not None else "?"
        if EDIT_BY_KEY[key].kind == "equalize" and qm is not None and (why := equalize_refusal(qm, b)):
            return why
        return f"{EDIT_BY_KEY[key].label} does not apply to op {b} of model B ({op_type}); choose another edit for it"

    def _new_row(self, op: int | None, b: int | None = None) -> int:
        r = self.table.rowCount()
        self.table.insertRow(r)
        num, name = QTableWidgetItem(), QTableWidgetItem()
        num.setTextAlignment(int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter))
        num.setData(ROLE_A, -1 if op is None else op)
        num.setData(ROLE_B, -1 if b is None else b)
        for it in (num, name):
            it.setFlags(Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled)
        self.table.setItem(r, 0, num)
        self.table.setItem(r, 1, name)
        self._label_row(r)
        self.table.setItem(r, 2, self._sqnr_item(op))
        op_type = self._row_type(r)
        treat = QComboBox()
        treat.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        _fill(treat, route_choices(self.current_route()), None)
        algo = QComboBox()
        algo.addItem("as base", "")
        for a in algorithms_for(op_type):
            algo.addItem(ALGORITHM_LABELS[a], a)
        algo.setToolTip(f"Calibration algorithms litert-quantizer offers for {op_type}")
        treat.currentIndexChanged.connect(lambda _i, t=treat, a=algo: a.setEnabled(self._takes_algorithm(t.currentData())))
        self.table.setCellWidget(r, COL_TREATMENT, treat)
        self.table.setCellWidget(r, COL_ALGORITHM, algo)
        return r

    def _row_type(self, r: int) -> str:
        a, b = self.row_op(r), self.row_b_op(r)
        if a is not None and self.model is not None:
            return self.model.main.ops[a].type
        if b is not None and self.quant_model is not None and b < len(self.quant_model.main.ops):
            return self.quant_model.main.ops[b].type
        return "?"

    def _label_row(self, r: int) -> None:
        """'#' is B's op; the name is the one of `core.tflite.layer_names` (B's model where the
        row's op is B's alone), with A's op beside it where the numbers differ."""
        op, b = self.row_op(r), self.row_b_op(r)
        num, name = self.table.item(r, 0), self.table.item(r, 1)
        num.setText("–" if b is None else str(b))
        if op is None:  # an op of B alone (QUANTIZE at the input...)
            qm = self.quant_model
            sg = qm.main if qm is not None else None
            short = short_layer_name(qm, b) if qm is not None and b is not None else f"op {b}"
            name.setText(f"{short} ({self._row_type(r)}) · not in A")
            outs = [sg.tensors[o].name for o in sg.ops[b].outputs if o >= 0] if sg is not None and b is not None and b < len(sg.ops) else []
            name.setToolTip(f"op {b} of model B: {self._row_type(r)}; no counterpart in model A "
                            "(surgical edits only)\n" + "\n".join(outs))
            return
        sg = self.model.main  # type: ignore[union-attr]
        beside = "" if b == op else f" · A: op {op}"
        name.setText(f"{short_layer_name(self.model, op)} ({sg.ops[op].type}){beside}")  # type: ignore[arg-type]
        outs = [sg.tensors[o].name for o in sg.ops[op].outputs if o >= 0]
        where = "no counterpart in model B" if b is None else f"op {b} of model B"
        name.setToolTip(f"{where}; op {op} of model A: {sg.ops[op].type}\n" + "\n".join(outs))

    def _sqnr_item(self, op: int | None) -> QTableWidgetItem:
        v = None if op is None else self.errors.get(op)
        text = "" if v is None else ("∞" if math.isinf(v) else f"{v:.1f}")
        it = QTableWidgetItem(text)
        it.setTextAlignment(int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter))
        it.setFlags(Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled)
        it.setToolTip("SQNR (dB) of this layer's output in the current comparison")
        return it

    def set_row_choice(self, row: int, key: str, algorithm: str | None = None) -> None:
        treat: QComboBox = self.table.cellWidget(row, COL_TREATMENT)  # type: ignore[assignment]
        algo: QComboBox = self.table.cellWidget(row, COL_ALGORITHM)  # type: ignore[assignment]
        treat.setCurrentIndex(max(0, treat.findData(key)))
        algo.setEnabled(self._takes_algorithm(treat.currentData()))
        i = algo.findData(algorithm or "")
        algo.setCurrentIndex(i if i >= 0 else 0)

    def _takes_algorithm(self, key: str | None) -> bool:
        return self.current_route() == QUANTIZER and key in CHOICE_BY_KEY and CHOICE_BY_KEY[key].takes_algorithm

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
        if self.quant_ops:  # typed numbers are B's op indices (as in the plot and tables)
            bad = [i for i in ops if not 0 <= i < self.quant_ops]
            if bad:
                self.message.emit(f"model B has ops 0..{self.quant_ops - 1}; there is no op {bad[0]}")
                return
            if self.current_route() == SURGICAL:  # rows hold B's op: also one that A does not have
                self.add_b_layers(ops)
                self.ops_edit.clear()
                return
            mapped = {i: self.b_to_a(i) for i in ops}
            none = [i for i, a in mapped.items() if a is None]
            if none:
                self.message.emit(f"op {none[0]} of model B has no counterpart in model A (e.g. a QUANTIZE / DEQUANTIZE)")
                return
            ops = [a for a in mapped.values() if a is not None]
        self.add_layers(ops)
        self.ops_edit.clear()

    # ------------------------------------------------------------------ plan
    def plan(self) -> Plan | SurgicalPlan:
        """The plan of the chosen route (surgical edits name B's op of each row)."""
        if self.current_route() == SURGICAL:
            return self.surgical_plan()
        rows = [r for r in range(self.table.rowCount()) if self.row_op(r) is not None]
        if len(rows) < self.table.rowCount():
            self.message.emit("ops of model B without a counterpart in model A are left out of a regenerated model's plan")
        overrides = [override_for(self.row_op(r), *self.row_choice(r)) for r in rows]  # type: ignore[arg-type]
        return Plan(base=self.base.currentData(), overrides=tuple(overrides),
                    per_channel=self.per_channel.isChecked(), algorithm=self.algorithm.currentData())

    def surgical_plan(self) -> SurgicalPlan:
        edits = []
        for r in range(self.table.rowCount()):
            b = self.row_b_op(r)
            if b is None:
                self.message.emit(f"op {self.row_op(r)} of model A has no counterpart in model B; it is left out of the plan")
                continue
            edits.append(edit_for(b, self.row_choice(r)[0]))
        return SurgicalPlan(tuple(edits))

    def set_plan(self, plan: Plan | SurgicalPlan) -> None:
        if isinstance(plan, SurgicalPlan):
            self.set_route(SURGICAL)
            self.clear_layers()
            for e in plan.edits:  # every op of B, also those without a counterpart in A
                ops = list(e.ops[:1]) if e.kind == "equalize" else list(e.ops)  # a row per producer: its consumer is found
                self.add_b_layers(ops, edit_choice_of(e.kind, e.calibration))
            return
        self.set_route(QUANTIZER)
        self.set_base(plan.base, self.base_note.text())
        self.per_channel.setChecked(plan.per_channel)
        self.algorithm.setCurrentIndex(max(0, self.algorithm.findData(plan.algorithm)))
        self.clear_layers()
        for op, key, algo in op_rows(plan):
            self.add_layers([op], key, algo)

    # ------------------------------------------------------------------ run state
    def set_running(self, running: bool, text: str = "") -> None:
        self.run_row.set_running(running, text)

    def set_progress(self, fraction: float, text: str) -> None:
        self.run_row.set_progress(fraction, text)


def _fill(combo: QComboBox, items: list[tuple[str, str, str]], keep: str | None) -> None:
    """Replace the combo's items; keep the current key where the new list has it."""
    combo.blockSignals(True)
    combo.clear()
    for i, (key, label, tip) in enumerate(items):
        combo.addItem(label, key)
        if tip:
            combo.setItemData(i, tip, Qt.ItemDataRole.ToolTipRole)
    combo.setCurrentIndex(max(0, combo.findData(keep)))
    combo.blockSignals(False)
