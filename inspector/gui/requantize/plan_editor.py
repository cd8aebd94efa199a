"""The requantize plan editor: the route, and the chosen layers each with an edit.

Route "edit model B" (surgical, the default): each layer gets one edit of B's op (keep float,
per-channel weights, MSE weight rounding, bias correction, a16w8, output re-calibration by
min/max, MSE or a percentile); produces a `SurgicalPlan` addressed by B's op index. Route
"regenerate from the float file" (litert-quantizer): base scheme, weight granularity, algorithm,
and per layer a treatment (keep float, a16w8, int8 per-channel / per-tensor, weight-only,
dynamic range) with a calibration algorithm; produces a `Plan` on A's ops.

The plan itself is a `core.requantize.draft.PlanDraft` (the window's is `AppState.requantize.draft`):
each row holds B's op (the layer identity of the GUI; also an op of B without a counterpart in A,
such as the input QUANTIZE) and A's match when there is one. This widget only shows it: the table
is rendered from the draft each time it changes (through `gui/relay.py`), and every edit of a
widget (route, options, a row's combo, Remove, typed ops) is a call to the draft, whose messages
the `message` signal carries. Runs nothing itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QStandardItemModel
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
    EDIT_BY_KEY,
    algorithms_for,
    short_layer_name,
)
from inspector.core.requantize.draft import (
    QUANTIZER,
    SURGICAL,
    Outcome,
    PlanDraft,
    parse_ops,
    route_choices,
)
from inspector.core.requantize.plan import Plan
from inspector.core.requantize.surgical_plan import SurgicalPlan
from inspector.core.tflite.model import Model
from inspector.gui.binding import Binder, quietly
from inspector.gui.relay import on_event, relay
from inspector.gui.views.run_row import RunRow
from inspector.gui.views.sizing import CappedLabel, table_height

LAYER_COLUMNS = ("#", "Layer", "SQNR", "Treatment", "Algorithm")
COL_TREATMENT, COL_ALGORITHM = 3, 4
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



class DraftOptions(QObject):
    """The draft's quantizer-route options by name (base, per_channel, algorithm), for a `Binder`."""

    options_changed = Signal()

    def __init__(self, draft: PlanDraft, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.draft = draft
        relay(draft.changed, self.options_changed, self, args=False)

    def option(self, name: str) -> object:
        return getattr(self.draft, name)

    def set_option(self, name: str, value: object) -> None:
        text = value if isinstance(value, str) else None
        if name == "base":
            self.draft.set_options(base=text)
        elif name == "per_channel":
            self.draft.set_options(per_channel=bool(value))
        elif name == "algorithm":
            self.draft.set_options(algorithm=text)
        else:
            raise KeyError(name)

class PlanEditor(QWidget):
    run_requested = Signal(object)  # Plan
    cancel_requested = Signal()
    add_selected_requested = Signal()
    message = Signal(str)  # a user-facing problem (bad op index...)

    def __init__(self, parent=None, draft: PlanDraft | None = None) -> None:
        super().__init__(parent)
        self.draft = draft if draft is not None else PlanDraft()
        self.errors: dict[int, float] = {}
        self._shown_route: str | None = None
        self._treat: list[QComboBox] = []  # the table's combos, one per row of the draft
        self._algo: list[QComboBox] = []
        self.route = QComboBox()
        for key, text in ROUTES:
            self.route.addItem(text, key)
        self.route.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.route.setMinimumContentsLength(12)
        self.route.setToolTip(ROUTE_TIPS[SURGICAL])
        self.route.currentIndexChanged.connect(lambda _i: self.draft.set_route(self.route.currentData()))
        self.base = QComboBox()
        for key, text in BASE_CHOICES:
            self.base.addItem(text, key)
        self.base.setToolTip("Scheme for every layer not listed below")
        self.base.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.base.setMinimumContentsLength(10)
        self.base_note = QLabel()
        self.per_channel = QCheckBox("per-channel weights")
        self.per_channel.setChecked(True)
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

        self.calibration = CappedLabel(lines=1, fixed=True)  # one whole line (all of it in its tooltip): never cut mid-line
        self.run_row = RunRow("Run requantize", bar_beside=True)
        self.run_button, self.cancel_button = self.run_row.run_button, self.run_row.cancel_button
        self.bar, self.status = self.run_row.bar, self.run_row.status
        self.run_button.clicked.connect(lambda: self.run_requested.emit(self.plan()))
        self.cancel_button.clicked.connect(self.cancel_requested.emit)

        self.column = lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(form)
        self.table.setMinimumHeight(table_height(self.table, 1))  # a long status never squeezes the rows away; it takes the room left
        lay.addWidget(self.table, 1)
        lay.addLayout(add_row)
        lay.addLayout(edit_row)
        lay.addWidget(self.calibration)
        lay.addWidget(self.run_row)
        on_event(self.draft.changed, self, self._render)
        self.binder = Binder(DraftOptions(self.draft, self), self)  # the quantizer route's options, both ways
        self.binder.combo(self.base, "base")
        self.binder.check(self.per_channel, "per_channel")
        self.binder.combo(self.algorithm, "algorithm")
        self._render()

    def take_run_row(self) -> RunRow:
        """The Run / Cancel / progress / status row, out of this editor's layout: the panel pins
        it below its scroll area, so Run is never scrolled or cut away in a small window."""
        self.column.removeWidget(self.run_row)
        return self.run_row

    # ------------------------------------------------------------------ route
    def current_route(self) -> str:
        return self.draft.route

    def set_route(self, route: str) -> None:
        self.draft.set_route(route)

    # ------------------------------------------------------------------ inputs
    def set_float_model(self, model: Model | None) -> None:
        self.draft.set_models(model, self.draft.quant_model)

    def set_op_maps(self, quant_ops: int, b_to_a: Callable[[int], int | None], a_to_b: Callable[[int], int | None]) -> None:
        """The layer identifier is B's op index: rows show it (A's beside it where it differs),
        the typed field takes it; the quantizer route's plan is on A's ops (it starts from A)."""
        self.draft.set_maps(quant_ops, b_to_a, a_to_b)

    def set_quant_model(self, model: Model | None) -> None:
        self.draft.set_models(self.draft.float_model, model)

    def set_base(self, base: str, note: str = "") -> None:
        self.base_note.setText(note)
        self.draft.set_options(base=base)

    def set_errors(self, errors: dict[int, float]) -> None:
        """SQNR (dB) of the current comparison per float op index, for the 'SQNR now' column."""
        self.errors = dict(errors)
        for r, row in enumerate(self.draft.rows):
            self.table.setItem(r, 2, self._sqnr_item(row.a_op))  # keyed by A's op; none without one

    def set_calibration_text(self, text: str) -> None:
        self.calibration.setText(text)

    # ------------------------------------------------------------------ rows (the draft's)
    def row_op(self, row: int) -> int | None:
        """The row's op of model A (what the quantizer route's plan names); None: B's op has none."""
        return self.draft.rows[row].a_op

    def row_b_op(self, row: int) -> int | None:
        """The row's op of model B (what a surgical edit names); None: A's op has no counterpart."""
        return self.draft.rows[row].b_op

    def ops(self) -> list[int]:
        """A's ops of the rows that have one."""
        return self.draft.a_ops()

    def b_ops(self) -> list[int]:
        """B's ops of the rows that have one (the surgical plan's ops, in row order)."""
        return self.draft.b_ops()

    def row_choice(self, row: int) -> tuple[str, str | None]:
        r = self.draft.rows[row]
        return r.choice, r.algorithm

    def add_layers(self, ops: list[int], choice: str | None = None, algorithm: str | None = None) -> list[int]:
        """Add (or re-treat) ops of A; returns the ops added or changed."""
        return list(self._say(self.draft.add(ops, "A", choice or self.new_choice.currentData(), algorithm)).ops)

    def add_b_layers(self, b_ops: list[int], choice: str | None = None) -> list[int]:
        """Add (or re-edit) B's ops, also those without a counterpart in A on the surgical route
        (the input QUANTIZE...); returns the ops added or changed."""
        return list(self._say(self.draft.add(b_ops, "B", choice or self.new_choice.currentData())).ops)

    def set_row_choice(self, row: int, key: str, algorithm: str | None = None) -> None:
        self._say(self.draft.set_choice([row], key, algorithm))

    def remove_selected(self) -> None:
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        self.table.clearSelection()
        self.draft.remove(rows)

    def clear_layers(self) -> None:
        self.draft.clear()

    def _apply_to_selected(self) -> None:
        """The chosen edit for the selected rows (each keeps its calibration algorithm)."""
        key = self.new_choice.currentData()
        for r in sorted({i.row() for i in self.table.selectionModel().selectedRows()}):
            self._say(self.draft.set_choice([r], key, self.draft.rows[r].algorithm))

    def _add_typed(self) -> None:
        try:
            ops = parse_ops(self.ops_edit.text())
        except ValueError as e:
            self.message.emit(str(e))
            return
        if self.draft.float_model is None:
            self.message.emit("Open the float model (A) first.")
            return
        # typed numbers are B's op indices (as in the plot and tables); A's when no B is open
        out = self._say(self.draft.add(ops, "B" if self.draft.quant_ops else "A", self.new_choice.currentData()))
        if len(out.ops) == len(ops):
            self.ops_edit.clear()

    def _say(self, out: Outcome) -> Outcome:
        for m in out.messages:
            self.message.emit(m)
        return out

    # ------------------------------------------------------------------ plan
    def plan(self) -> Plan | SurgicalPlan:
        """The plan of the chosen route (surgical edits name B's op of each row)."""
        plan, msgs = self.draft.to_plan()
        for m in msgs:
            self.message.emit(m)
        return plan

    def surgical_plan(self) -> SurgicalPlan:
        plan, msgs = self.draft.to_plan(SURGICAL)
        for m in msgs:
            self.message.emit(m)
        assert isinstance(plan, SurgicalPlan), "the surgical route's draft makes a SurgicalPlan"
        return plan

    def set_plan(self, plan: Plan | SurgicalPlan) -> None:
        for m in self.draft.from_plan(plan):
            self.message.emit(m)

    # ------------------------------------------------------------------ rendering the draft
    def _render(self) -> None:
        """Show the draft: route and options, and a table row per draft row (combos reused)."""
        d = self.draft
        if d.route != self._shown_route:
            self._show_route(d.route)
        rows = d.rows
        while self.table.rowCount() > len(rows):
            self.table.removeRow(self.table.rowCount() - 1)
            self._treat.pop()
            self._algo.pop()
        while self.table.rowCount() < len(rows):
            self._new_row()
        for r in range(len(rows)):
            self._show_row(r)

    def _show_route(self, route: str) -> None:
        quantizer = route == QUANTIZER
        self._shown_route = route
        with quietly(self.route):
            self.route.setCurrentIndex(max(0, self.route.findData(route)))
        self.route.setToolTip(ROUTE_TIPS[route])
        for row in (1, 2):
            self.form.setRowVisible(row, quantizer)
        self.choice_label.setText("Treatment" if quantizer else "Edit")
        self.table.setColumnHidden(COL_ALGORITHM, not quantizer)
        self.table.setColumnWidth(COL_TREATMENT, 118 if quantizer else 164)
        self._header_item(COL_TREATMENT).setText("Treatment" if quantizer else "Edit")
        _fill(self.new_choice, route_choices(route), self.new_choice.currentData())

    def _new_row(self) -> None:
        r = self.table.rowCount()
        self.table.insertRow(r)
        num, name = QTableWidgetItem(), QTableWidgetItem()
        num.setTextAlignment(int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter))
        for it in (num, name):
            it.setFlags(Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled)
        self.table.setItem(r, 0, num)
        self.table.setItem(r, 1, name)
        treat, algo = QComboBox(), QComboBox()
        treat.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        treat.currentIndexChanged.connect(lambda _i, t=treat: self._treat_edited(t))
        algo.currentIndexChanged.connect(lambda _i, a=algo: self._algo_edited(a))
        self.table.setCellWidget(r, COL_TREATMENT, treat)
        self.table.setCellWidget(r, COL_ALGORITHM, algo)
        self._treat.append(treat)
        self._algo.append(algo)

    def _treat_edited(self, combo: QComboBox) -> None:
        r = self._treat.index(combo)
        self._say(self.draft.set_choice([r], combo.currentData(), self.draft.rows[r].algorithm))

    def _algo_edited(self, combo: QComboBox) -> None:
        r = self._algo.index(combo)
        self.draft.set_choice([r], self.draft.rows[r].choice, combo.currentData() or None)

    def _show_row(self, r: int) -> None:
        d, row = self.draft, self.draft.rows[r]
        self._label_row(r)
        self.table.setItem(r, 2, self._sqnr_item(row.a_op))
        treat, algo = self._treat[r], self._algo[r]
        with quietly(treat):
            if treat.property("route") != d.route:
                _fill(treat, route_choices(d.route), row.choice)
                treat.setProperty("route", d.route)
            treat.setCurrentIndex(max(0, treat.findData(row.choice)))
            kinds = d.applicable_kinds(r)  # the edits that do not apply to the row's op are greyed out
            model = treat.model()
            assert isinstance(model, QStandardItemModel), "a QComboBox's own model"
            for i in range(treat.count()):
                c = EDIT_BY_KEY.get(treat.itemData(i))
                if (item := model.item(i)) is not None:
                    item.setEnabled(kinds is None or c is None or c.kind in kinds)
        op_type = d.op_type(r)
        with quietly(algo):
            if algo.property("op_type") != op_type:
                algo.clear()
                algo.addItem("as base", "")
                for a in algorithms_for(op_type):
                    algo.addItem(ALGORITHM_LABELS[a], a)
                algo.setToolTip(f"Calibration algorithms litert-quantizer offers for {op_type}")
                algo.setProperty("op_type", op_type)
            i = algo.findData(row.algorithm or "")
            algo.setCurrentIndex(i if i >= 0 else 0)
            algo.setEnabled(d.takes_algorithm(r))

    def _label_row(self, r: int) -> None:
        """'#' is B's op; the name is the one of `core.tflite.layer_names` (B's model where the
        row's op is B's alone), with A's op beside it where the numbers differ."""
        d, row = self.draft, self.draft.rows[r]
        op, b = row.a_op, row.b_op
        num, name = self._item(r, 0), self._item(r, 1)
        num.setText("–" if b is None else str(b))
        if op is None:  # an op of B alone (QUANTIZE at the input...)
            qm = d.quant_model
            sg = qm.main if qm is not None else None
            short = short_layer_name(qm, b) if qm is not None and b is not None else f"op {b}"
            name.setText(f"{short} ({d.op_type(r)}) · not in A")
            outs = [sg.tensors[o].name for o in sg.ops[b].outputs if o >= 0] if sg is not None and b is not None and b < len(sg.ops) else []
            name.setToolTip(f"op {b} of model B: {d.op_type(r)}; no counterpart in model A "
                            "(surgical edits only)\n" + "\n".join(outs))
            return
        fm = d.float_model
        assert fm is not None, "a row with an op of A has model A open"
        sg = fm.main
        beside = "" if b == op else f" · A: op {op}"
        name.setText(f"{short_layer_name(fm, op)} ({sg.ops[op].type}){beside}")
        outs = [sg.tensors[o].name for o in sg.ops[op].outputs if o >= 0]
        where = "no counterpart in model B" if b is None else f"op {b} of model B"
        name.setToolTip(f"{where}; op {op} of model A: {sg.ops[op].type}\n" + "\n".join(outs))

    def _item(self, r: int, c: int) -> QTableWidgetItem:
        """The table's item at (r, c): every cell of a row has one from `_new_row`."""
        item = self.table.item(r, c)
        assert item is not None, f"row {r} has no item in column {c}"
        return item

    def _header_item(self, c: int) -> QTableWidgetItem:
        item = self.table.horizontalHeaderItem(c)
        assert item is not None, f"column {c} has no header item"
        return item

    def _sqnr_item(self, op: int | None) -> QTableWidgetItem:
        v = None if op is None else self.errors.get(op)
        text = "" if v is None else ("∞" if math.isinf(v) else f"{v:.1f}")
        it = QTableWidgetItem(text)
        it.setTextAlignment(int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter))
        it.setFlags(Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled)
        it.setToolTip("SQNR (dB) of this layer's output in the current comparison")
        return it

    # ------------------------------------------------------------------ run state
    def set_running(self, running: bool, text: str = "") -> None:
        self.run_row.set_running(running, text)

    def set_progress(self, fraction: float, text: str) -> None:
        self.run_row.set_progress(fraction, text)


def _fill(combo: QComboBox, items: list[tuple[str, str, str]], keep: str | None) -> None:
    """Replace the combo's items; keep the current key where the new list has it (no signals)."""
    with quietly(combo):
        combo.clear()
        for i, (key, label, tip) in enumerate(items):
            combo.addItem(label, key)
            if tip:
                combo.setItemData(i, tip, Qt.ItemDataRole.ToolTipRole)
        combo.setCurrentIndex(max(0, combo.findData(keep)))
