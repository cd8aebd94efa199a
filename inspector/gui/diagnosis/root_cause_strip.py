"""The root-cause strip above the output summary: the measured root causes in words
(`compare.diagnosis_text`, the CLI's and the report's lines) and an "Apply fix" button for the
first one's fix. Hidden until a comparison with measured blame exists."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton

from inspector.core.compare.diagnosis_text import root_cause_lines, root_cause_text
from inspector.core.compare.diagnosis_types import RootCause
from inspector.core.compare.result import ComparisonResult


class RootCauseStrip(QFrame):
    apply_requested = Signal(object)  # the RootCause whose fix to apply

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("rootCauseStrip")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.button = QPushButton("Apply fix")
        self.button.setToolTip("Apply the root cause's fix to model B (queued in the Requantize tab) and compare again")
        self.root: RootCause | None = None
        self.button.clicked.connect(self._apply)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 2, 8, 2)
        lay.addWidget(self.label, 1)
        lay.addWidget(self.button)
        self.set_result(None)

    def _apply(self) -> None:
        if self.root is not None:
            self.apply_requested.emit(self.root)

    def set_result(self, result: ComparisonResult | None) -> None:
        lines = [] if result is None else root_cause_lines(result)
        self.root = result.root_causes[0] if result is not None and result.root_causes else None
        self.setVisible(bool(lines))
        self.button.setVisible(self.root is not None and self.root.fix is not None)
        self.button.setEnabled(self.root is not None and self.root.fix is not None and (self.root.fix_gain_db or 0) > 0)
        if not lines:
            self.label.setText("")
            return
        if self.root is None:
            self.label.setText(html.escape(lines[0]))
        else:
            count = len(result.root_causes) if result is not None else 0
            more = f" (+{count - 1} more)" if count > 1 else ""
            self.label.setText(f"<b style='color:#d62728'>Root cause</b>: {html.escape(root_cause_text(self.root))}{more}")
        note = [result.blame_note] if result is not None else []
        self.label.setToolTip(html.escape("\n".join(lines + note)).replace("\n", "<br>"))

    @property
    def text(self) -> str:
        parent = self.parentWidget()
        return self.label.text() if parent is None or self.isVisibleTo(parent) else ""
