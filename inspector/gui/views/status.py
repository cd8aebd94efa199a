"""Error banner (names the file and the problem) and the status-bar task indicator."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QWidget,
)

from inspector.gui.views.run_row import set_bar_value
from inspector.gui.workers import Worker, guarded


class ErrorBanner(QFrame):
    """A dismissable message strip at the top of the window: never modal, never silent.

    A message longer than one line shows its first line, elided, with "More" to unfold it (the
    whole text is also the tooltip): several banners at once must not eat a 720-pixel window.
    `text` is always the whole message."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("errorBanner")
        self.setStyleSheet(
            "#errorBanner { background: #fde2e1; border: 1px solid #d62728; border-radius: 4px; }"
            "#errorBanner QLabel { color: #5c0b0b; }"
        )
        self._text = ""
        self.expanded = False
        self.label = QLabel()
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # elided, not widened
        self.more_button = QToolButton(autoRaise=True)
        self.more_button.setText("More")
        self.more_button.setToolTip("Show the whole message")
        self.more_button.clicked.connect(self.toggle)
        self.more_button.hide()
        self.close_button = close = QToolButton(autoRaise=True)
        close.setText("✕")
        close.setToolTip("Dismiss")
        close.clicked.connect(self.hide)
        self.row = lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 4, 4, 4)
        lay.addWidget(self.label, 1)
        lay.addWidget(self.more_button)
        lay.addWidget(close)
        self.hide()

    def show_message(self, text: str) -> None:
        if text == self._text and not self.isHidden():
            return  # shown already (each result re-states the random-samples notice): no relayout of the window
        self._text, self.expanded = text, False
        self.label.setToolTip(text)
        self.show()
        self._layout_text()

    @property
    def text(self) -> str:
        return self._text

    def action_widget(self) -> QWidget | None:
        """An extra button between the text and More (a notice's action), if any."""
        return None

    def toggle(self) -> None:
        self.expanded = not self.expanded
        self._layout_text()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._layout_text()

    def _layout_text(self) -> None:
        fm = self.label.fontMetrics()
        lay = self.row
        m = lay.contentsMargins()
        close_w = self.close_button.sizeHint().width()
        room = self.contentsRect().width() - m.left() - m.right() - close_w - lay.spacing() - 4
        action = self.action_widget()
        if action is not None and action.isVisible():
            room -= action.sizeHint().width() + lay.spacing()
        one_line = "\n" not in self._text and fm.horizontalAdvance(self._text) <= room
        self.more_button.setVisible(not one_line)
        width = max(40, room - (0 if one_line else self.more_button.sizeHint().width() + lay.spacing()))
        self.more_button.setText("Less" if self.expanded else "More")
        self.label.setWordWrap(self.expanded)
        if self.expanded or one_line:
            self.label.setText(self._text)
        else:
            first = self._text.splitlines()[0] if self._text else ""
            shown = fm.elidedText(first, Qt.TextElideMode.ElideRight, width)
            if shown == first:  # more lines follow
                shown = fm.elidedText(first + " …", Qt.TextElideMode.ElideRight, width)
            self.label.setText(shown)


NOTICE_COLOURS = {  # background, border, text
    "warning": ("#fff4d6", "#e0a800", "#4d3800"),
    "info": ("#e3effc", "#1f77b4", "#0b2f4f"),
}


class NoticeBanner(ErrorBanner):
    """A strip like the error banner for warnings and notes (a wrong pair, random inputs), with
    an optional action button ("Choose samples…")."""

    def __init__(self, kind: str, name: str, action: str = "", parent=None) -> None:
        super().__init__(parent)
        bg, border, fg = NOTICE_COLOURS[kind]
        self.setObjectName(name)
        self.setStyleSheet(f"#{name} {{ background: {bg}; border: 1px solid {border}; border-radius: 4px; }}"
                           f"#{name} QLabel {{ color: {fg}; }}")
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.action_button: QPushButton | None = None
        if action:
            self.action_button = QPushButton(action)
            self.row.insertWidget(1, self.action_button)

    def action_widget(self) -> QWidget | None:
        return self.action_button

    def button(self) -> QPushButton:
        """The action button (a notice made with an `action` text has one)."""
        if self.action_button is None:
            raise ValueError(f"{self.objectName()} has no action button")
        return self.action_button


class TaskIndicator(QWidget):
    """Progress bar and Cancel for the running background task(s), in the status bar."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.label = QLabel()
        self.bar = QProgressBar()
        self.bar.setMaximumWidth(160)
        self.bar.setTextVisible(False)
        self.cancel_button = QPushButton("Cancel")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.label)
        lay.addWidget(self.bar)
        lay.addWidget(self.cancel_button)
        self.cancel_button.clicked.connect(self.cancel_all)
        self.tasks: dict[Worker, str] = {}
        self.hide()

    def track(self, worker: Worker, text: str) -> None:
        if worker.is_done:
            return
        self.tasks[worker] = text
        worker.progress.connect(guarded(self, lambda f, t: self._progress(worker, f, t)))
        worker.done.connect(guarded(self, lambda: self._done(worker)))
        self._render(text, -1.0)

    def cancel_all(self) -> None:
        for w in list(self.tasks):
            w.cancel()

    def _progress(self, worker: Worker, fraction: float, text: str) -> None:
        if worker in self.tasks:
            self._render(text or self.tasks[worker], fraction)

    def _done(self, worker: Worker) -> None:
        self.tasks.pop(worker, None)
        if not self.tasks:
            self.hide()
        else:
            self._render(next(iter(self.tasks.values())), -1.0)

    def _render(self, text: str, fraction: float) -> None:
        self.label.setText(text + "…")
        if fraction < 0:
            self.bar.setRange(0, 0)  # busy
        else:
            self.bar.setRange(0, 1000)
            set_bar_value(self.bar, int(1000 * fraction))
        self.show()
