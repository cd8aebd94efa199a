"""The comparison that describes the open pair, as the features that read it see it (op math,
audit, report export, sessions): the state's current comparison, held by the comparison
controller; stale results (for other files than the open models) are ignored."""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from inspector.core.compare.result import ComparisonResult
from inspector.gui.protocols import Comparison
from inspector.gui.ui_services import UiServices


class ComparisonSource(QObject):
    changed = Signal()

    def __init__(self, compare: Comparison, ui: UiServices) -> None:
        super().__init__(ui.parent)
        self.ui = ui
        self.compare = compare
        self.state = compare.state
        compare.result_changed.connect(lambda _r: self.changed.emit())
        compare.failed.connect(lambda msg: QTimer.singleShot(0, lambda: self._show_failure(msg)))

    def _show_failure(self, msg: str) -> None:
        """A failed run (worker crash, custom op...) is never silent: banner, unless already shown."""
        if not self.ui.error_shown(msg):
            self.ui.show_error(f"Comparison failed: {msg}", owner="compare")

    def result(self) -> ComparisonResult | None:
        """The current ComparisonResult for models A and B, or None."""
        return self.state.current_comparison()

    def set_result(self, result: ComparisonResult | None) -> None:
        """Show a result restored from a session (through the comparison controller)."""
        self.compare.set_result(result)
