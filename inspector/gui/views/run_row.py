"""The one Run / Cancel / progress bar / status row of long work (the comparison's inputs panel
and the requantize plan editor): `set_running(running, text)`, `set_progress(fraction, text)`
with fraction in [0, 1] or negative for "busy"."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QPushButton, QVBoxLayout, QWidget

from inspector.gui.views.sizing import CappedLabel


def set_bar_value(bar: QProgressBar, value: int) -> None:
    """`bar.setValue(value)` painted with the next paint of the window, not at once: QProgressBar
    repaints itself synchronously on a visible change, which paints everything else pending in
    the window too (the plots), once per progress report (15 % of the GUI thread's time before
    the example's first figure)."""
    if bar.value() == value:
        return
    bar.setUpdatesEnabled(False)
    bar.setValue(value)
    bar.setUpdatesEnabled(True)  # schedules the bar's (asynchronous) update


class RunRow(QWidget):
    def __init__(self, run_text: str, *, bar_beside: bool, status: str = "", parent=None) -> None:
        super().__init__(parent)
        self.run_button = QPushButton(run_text)
        self.run_button.setDefault(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setValue(0)
        self.bar.setTextVisible(False)
        # a long error stays inside the panel (whole in the tooltip); the rows above never shrink
        self.status = CappedLabel(status, lines=2, fixed=True)
        self._buttons = buttons = QHBoxLayout()
        buttons.addWidget(self.run_button, 0 if bar_beside else 1)
        buttons.addWidget(self.cancel_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(buttons)
        if bar_beside:
            buttons.addWidget(self.bar, 1)
        else:
            lay.addWidget(self.bar)
        lay.addWidget(self.status)

    def add_button(self, button: QPushButton) -> None:
        """A button at the end of the Run row (pinned with it, never cut or scrolled away)."""
        self._buttons.addWidget(button)

    def set_running(self, running: bool, text: str = "") -> None:
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.bar.setRange(0, 0 if running else 1000)
        if not running:
            set_bar_value(self.bar, 0)  # not a synchronous repaint of the window (37-41 ms on a 1,500-op pair)
        if text:
            self.status.setText(text)

    def set_progress(self, fraction: float, text: str) -> None:
        if fraction < 0:
            self.bar.setRange(0, 0)
        else:
            self.bar.setRange(0, 1000)
            set_bar_value(self.bar, int(1000 * fraction))
        if text:
            self.status.setText(text)
