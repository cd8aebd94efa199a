"""Plot colours that follow the application palette (light or dark) and stay readable."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

COLOR_A = "#2f7ed8"  # float reference (A)
COLOR_B = "#f28c28"  # quantized / dequantized (B)
COLOR_CLIP = "#d62728"
COLOR_SECOND = "#2ca02c"


def is_dark() -> bool:
    pal = QApplication.palette()
    return pal.color(QPalette.ColorRole.Base).lightness() < 128


def text_color() -> QColor:
    return QApplication.palette().color(QPalette.ColorRole.Text)


def base_color() -> str:
    return QApplication.palette().color(QPalette.ColorRole.Base).name()


def brush(color: str, alpha: int) -> QColor:
    c = QColor(color)
    c.setAlpha(alpha)
    return c


def style_plot(widget: pg.PlotWidget | pg.GraphicsLayoutWidget, plots: list[pg.PlotItem] | None = None) -> None:
    """Background = palette base, axes and text = palette text colour, light grid."""
    pal = QApplication.palette()
    bg = pal.color(QPalette.ColorRole.Base)
    fg = pal.color(QPalette.ColorRole.Text)
    widget.setBackground(bg)
    items = plots if plots is not None else [widget.getPlotItem()]
    for p in items:
        for name in ("left", "bottom", "right", "top"):
            ax = p.getAxis(name)
            ax.setPen(pg.mkPen(fg))
            ax.setTextPen(pg.mkPen(fg))
        p.showGrid(x=True, y=True, alpha=0.15)
        p.titleLabel.setText(p.titleLabel.text, color=fg.name())
        p.layout.setContentsMargins(*PLOT_MARGINS)  # axes and labels never touch the window edge


PLOT_MARGINS = (4, 3, 14, 3)  # left, top, right, bottom (pixels) inside every plot


def show_frame(p: pg.PlotItem, on: bool) -> None:
    """Axes and grid only when the plot has data: an empty plot shows its hint, not ±1 axes."""
    for name in ("left", "bottom"):
        p.showAxis(name, on)
    p.showGrid(x=on, y=on, alpha=0.15)


def legend_html(entries: list[tuple[str, str]]) -> str:
    """A legend as rich text for a label above a plot (never over the data): (colour, text) pairs."""
    import html

    return "&nbsp;&nbsp;&nbsp; ".join(f"<span style='white-space:nowrap'><span style='color:{c}'>■</span>&nbsp;{html.escape(t)}</span>"
                                      for c, t in entries)
