"""The root-cause strip above the output summary: the measured root causes in words
(`compare.diagnosis_text`, the CLI's and the report's lines) and an "Apply fix" button for the
first one's fix. Hidden until a comparison with measured blame exists. After a fix that lowered
the model output SQNR, it says so and offers Revert (`offer_revert`)."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

from inspector.core.compare.diagnosis_text import root_cause_lines, root_cause_text
from inspector.core.compare.diagnosis_types import RootCause
from inspector.core.compare.result import ComparisonResult
from inspector.core.state.app_state import same_file


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
        # a fix that lowered the model output: said here, with the way back (issue 33 §3)
        self.worse = QLabel()
        self.worse.setWordWrap(True)
        self.worse.setStyleSheet("color: #d62728")
        self.revert = QPushButton("Revert")
        self.revert.setToolTip("Make the version the fix was made from model B again (the fixed version stays in the Versions list)")
        self.revert.clicked.connect(self._revert)
        self.revert_for: str | None = None  # the fixed version's file while the offer stands
        self._on_revert: Callable[[], None] | None = None
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 2, 8, 2)
        text = QVBoxLayout()
        text.addWidget(self.label)
        text.addWidget(self.worse)
        lay.addLayout(text, 1)
        lay.addWidget(self.button)
        lay.addWidget(self.revert)
        # as tall with its button as without: a new result does not move the window's layout
        m = lay.contentsMargins()
        self.setMinimumHeight(self.button.sizeHint().height() + m.top() + m.bottom() + 2 * self.frameWidth())
        self.clear_revert()
        self.set_result(None)

    def offer_revert(self, text: str, fixed_path: str, on_revert: Callable[[], None]) -> None:
        """Say that the fix applied to `fixed_path` lowered the model output, and offer to revert."""
        self.revert_for, self._on_revert = fixed_path, on_revert
        self.worse.setText(text)
        self.worse.setVisible(True)
        self.revert.setVisible(True)
        self.setVisible(True)

    def clear_revert(self) -> None:
        self.revert_for = self._on_revert = None
        self.worse.setText("")
        self.worse.setVisible(False)
        self.revert.setVisible(False)

    def _revert(self) -> None:
        call = self._on_revert
        self.clear_revert()
        if call is not None:
            call()

    def _apply(self) -> None:
        if self.root is not None:
            self.apply_requested.emit(self.root)

    def set_result(self, result: ComparisonResult | None) -> None:
        lines = [] if result is None else root_cause_lines(result)
        self.root = result.root_causes[0] if result is not None and result.root_causes else None
        if self.revert_for is not None and (result is None or not same_file(result.quant_path, self.revert_for)):
            self.clear_revert()  # another model B: the offer was for the fixed version
        wanted = bool(lines) or self.revert_for is not None
        # A result dropped while the strip is shown (model B replaced: Apply fix, another version):
        # it keeps its room, empty, until the next result says whether there is a root cause, so the
        # window does not jump twice (laying out the 1,500-row lists each time); a second drop frees it.
        policy = self.sizePolicy()
        policy.setRetainSizeWhenHidden(result is None and not wanted and not self.isHidden())
        self.setSizePolicy(policy)
        self.setVisible(wanted)
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

    def release_room(self) -> None:
        """No result will come to fill the room kept (a model closed): give it back to the window."""
        policy = self.sizePolicy()
        if self.isHidden() and policy.retainSizeWhenHidden():
            policy.setRetainSizeWhenHidden(False)
            self.setSizePolicy(policy)

    @property
    def text(self) -> str:
        parent = self.parentWidget()
        return self.label.text() if parent is None or self.isVisibleTo(parent) else ""
