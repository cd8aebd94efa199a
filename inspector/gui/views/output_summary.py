"""One line at the top of the window: how much the model outputs changed in the last comparison
(SQNR, cosine, top-1 agreement, accuracy when labelled, runtime used)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel

from inspector.core.compare_result import ComparisonResult
from inspector.core.layer_series import GOOD_DB, format_value
from inspector.core.task import TaskResult


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:.1f} %"


def summary_html(result: ComparisonResult, task: TaskResult | None) -> str:
    parts = []
    for o in result.outputs:
        m = o.metrics
        colour = "#2ca02c" if m.sqnr_db >= GOOD_DB else "#d62728"
        cos = "n/a" if m.cosine is None else f"{m.cosine:.5f}"
        parts.append(f"output <b>{o.name}</b>: SQNR <b style='color:{colour}'>{format_value(m.sqnr_db, 'sqnr_db')}</b>, cosine {cos}")
    if task is not None and task.kind == "classification":
        n = task.num_samples
        agree = round((task.top1_agreement or 0) * n)
        parts.append(f"top-1 agreement <b>{_pct(task.top1_agreement)}</b> ({agree}/{n}), top-5 {_pct(task.top5_agreement)}")
        if task.float_accuracy is not None:
            drop = task.accuracy_drop_pct or 0.0
            style = " style='color:#d62728'" if drop > 1.0 else ""
            parts.append(
                f"accuracy {_pct(task.float_accuracy)} → {_pct(task.quant_accuracy)} "
                f"(<b{style}>drop {drop:.1f} points</b>)"
            )
    parts.append(f"{result.samples} samples · runtime {result.runtime} ({result.kernels}) · {result.elapsed_s:.2f} s")
    return " · ".join(parts)


class OutputSummary(QFrame):
    """Hidden until a comparison result exists."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("outputSummary")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 3, 8, 3)
        lay.addWidget(self.label, 1)
        self.hide()

    def set_result(self, result: ComparisonResult | None, task: TaskResult | None = None) -> None:
        if result is None:
            self.label.setText("")
            self.hide()
            return
        self.label.setText(summary_html(result, task))
        self.label.setToolTip(f"{result.inputs}\nfloat: {result.float_path}\nquantized: {result.quant_path}")
        self.show()

    @property
    def text(self) -> str:
        return self.label.text()
