"""One model's graph on a QGraphicsView: wheel zoom about the cursor, drag to pan, click an op
to choose it, centre on an op, fit. Items come from `items.py`; the scene is rebuilt only when
the graph changes, restyled in place when the colours change."""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QPoint, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView, QToolTip
from shiboken6 import isValid

from inspector.core.graph.layout import GraphLayout
from inspector.core.graph.structure import ModelGraph
from inspector.core.graph.style import GraphStyle
from inspector.core.graph.svg import tensor_title
from inspector.gui.graph.items import MIN_NODE_PX, EdgeBatch, NodeItem

MIN_SCALE, MAX_SCALE = 0.001, 4.0
READABLE_SCALE = 0.6  # the least zoom at which the boxes' labels are drawn and read (`show_top`'s floor)

CHUNK_S = 0.02  # items added per slice of the event loop (seconds)
EDGE_BATCH = 48  # edges drawn as one path item


class GraphCanvas(QGraphicsView):
    op_clicked = Signal(int)  # the op index (of this canvas' model)
    shown = Signal()  # all items of the last `show_graph` are in the scene
    restyled = Signal()  # new colours or a new selection (the overview redraws)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setScene(QGraphicsScene(self))
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontSavePainterState, True)
        self.setBackgroundBrush(Qt.GlobalColor.white)
        self.graph: ModelGraph | None = None
        self.graph_layout: GraphLayout | None = None
        self.nodes: dict[int, NodeItem] = {}  # op index -> item
        self.items_by_id: list[NodeItem] = []
        self.selected: int | None = None
        self._press: QPoint | None = None
        self._building = 0  # token of the graph being built (a newer one stops an older)
        self._late_style: GraphStyle | None = None  # colours that arrived while the items were being built
        self.worst_op: int | None = None  # the style's worst op (where Fit looks when nothing is selected)

    # ------------------------------------------------------------------ content
    def show_graph(self, graph: ModelGraph, layout: GraphLayout, style: GraphStyle, incremental: bool = True) -> None:
        """Build the items (`incremental`: in slices of CHUNK_S between events, so a 5,000-op
        graph never holds the window) and show them; `shown` is emitted when all are in."""
        self._building += 1
        token = self._building
        scene = QGraphicsScene(self)
        scene.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)
        scene.setSceneRect(QRectF(0, 0, layout.width, layout.height))
        self.graph, self.graph_layout, self.selected, self.nodes, self.items_by_id = graph, layout, None, {}, []
        self.worst_op = None
        self._late_style = None
        work = self._items(graph, layout, style)
        if not incremental:
            for item in work:
                scene.addItem(item)
            self._done(token, scene)
            return

        def step() -> None:
            if token != self._building or not isValid(self):
                return  # another graph replaced this one
            t0 = time.perf_counter()
            for item in work:
                scene.addItem(item)
                if time.perf_counter() - t0 > CHUNK_S:
                    QTimer.singleShot(0, step)
                    return
            self._done(token, scene)

        step()

    def same_shape(self, graph: ModelGraph) -> bool:
        """`graph` draws exactly as the one shown (same nodes, labels and edges): another version
        of model B whose edit kept its ops (re-calibration, weights, bias)."""
        g = self.graph
        if g is None or self._late_style is not None or len(g.nodes) != len(graph.nodes) or len(g.edges) != len(graph.edges):
            return False
        return (all(a.kind == b.kind and a.op_index == b.op_index and a.label == b.label and a.name == b.name
                    and a.constants == b.constants for a, b in zip(g.nodes, graph.nodes, strict=True))
                and all(a == b for a, b in zip(g.edges, graph.edges, strict=True)))  # fmt: skip

    def adopt(self, graph: ModelGraph, layout: GraphLayout, style: GraphStyle) -> None:
        """Show `graph` (of the `same_shape`) on the items already drawn: its tensors (tooltips'
        scales) and colours, the view kept where the user left it; 1,500 items are not rebuilt."""
        self.graph, self.graph_layout = graph, layout
        for item, node in zip(self.items_by_id, graph.nodes, strict=True):
            item.node = node
        self.set_style(style)

    def _items(self, graph: ModelGraph, layout: GraphLayout, style: GraphStyle):
        edges = [(e.tensor, pts) for e, pts in zip(graph.edges, layout.edges, strict=True)]
        for k in range(0, len(edges), EDGE_BATCH):  # edges come in execution order: a batch stays local
            yield EdgeBatch(edges[k : k + EDGE_BATCH])
        for node, st in zip(graph.nodes, style.nodes, strict=True):
            item = NodeItem(node, layout.box(node.id), st)
            item.setZValue(1)
            self.items_by_id.append(item)
            if node.op_index is not None:
                self.nodes[node.op_index] = item
            yield item

    def _done(self, token: int, scene: QGraphicsScene) -> None:
        """Show the finished scene (shown only once complete: its index is built once, at the
        first paint, instead of again and again while it grows)."""
        if token != self._building:
            scene.deleteLater()
            return
        old = self.scene()
        self.setScene(scene)
        old.deleteLater()
        late, self._late_style = self._late_style, None
        if late is not None and len(late.nodes) == len(self.items_by_id):
            self.set_style(late)
        self.shown.emit()

    def far_out(self) -> bool:
        """Zoomed out so far that a node would be smaller than MIN_NODE_PX (the items skip
        painting; `drawForeground` draws them all as coloured marks of at least that size)."""
        return bool(self.items_by_id) and self.zoom_level() * self.items_by_id[0]._rect.height() < MIN_NODE_PX

    def drawForeground(self, painter, rect) -> None:  # noqa: N802
        """Far out (Fit on a 1,500-op model left a blank canvas: boxes under a pixel), the level
        of detail of the whole model: one mark per node in its colour, at least MIN_NODE_PX, so
        the model's shape and its worst region show; the selected op ringed."""
        super().drawForeground(painter, rect)
        if not self.far_out():
            return
        z = self.zoom_level()
        t = self.viewportTransform()
        top, bottom = rect.top(), rect.bottom()
        painter.save()
        painter.resetTransform()
        for item in self.items_by_id:
            r = item._rect
            y = item.y()
            if y + r.height() < top - 10 / z or y > bottom + 10 / z:
                continue
            p = t.map(item.pos())
            w, h = max(r.width() * z, MIN_NODE_PX), max(r.height() * z, MIN_NODE_PX)
            painter.fillRect(QRectF(p.x() + (r.width() * z - w) / 2, p.y() + (r.height() * z - h) / 2, w, h), item._brush)
        if self.selected in self.nodes:
            item = self.nodes[self.selected]
            c = t.map(item.sceneBoundingRect().center())
            painter.setPen(QPen(QColor("#0050d0"), 2))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawEllipse(c, 7.0, 7.0)
        painter.restore()

    def viewportEvent(self, e) -> bool:
        """Tooltips made when asked for: the node's title, or the tensor of an edge."""
        if e.type() == QEvent.Type.ToolTip and self.graph is not None:
            text = self.tooltip_at(e.pos())
            if text:
                QToolTip.showText(e.globalPos(), text, self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(e)

    def tooltip_at(self, pos: QPoint) -> str:
        items = self.items(pos)
        for item in items:
            if isinstance(item, NodeItem):
                return item.style.title
        t = self.tensor_at(pos)
        return "" if t is None or self.graph is None else tensor_title(self.graph, t)

    def tensor_at(self, pos: QPoint) -> int | None:
        """The tensor (edge) drawn within a few pixels of view position `pos`."""
        p = self.mapToScene(pos)
        tol = 4.0 / max(self.zoom_level(), 1e-6)
        hits = [it.tensor_near(p.x(), p.y(), tol) for it in self.items(pos) if isinstance(it, EdgeBatch)]
        return next((h for h in hits if h is not None), None)

    def set_style(self, style: GraphStyle) -> None:
        """New colours (kept until the items exist when the graph is still being built)."""
        if self._late_style is not None or len(self.items_by_id) != len(style.nodes):
            self._late_style = style
            return
        for item, st in zip(self.items_by_id, style.nodes, strict=True):
            item.set_style(st)
        self.worst_op = style.worst_op
        self.restyled.emit()

    def clear(self) -> None:
        self._building += 1
        old = self.scene()
        self.setScene(QGraphicsScene(self))
        old.deleteLater()
        self.graph, self.graph_layout, self.nodes, self.items_by_id, self.selected = None, None, {}, [], None
        self.worst_op = None

    # ------------------------------------------------------------------ selection and navigation
    def select(self, op: int | None, centre: bool = True) -> None:
        if self.selected in self.nodes:
            self.nodes[self.selected].set_selected(False)
        self.selected = op if op in self.nodes else None
        if self.selected is not None:
            item = self.nodes[self.selected]
            item.set_selected(True)
            if centre:
                self.centerOn(item)
        self.restyled.emit()

    def zoom(self, factor: float) -> None:
        s = self.transform().m11()
        factor = max(MIN_SCALE / s, min(MAX_SCALE / s, factor))
        self.scale(factor, factor)

    def zoom_level(self) -> float:
        return self.transform().m11()

    def set_zoom(self, level: float) -> None:
        self.zoom(level / self.zoom_level())

    def fit(self) -> None:
        """Fit the graph: whole when that is readable; a tall graph (a 1,500-op chain fitted whole
        was a thin column of sub-pixel boxes) fills the width at a readable zoom, centred on the
        selected op, else the worst op, else its top (the overview strip shows the whole model
        and where the view is). Fit again there: the whole model, every op a mark in its colour."""
        rect = self.scene().sceneRect()
        if rect.isEmpty():
            return
        vp = self.viewport().size()
        whole = min(vp.width() / rect.width(), vp.height() / rect.height())
        readable = max(min(vp.width() / rect.width(), 1.0), READABLE_SCALE)
        if whole >= READABLE_SCALE or abs(self.zoom_level() / readable - 1.0) < 1e-6 and self._focus_in_view():
            self.fit_whole()
            return
        self.set_zoom(readable)
        focus = self._focus()
        if focus is not None:
            self.centerOn(focus.sceneBoundingRect().center())
        else:
            first = self.items_by_id[0] if self.items_by_id else None
            top = first.y() if first is not None else rect.top()
            self.centerOn(rect.center().x(), top + vp.height() / 2 / self.zoom_level() - 20)

    def fit_whole(self) -> None:
        rect = self.scene().sceneRect()
        if not rect.isEmpty():
            self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)

    def _focus(self) -> NodeItem | None:
        """The node Fit looks at: the selected op's, else the worst op's."""
        for op in (self.selected, self.worst_op):
            if op is not None and op in self.nodes:
                return self.nodes[op]
        return None

    def _focus_in_view(self) -> bool:
        focus = self._focus()
        shown = self.mapToScene(self.viewport().rect()).boundingRect()
        return focus is None or shown.contains(focus.sceneBoundingRect().center())

    def show_top(self) -> None:
        """Readable zoom (labels drawn), the inputs in view; a small graph is fitted whole."""
        rect = self.scene().sceneRect()
        if rect.isEmpty():
            return
        self.resetTransform()
        vp = self.viewport().size()
        if rect.height() * 0.9 <= vp.height() and rect.width() <= vp.width() * 1.5:
            self.fit_whole()
            self.set_zoom(min(self.zoom_level(), 1.2))
            return
        self.set_zoom(max(min(vp.width() / rect.width(), 0.9), 0.6))
        first = self.items_by_id[0] if self.items_by_id else None
        if first is not None:
            self.centerOn(first.sceneBoundingRect().center().x(), first.y() + vp.height() / 2 / self.zoom_level() - 20)

    # ------------------------------------------------------------------ mouse
    def wheelEvent(self, e) -> None:
        if e.angleDelta().y():
            self.zoom(1.0015 ** e.angleDelta().y())
        e.accept()

    def mousePressEvent(self, e) -> None:
        self._press = e.position().toPoint()
        super().mousePressEvent(e)

    def mouseReleaseEvent(self, e) -> None:
        super().mouseReleaseEvent(e)
        if self._press is not None and (e.position().toPoint() - self._press).manhattanLength() <= 4:
            op = self.op_at(self._press)
            if op is not None:
                self.op_clicked.emit(op)
        self._press = None

    def op_at(self, pos: QPoint) -> int | None:
        for item in self.items(pos):
            if isinstance(item, NodeItem) and item.node.op_index is not None:
                return item.node.op_index
        return None
