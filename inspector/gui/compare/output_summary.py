"""A strip at the top of the window: how much the model outputs changed in the last comparison
(SQNR, cosine, top-1 agreement and accuracy when labelled for a classifier, MAE/RMSE/max
error for a regression output, constant outputs flagged, runtime used).

Always shown, with a fixed height of two text lines (a hint before the first run), so the
layout never jumps under the mouse when a result arrives or goes; the full text, should it
need more room, is in the tooltip."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel

from inspector.core.compare.inside import part_verdict
from inspector.core.compare.result import ComparisonResult
from inspector.core.compare.task import TaskResult
from inspector.core.text.numbers import percent
from inspector.core.viewdata.layer_series import GOOD_DB, format_value


def summary_html(result: ComparisonResult, task: TaskResult | None) -> str:
    parts = []
    if result.pair_check is not None and not result.pair_check.related:
        parts.append("<b style='color:#d62728'>⚠ not twins: these results compare two different models</b>")
    for o in result.outputs:
        m = o.metrics
        colour = "#2ca02c" if m.sqnr_db >= GOOD_DB else "#d62728"
        cos = "n/a" if m.cosine is None else f"{m.cosine:.5f}"
        parts.append(f"output <b>{o.name}</b>: SQNR <b style='color:{colour}'>{format_value(m.sqnr_db, 'sqnr_db')}</b>, cosine {cos}")
        inside = part_verdict(f"output '{o.name}'", m.sqnr_db, o.channels, o.slices)
        if inside is not None:  # a part of the output far below the whole (issue 25)
            parts.append(f"<b style='color:#d62728'>⚠ {html.escape(inside)}</b>")
    if task is not None and task.kind == "classification":
        n = task.agreement_samples
        if task.top1_agreement is None:
            parts.append(f"<b style='color:#d62728'>top-1 agreement not reported</b>: {task.agreement_note}")
        else:
            tied = f", {task.tied_samples} tied in A left out" if task.tied_samples else ""
            tied += f", {task.lost_decisions} tied in B counted as lost" if task.lost_decisions else ""
            parts.append(f"top-1 agreement <b>{percent(task.top1_agreement)}</b> ({task.agreeing_samples}/{n}{tied}), top-5 {percent(task.top5_agreement)}")
        if task.float_accuracy is not None:
            drop = task.accuracy_drop_pct or 0.0
            style = " style='color:#d62728'" if drop > 1.0 else ""
            parts.append(
                f"accuracy {percent(task.float_accuracy)} → {percent(task.quant_accuracy)} "
                f"(<b{style}>drop {drop:.1f} points</b>)"
            )
    elif task is not None and task.regression is not None:
        parts.append(f"regression: {task.regression.summary()}")
    if task is not None:
        const = [who for who, c in (("float", task.float_constant), ("quantized", task.quant_constant)) if c]
        if const:
            parts.append(f"<b style='color:#d62728'>⚠ {' and '.join(const)} output constant over all samples</b>")
    random = " <b>random</b>" if result.samples_are_random else ""
    parts.append(f"{result.samples}{random} samples · runtime {result.runtime} ({result.kernels}) · {result.elapsed_s:.2f} s")
    if result.state:  # a stateful model (LSTM state, resource variables): what was done with its state
        parts.append(html.escape(result.state))
    return " · ".join(parts)


EMPTY_TEXT = ("No comparison yet: open models A and B, then Run (Ctrl+R) to see how much the outputs change; "
              "or File › Open the example pair.")
LINES = 2  # text lines reserved


class OutputSummary(QFrame):
    """Shown from the start at a fixed height; a hint until a comparison result exists."""

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
        self.label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.setFixedHeight(LINES * self.fontMetrics().lineSpacing() + 10)
        self.result: ComparisonResult | None = None
        self.set_result(None)

    def set_result(self, result: ComparisonResult | None, task: TaskResult | None = None) -> None:
        self.result = result
        if result is None:
            self.label.setText(f"<i>{EMPTY_TEXT}</i>")
            self.label.setToolTip("")
            return
        html = summary_html(result, task)
        self.label.setText(html)
        self.label.setToolTip(f"{html}<br><br>{result.inputs}<br>float: {result.float_path}<br>quantized: {result.quant_path}")

    @property
    def text(self) -> str:
        return self.label.text() if self.result is not None else ""
