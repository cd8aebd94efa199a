"""Sizes that keep a small screen usable: `table_height` (a table showing n rows) and
`CappedLabel`, a word-wrapped label of at most a few lines: a long status or error is cut with
"…" (rich text that does not fit: as plain text) and shown whole in its tooltip, so it never
pushes the tables above it out of room nor widens the window; `ElidedLabel`, one line cut in the
middle (a file name). Both fit their text to their width on one base; `text()` is always the whole
text."""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt, Signal
from PySide6.QtGui import QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QLabel,
    QLineEdit,
    QSizePolicy,
    QSplitter,
    QStyle,
    QStyleOptionFrame,
    QTableView,
)


def table_height(t: QTableView, rows: int) -> int:
    """Height of a table view showing `rows` rows with its header, frame and horizontal scroll bar."""
    head = t.horizontalHeader()
    row = t.verticalHeader().defaultSectionSize()
    return head.sizeHint().height() + rows * row + 2 * t.frameWidth() + t.horizontalScrollBar().sizeHint().height()


class _FittedLabel(QLabel):
    """A label whose drawn text is fitted to its width (`_fit`, again on a width change) while
    `text()` stays the whole text; `shown_text()` is what is drawn."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._full = ""

    def text(self) -> str:
        return self._full

    def shown_text(self) -> str:
        """What is drawn (the whole text, or a cut with '…')."""
        return super().text()

    def setText(self, text: str) -> None:
        self._full = text or ""
        self._fit()

    def _fit(self) -> None:
        raise NotImplementedError

    def resizeEvent(self, e) -> None:  # noqa: N802
        super().resizeEvent(e)
        if e.oldSize().width() != e.size().width():
            self._fit()


class CappedLabel(_FittedLabel):
    def __init__(self, text: str = "", lines: int = 3, parent=None, fixed: bool = False) -> None:
        super().__init__(parent)
        self.lines = lines
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Maximum)
        self.setMaximumHeight(self.fontMetrics().lineSpacing() * lines + 2 * self.margin() + 4)
        if fixed:  # the same height empty or full: the widgets above never move
            self.setMinimumHeight(self.maximumHeight())
            self.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.setText(text)

    def setText(self, text: str) -> None:
        self.setToolTip(text or "")
        super().setText(text)

    def clear(self) -> None:
        """QLabel.clear would leave `text()` (the whole text) saying what was shown."""
        self.setText("")

    def _height(self, s: str, width: int) -> int:
        return self.fontMetrics().boundingRect(QRect(0, 0, width, 1 << 20), int(Qt.TextFlag.TextWordWrap), s).height()

    def _document(self, t: str, width: int) -> QTextDocument:
        doc = QTextDocument()
        doc.setDefaultFont(self.font())
        doc.setDocumentMargin(0)
        doc.setHtml(t)
        doc.setTextWidth(width)
        return doc

    def _rich_height(self, t: str, width: int) -> int:
        return int(self._document(t, width).size().height())

    def _plain(self, t: str) -> str:
        return self._document(t, 1 << 20).toPlainText()

    def _fit(self) -> None:
        t = self._full
        width = max(self.contentsRect().width(), 60)
        limit = self.fontMetrics().lineSpacing() * self.lines
        if "<" in t and ">" in t:
            if self._rich_height(t, width) <= limit:
                QLabel.setText(self, t)
                return
            t = self._plain(t)  # too tall: its plain text, cut with "…" (a line cut in half read as a glitch)
        if self._height(t, width) <= limit:
            QLabel.setText(self, t)
            return
        lo, hi = 0, len(t)
        while lo < hi:  # the longest start that fits with "…"
            mid = (lo + hi + 1) // 2
            if self._height(t[:mid].rstrip() + "…", width) <= limit:
                lo = mid
            else:
                hi = mid - 1
        QLabel.setText(self, t[:lo].rstrip() + "…")


PREFERRED_SIZE = (1400, 900)
FRAME_ALLOWANCE = (16, 48)  # window borders and title bar, outside the size a window is resized to


SCREEN_SHARE = 0.9  # of a larger screen's available area the first window takes


def window_size(available_w: int, available_h: int, preferred: tuple[int, int] = PREFERRED_SIZE) -> tuple[int, int]:
    """First size of the main window: SCREEN_SHARE of the screen's available area, at least the
    preferred size, and never more than the area (a 1280×800 laptop got a 1400×900 window, partly
    off screen; a 1920×1080 screen got 1400×900, the Requantize tab clipped in it)."""
    w = min(max(preferred[0], round(available_w * SCREEN_SHARE)), available_w - FRAME_ALLOWANCE[0])
    h = min(max(preferred[1], round(available_h * SCREEN_SHARE)), available_h - FRAME_ALLOWANCE[1])
    return max(w, 320), max(h, 240)


def fit_to_screen(window) -> None:
    """Resize `window` to `window_size` of its screen's available geometry and centre it there."""
    screen = window.screen()
    if screen is None:
        window.resize(*PREFERRED_SIZE)
        return
    area = screen.availableGeometry()
    w, h = window_size(area.width(), area.height())
    window.resize(w, h)
    window.move(area.x() + (area.width() - w) // 2, area.y() + max(0, (area.height() - h - FRAME_ALLOWANCE[1]) // 2))


PANES_SHARE = 4 / 9  # the model panes' least share of the main splitter
TABS_ROOM = 460  # px the tabs keep before the panes take more than that share


def pane_share(total: int, wanted: int) -> int:
    """Height of the model panes in a main splitter `total` high: `wanted` (the panes' height for
    12 op rows) while the tabs keep TABS_ROOM, never less than PANES_SHARE of it. At 1280×800
    that is 4/9 as before; at 1920×1080 the op lists get their rows (they showed 8, the tabs
    took the rest); taller, the 4/9 share grows past `wanted`."""
    return max(round(total * PANES_SHARE), min(wanted, total - TABS_ROOM))


class ResizedSplitter(QSplitter):
    """A splitter that says when its size changed, after it laid out its children."""

    resized = Signal()

    def resizeEvent(self, e) -> None:  # noqa: N802
        super().resizeEvent(e)
        self.resized.emit()


def fit_inside_screen(window) -> None:
    """Shrink and move `window` (frame included) into its screen's available geometry: a
    geometry restored from a larger screen, or saved when the window's minimum was larger."""
    screen = window.screen()
    if screen is None:
        return
    area = screen.availableGeometry()
    frame, inner = window.frameGeometry(), window.geometry()
    dw, dh = frame.width() - inner.width(), frame.height() - inner.height()
    w, h = min(inner.width(), area.width() - dw), min(inner.height(), area.height() - dh)
    if (w, h) != (inner.width(), inner.height()):
        window.resize(max(w, 1), max(h, 1))
    frame = window.frameGeometry()
    x = min(max(frame.x(), area.x()), area.x() + area.width() - frame.width())
    y = min(max(frame.y(), area.y()), area.y() + area.height() - frame.height())
    if (x, y) != (frame.x(), frame.y()):
        window.move(x, y)


class ElidedLabel(_FittedLabel):
    """A one-line label that never asks for the width of its text: a long file name is drawn cut
    in the middle with "…" (its start and its end stay readable) and shown whole in the tooltip,
    so a 107-character name can not make the window wider than the screen nor squeeze the other
    pane. `text()` is the whole text."""

    def __init__(self, text: str = "", parent=None) -> None:
        super().__init__(parent)
        self._tip: str | None = None
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setText(text)

    def setToolTip(self, tip: str) -> None:
        """An explicit tooltip (a path) replaces the default one (the whole text when cut)."""
        self._tip = tip or None
        self._fit()

    def minimumSizeHint(self):  # noqa: N802
        s = super().minimumSizeHint()
        s.setWidth(min(s.width(), self.fontMetrics().horizontalAdvance("…" * 6)))
        return s

    def sizeHint(self):  # noqa: N802
        s = super().sizeHint()
        s.setWidth(min(self.fontMetrics().horizontalAdvance(self._full) + 8, 480))
        return s

    def _fit(self) -> None:
        width = max(self.contentsRect().width(), 20)
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideMiddle, width)
        QLabel.setText(self, shown)
        cut = shown != self._full
        QLabel.setToolTip(self, self._tip if self._tip is not None else (self._full if cut else ""))


class ElidedLineEdit(QLineEdit):
    """A line edit that, while not being edited, draws a path too long for it cut in the middle
    with "…" (the folder's start and the file name stay readable; QLineEdit showed the tail
    only) and has the whole text in its tooltip; being edited it is a plain line edit."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.textChanged.connect(self.setToolTip)

    def shown_text(self) -> str:
        """What is drawn (the whole text while focused or when it fits)."""
        if self.hasFocus() or not self.text():
            return self.text()
        width = self.style().subElementRect(QStyle.SubElement.SE_LineEditContents, self._option(), self).width() - 4
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideMiddle, max(width, 10))

    def _option(self) -> QStyleOptionFrame:
        opt = QStyleOptionFrame()
        self.initStyleOption(opt)
        return opt

    def paintEvent(self, e) -> None:  # noqa: N802
        shown = self.shown_text()
        if shown == self.text():
            super().paintEvent(e)
            return
        p = QPainter(self)
        try:
            opt = self._option()
            self.style().drawPrimitive(QStyle.PrimitiveElement.PE_PanelLineEdit, opt, p, self)
            r = self.style().subElementRect(QStyle.SubElement.SE_LineEditContents, opt, self).adjusted(2, 0, -2, 0)
            p.setPen(self.palette().color(QPalette.ColorRole.Text))
            p.drawText(r, int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), shown)
        finally:
            p.end()
