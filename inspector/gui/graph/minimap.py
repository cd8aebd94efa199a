"""The graph's overview: the whole model in a strip beside the canvas, every node a mark in its
colour (so a 1,500-op model's worst region stands out at a glance), the part the canvas shows
outlined; click or drag to look there. Stretched to the strip (not to scale): a deep model is
a tall column, and each of its layers keeps at least a pixel."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from inspector.gui.graph.canvas import GraphCanvas

WIDTH = 56


class GraphMinimap(QWidget):
    def __init__(self, canvas: GraphCanvas, parent=None) -> None:
        super().__init__(parent)
        self.canvas = canvas
        self.setFixedWidth(WIDTH)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Expanding)
        self.setToolTip("The whole model: each op in its colour. Click or drag to look there.")
        self.setMouseTracking(False)
        canvas.horizontalScrollBar().valueChanged.connect(lambda _v: self.update())
        canvas.verticalScrollBar().valueChanged.connect(lambda _v: self.update())
        canvas.shown.connect(self.update)
        canvas.restyled.connect(self.update)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(WIDTH, 120)

    def _scale(self) -> tuple[float, float, QRectF]:
        r = self.canvas.scene().sceneRect()
        return (self.width() - 6) / max(r.width(), 1.0), (self.height() - 6) / max(r.height(), 1.0), r

    def paintEvent(self, _e) -> None:  # noqa: N802
        p = QPainter(self)
        try:
            self._paint(p)
        finally:
            p.end()  # ended here, never left to the garbage collector (Qt warns, and may crash)

    def _paint(self, p: QPainter) -> None:
        p.fillRect(self.rect(), QColor("#fafafa"))
        items = self.canvas.items_by_id
        if not items:
            return
        sx, sy, r = self._scale()
        for item in items:
            rr = item._rect
            x, y = 3 + (item.x() - r.x()) * sx, 3 + (item.y() - r.y()) * sy
            w, h = max(rr.width() * sx, 2.0), max(rr.height() * sy, 1.5)
            p.fillRect(QRectF(x, y, w, h), item._brush)
        sel = self.canvas.selected
        if sel in self.canvas.nodes:
            c = self.canvas.nodes[sel].sceneBoundingRect().center()
            p.setPen(QPen(QColor("#0050d0"), 2))
            y = 3 + (c.y() - r.y()) * sy
            p.drawLine(QPointF(0, y), QPointF(self.width(), y))
        view = self.canvas.mapToScene(self.canvas.viewport().rect()).boundingRect()
        p.setPen(QPen(QColor("#333333"), 1))
        p.setBrush(QColor(0, 80, 208, 30))
        p.drawRect(QRectF(3 + (view.x() - r.x()) * sx, 3 + (view.y() - r.y()) * sy,
                          max(view.width() * sx, 3.0), max(view.height() * sy, 3.0)))  # fmt: skip

    def _look(self, pos) -> None:
        sx, sy, r = self._scale()
        self.canvas.centerOn(r.x() + (pos.x() - 3) / sx, r.y() + (pos.y() - 3) / sy)
        self.update()

    def mousePressEvent(self, e) -> None:  # noqa: N802
        if e.button() == Qt.MouseButton.LeftButton:
            self._look(e.position())

    def mouseMoveEvent(self, e) -> None:  # noqa: N802
        if e.buttons() & Qt.MouseButton.LeftButton:
            self._look(e.position())
