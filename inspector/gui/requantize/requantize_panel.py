"""The Requantize tab: plan editor | versions, deltas, notes, suggest | before/after and trade-off plots.

Left: the plan (`PlanEditor`). Middle: the versions of model B with the deltas between two of
them (`VersionsView`), the quantizer's notes of the shown version, and Suggest (target output
SQNR and/or a layer budget). Right: the layer error plot of the shown comparison with the
reference version as its baseline series, and the trade-off plot. Views only: the wiring and the
work live in `gui.requantize_features` / `gui.requantize_controller`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from inspector.core.requantize.draft import PlanDraft
from inspector.gui.binding import quietly
from inspector.gui.requantize.plan_editor import PlanEditor
from inspector.gui.requantize.tradeoff_plot import TradeoffPlot
from inspector.gui.requantize.versions_view import VersionsView
from inspector.gui.views.layer_error_plot import LayerErrorPlot


class SuggestBox(QWidget):
    # target dB | None, max steps | None, "surgical" | quantizer treatment, objective pattern | None (model output)
    suggest_requested = Signal(object, object, str, object)
    apply_requested = Signal()
    edit_requested = Signal()  # copy the suggested plan into the plan editor

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.use_target = QCheckBox("SQNR at least")
        self.use_target.setChecked(True)
        self.target = QDoubleSpinBox(minimum=-50.0, maximum=200.0, value=40.0, decimals=1, suffix=" dB")
        self.use_budget = QCheckBox("at most")
        self.use_budget.setChecked(True)
        self.budget = QSpinBox(minimum=0, maximum=64, value=3, suffix=" edits")
        self.treatment = QComboBox()
        self.treatment.addItem("surgical edits of model B", "surgical")
        self.treatment.addItem("quantizer route: keep float", "keep_float")
        self.treatment.addItem("quantizer route: a16w8", "a16w8")
        self.treatment.setToolTip("Surgical: candidates by isolated error, each tried with keep float, re-calibration, bias "
                                  "correction, per-channel weights and a16w8 on model B, every step verified by comparing "
                                  "again, with its size and latency. Quantizer route: regenerate from the float file.")
        self.objective = QComboBox()
        self.objective.addItem("model output", None)
        self.objective.setToolTip("Where the target SQNR is measured (surgical route)")
        self.treatment.currentIndexChanged.connect(lambda _i: self.objective.setEnabled(self.treatment.currentData() == "surgical"))
        self.run_button = QPushButton("Suggest")
        self.run_button.setToolTip("Greedy search, each step verified by editing and comparing (runs in a worker)")
        self.run_button.clicked.connect(self._request)
        self.apply_button = QPushButton("Apply suggestion")
        self.apply_button.setEnabled(False)
        self.apply_button.setToolTip("The suggested model becomes the next version and model B")
        self.apply_button.clicked.connect(self.apply_requested.emit)
        self.edit_button = QPushButton("Edit plan")
        self.edit_button.setEnabled(False)
        self.edit_button.setToolTip("Copy the suggested layers into the plan editor")
        self.edit_button.clicked.connect(self.edit_requested.emit)
        self.result = QLabel("Suggest finds a few layer edits so the model output reaches a target.")
        self.result.setWordWrap(True)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        grid = QGridLayout()
        grid.addWidget(self.use_target, 0, 0)
        grid.addWidget(self.target, 0, 1)
        grid.addWidget(QLabel("at"), 0, 2)
        grid.addWidget(self.objective, 0, 3)
        grid.addWidget(self.use_budget, 1, 0)
        grid.addWidget(self.budget, 1, 1)
        grid.addWidget(QLabel("using"), 2, 0)
        grid.addWidget(self.treatment, 2, 1, 1, 3)
        grid.setColumnStretch(3, 1)
        buttons = QHBoxLayout()
        for b in (self.run_button, self.apply_button, self.edit_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        lay = QVBoxLayout(self)
        lay.addLayout(grid)
        lay.addLayout(buttons)
        self.result_scroll = QScrollArea()  # a long result scrolls instead of being cut off
        self.result_scroll.setWidgetResizable(True)
        self.result_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.result_scroll.setWidget(self.result)
        self.result.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        lay.addWidget(self.result_scroll, 1)

    def _request(self) -> None:
        target = self.target.value() if self.use_target.isChecked() else None
        budget = self.budget.value() if self.use_budget.isChecked() else None
        objective = self.objective.currentData() if self.treatment.currentData() == "surgical" else None
        self.suggest_requested.emit(target, budget, self.treatment.currentData(), objective)

    def set_logits(self, pattern: str | None, label: str = "") -> None:
        """Offer (and choose) the logits as the objective when B's output is a fixed-parameter
        SOFTMAX / LOGISTIC: edits keep B's tensor parameters, so that output's SQNR is capped."""
        with quietly(self.objective):
            while self.objective.count() > 1:
                self.objective.removeItem(1)
            if pattern is not None:
                self.objective.addItem(f"logits ({label})", pattern)
                self.objective.setItemData(1, "The input of the final softmax: its output has fixed quantization "
                                              "parameters (1/256) that no edit of B changes", Qt.ItemDataRole.ToolTipRole)
                self.objective.setCurrentIndex(1)

    def set_result(self, text: str, can_apply: bool) -> None:
        self.result.setText(text)
        self.apply_button.setEnabled(can_apply)
        self.edit_button.setEnabled(can_apply)


class RequantizePanel(QWidget):
    save_model_requested = Signal()
    save_recipe_requested = Signal()

    def __init__(self, parent=None, draft: PlanDraft | None = None) -> None:
        super().__init__(parent)
        self.editor = PlanEditor(draft=draft)  # shows (and edits) the window's plan draft
        self.versions = VersionsView()
        self.notes = QPlainTextEdit(readOnly=True)
        self.notes.setPlaceholderText("What the edit or the quantizer changed, fixed or could not do for the shown version appears here.")
        self.suggest = SuggestBox()
        self.plot = LayerErrorPlot()
        self.plot.title.hide()  # the versions summary says what is compared; the plot gets the room
        self.tradeoff = TradeoffPlot()

        self.save_model_button = QPushButton("Save model as…")
        self.save_model_button.setToolTip("Write the shown version of model B to a new file (never over an input)")
        self.save_model_button.clicked.connect(self.save_model_requested.emit)
        self.save_recipe_button = QPushButton("Save plan / recipe…")
        self.save_recipe_button.setToolTip("Write the surgical plan JSON (edited versions) or the litert-quantizer recipe "
                                           "(regenerated versions) that reproduces the shown version")
        self.save_recipe_button.clicked.connect(self.save_recipe_requested.emit)
        self.middle_tabs = QTabWidget()
        self.middle_tabs.setDocumentMode(True)
        self.middle_tabs.addTab(self.versions, "Versions && deltas")
        self.middle_tabs.addTab(self.notes, "Notes")
        self.middle_tabs.addTab(self.suggest, "Suggest")
        middle = QWidget()
        mlay = QVBoxLayout(middle)
        mlay.setContentsMargins(0, 0, 0, 0)
        mlay.addWidget(self.middle_tabs, 1)

        self.plot_tabs = QTabWidget()
        self.plot_tabs.setDocumentMode(True)
        self.plot_tabs.addTab(self.plot, "Before / after")
        self.plot_tabs.addTab(self.tradeoff, "Trade-off")

        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.editor)
        split.addWidget(middle)
        split.addWidget(self.plot_tabs)
        split.setStretchFactor(1, 1)
        split.setStretchFactor(2, 1)
        split.setSizes([420, 450, 530])
        self.splitter = split
        scroll = QScrollArea()  # a narrow window scrolls the panel instead of growing its minimum width
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(split)
        run_row = self.editor.take_run_row()  # pinned below the scroll area: Run is never cut away
        run_row.setContentsMargins(4, 0, 4, 4)
        for b in (self.save_model_button, self.save_recipe_button):  # pinned with Run: never cut to a few pixels
            run_row.add_button(b)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(scroll, 1)
        lay.addWidget(run_row)

    def wanted_height(self) -> int:
        """The height the panel's content would like (the window's split gives it while the model
        panes keep 3 op rows): its minimum (2 versions shown) and room for 2 more versions (the
        version table takes 3/5 of what is added)."""
        rows = self.versions.table.verticalHeader().defaultSectionSize()
        return self.splitter.minimumSizeHint().height() + 4 * rows

    def set_notes(self, title: str, notes: list[str]) -> None:
        body = "\n".join(f"• {n}" for n in notes) if notes else "(nothing was reported for this version)"
        self.notes.setPlainText(f"{title}\n\n{body}" if title else body)
        label = f"Notes ({len(notes)})" if notes else "Notes"
        self.middle_tabs.setTabText(self.middle_tabs.indexOf(self.notes), label)
