"""The graphics items of the graph view: one `NodeItem` per node (painted box; labels and badges
only when zoomed in far enough to read them) and `EdgeBatch`es of tensors (one path per batch). Tooltips (the node's
title; the tensor's name, shape, dtype, scale, zero point) are made by the canvas when asked for. Positions and colours come from `core.graph`."""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QStyleOptionGraphicsItem

from inspector.core.graph.structure import GraphNode
from inspector.core.graph.style import BADGES, NodeStyle
from inspector.core.graph.svg import text_colour

LABEL_LOD = 0.45  # scale at which op labels are drawn (below: boxes only)
BADGE_LOD = 0.25
EDGE_LOD = 0.02  # below: edges are not drawn (the whole of a 5,000-op graph in view)
MIN_NODE_PX = 3.0  # the canvas's: a node smaller than this is drawn by the canvas
BOX_LOD = 0.08  # below: boxes as plain fills (no outline, no rounded corners): 5,000 ops fitted paint fast
_FONT, _NARROW, _SMALL = QFont(), QFont(), QFont()
_FONT.setPixelSize(12)
_FONT.setBold(True)
_NARROW.setPixelSize(10)  # long op types (SQUARED_DIFFERENCE) fit the box
_NARROW.setBold(True)
_SMALL.setPixelSize(10)
SELECTED_PEN = QPen(QColor("#0050d0"), 4)
PAIRED_PEN = QPen(QColor("#0050d0"), 2, Qt.PenStyle.DashLine)


class NodeItem(QGraphicsItem):
    def __init__(self, node: GraphNode, box: tuple[float, float, float, float], style: NodeStyle) -> None:
        super().__init__()
        self.node = node
        x, y, w, h = box
        self._rect = QRectF(0, 0, w, h)
        self.setPos(x, y)
        self.selected = False
        self.unmatched = False  # A's graph: an op without a partner in B
        self.set_style(style)
        self.setAcceptHoverEvents(False)

    def set_style(self, style: NodeStyle) -> None:
        self.style = style
        self._brush, self._ink = _paints(style.fill)
        self.update()

    def set_selected(self, on: bool) -> None:
        if on != self.selected:
            self.selected = on
            self.setZValue(2 if on else 1)
            self.update()

    def boundingRect(self) -> QRectF:
        return self._rect.adjusted(-8, -9, 8, 4)

    def shape(self) -> QPainterPath:
        p = QPainterPath()
        p.addRect(self._rect)
        return p

    def paint(self, painter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        if lod * self._rect.height() < MIN_NODE_PX:
            return  # under a few pixels: the canvas draws every node as a mark (`GraphCanvas.drawForeground`)
        if lod < BOX_LOD and not self.selected:  # a few pixels wide: a plain fill is all one sees
            painter.fillRect(self._rect, self._brush)
            return
        port = self.node.kind != "op"
        pen = SELECTED_PEN if self.selected else QPen(QColor("#222" if port else "#444"), 2 if port else 0.8)
        if self.unmatched and not self.selected:
            pen = QPen(QColor("#b00"), 2, Qt.PenStyle.DotLine)
        painter.setPen(pen)
        painter.setBrush(self._brush)
        r = self._rect
        radius = r.height() / 2 if port else 4
        painter.drawRoundedRect(r, radius, radius)
        if lod < BADGE_LOD:
            return
        if self.node.constants and lod >= LABEL_LOD:
            painter.fillRect(QRectF(3, r.height() - 10, 7, 7), QColor("#444"))
        for k, b in enumerate(self.style.badges):
            letter, colour, _ = BADGES[b]
            c = QPointF(r.width() - 7 - 15 * k, 0)
            painter.setPen(QPen(QColor("#fff"), 1))
            painter.setBrush(QColor(colour))
            painter.drawEllipse(c, 7, 7)
            if lod >= LABEL_LOD:
                painter.setFont(_SMALL)
                painter.drawText(QRectF(c.x() - 7, c.y() - 7, 14, 14), Qt.AlignmentFlag.AlignCenter, letter)
        if lod < LABEL_LOD:
            return
        painter.setPen(self._ink if not port else QColor("#1a1a1a"))
        if port:
            painter.setFont(_SMALL)
            painter.drawText(r.adjusted(8, 0, -8, 0), Qt.AlignmentFlag.AlignCenter, _fit(f"{self.node.kind}: {self.node.name}", 24))
            return
        painter.setFont(_FONT if len(self.node.label) <= 16 else _NARROW)
        painter.drawText(QRectF(0, 2, r.width(), 17), Qt.AlignmentFlag.AlignCenter, _fit(self.node.label, 22))
        painter.setFont(_SMALL)
        painter.drawText(QRectF(0, 19, r.width(), 15), Qt.AlignmentFlag.AlignCenter, _fit(f"#{self.node.op_index} {self.node.name}", 24))


class EdgeBatch(QGraphicsPathItem):
    """Up to BATCH edges (tensors) drawn as one path: a 5,000-op graph has 6,500 edges, and as
    items of their own their long bounding boxes made the scene's index slow to build. Which
    tensor is under the cursor is found from the polylines (`tensor_near`)."""

    PEN = QPen(QColor("#8a8a8a"), 1.2)

    def __init__(self, edges: list[tuple[int, tuple[tuple[float, float], ...]]]) -> None:
        path = QPainterPath()
        for _tensor, points in edges:
            path.moveTo(QPointF(*points[0]))
            for p in points[1:]:
                path.lineTo(QPointF(*p))
            (x1, y1), (x2, y2) = points[-2], points[-1]  # an arrow head at the reader
            d = max(((x2 - x1) ** 2 + (y2 - y1) ** 2) ** 0.5, 1e-6)
            ux, uy = (x2 - x1) / d, (y2 - y1) / d
            for side in (1, -1):
                path.moveTo(QPointF(x2, y2))
                path.lineTo(QPointF(x2 - 7 * ux + side * 3.5 * uy, y2 - 7 * uy - side * 3.5 * ux))
        super().__init__(path)
        self._bounds = path.controlPointRect().adjusted(-2, -2, 2, 2)
        self.edges = edges
        self.setPen(self.PEN)
        self.setAcceptHoverEvents(False)
        self.setZValue(0)

    def boundingRect(self) -> QRectF:
        return self._bounds

    def shape(self) -> QPainterPath:  # hit tests by bounding box (cheap); `tensor_near` finds the line
        p = QPainterPath()
        p.addRect(self._bounds)
        return p

    def tensor_near(self, x: float, y: float, tol: float) -> int | None:
        """The tensor whose line passes within `tol` of (x, y), the nearest; None if none does."""
        best, best_d = None, tol
        for tensor, pts in self.edges:
            for (ax, ay), (bx, by) in zip(pts, pts[1:], strict=False):
                dx, dy = bx - ax, by - ay
                t = max(0.0, min(1.0, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy or 1.0)))
                d = ((ax + t * dx - x) ** 2 + (ay + t * dy - y) ** 2) ** 0.5
                if d <= best_d:
                    best, best_d = tensor, d
        return best

    def paint(self, painter, option, widget=None) -> None:
        if option.levelOfDetailFromTransform(painter.worldTransform()) >= EDGE_LOD:  # below: sub-pixel smudges
            super().paint(painter, option, widget)


@lru_cache(maxsize=256)
def _paints(fill: str) -> tuple[QBrush, QColor]:
    """The brush and text colour of a fill (shared by every node of that colour)."""
    return QBrush(QColor(fill)), QColor(text_colour(fill))


def _fit(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"
