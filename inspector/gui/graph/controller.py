"""The graph tab's controller: lays out the open models' chosen subgraphs off the GUI thread
(`Worker`: igraph runs there, so a 5,000-op graph never freezes the window), colours B's ops by
the current comparison (structure only before one), badges edited ops (the current version of
B) and audit findings, and keeps the graph and the app's selection in step both ways: a click
selects the op everywhere (`Controller.select_op`), a selection anywhere centres its node."""

from __future__ import annotations

import time
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from inspector.core.compare.result import ComparisonResult
from inspector.core.graph.layout import GraphLayout, layout_graph
from inspector.core.graph.structure import GraphNode, ModelGraph, model_graph
from inspector.core.graph.style import GraphStyle, float_side, op_badges, style_graph
from inspector.core.state.app_state import Selection
from inspector.core.tflite.model import Model
from inspector.gui.graph.view import GraphView
from inspector.gui.protocols import Audit, Comparison, ModelsController, VersionsShown
from inspector.gui.ui_services import UiServices
from inspector.gui.workers import Worker, guarded

ASYNC_OPS = 400  # larger graphs are styled in a worker thread (1,500 ops: 60-150 ms of Python)


def build_graph(model: Model, subgraph: int | None = None) -> tuple[ModelGraph, GraphLayout]:
    """Worker side: the graph of the model's chosen subgraph (or of `subgraph`) and its layout."""
    graph = model_graph(model, subgraph)
    return graph, layout_graph(graph)


StyleInputs = tuple[ComparisonResult | None, str, tuple[tuple[int, tuple[str, ...]], ...], int | None]  # result, metric, badges, subgraph


@dataclass(frozen=True)
class StyleMaker:
    """Styles a graph from the inputs captured when it was made (called in a worker); `inputs`
    tells whether a style it made is stale."""

    inputs: StyleInputs
    result: ComparisonResult | None  # A's side of the comparison for model A

    def __call__(self, graph: ModelGraph) -> GraphStyle:
        _result, metric, badges, _sub = self.inputs
        return style_graph(graph, self.result, metric, dict(badges))


def build_styled(model: Model, subgraph: int | None, style_of: StyleMaker) -> tuple[ModelGraph, GraphLayout, GraphStyle | None]:
    """Worker side: `build_graph` and, for a large graph, its style (`style_of(graph)`)."""
    graph, layout = build_graph(model, subgraph)
    return graph, layout, style_of(graph) if graph.op_count > ASYNC_OPS else None


class GraphController(QObject):
    laid_out = Signal(str)  # slot: its graph is drawn (tests, screenshots)
    restyled = Signal(str)  # slot: a large graph's new colours are drawn (styled in a worker)

    def __init__(self, controller: ModelsController, ui: UiServices, compare: Comparison, requantize: VersionsShown,
                 review: Audit, view: GraphView | None = None) -> None:
        """`compare` (its `result_changed`), `requantize` (its relayed `versions_changed`: the
        edited badges) and `review` (its audit findings: the audit badges) are the collaborators
        it listens to; `ui` adds the tab."""
        super().__init__(ui.parent)
        self.ui = ui
        self.review = review
        self.controller = c = controller
        self.state = c.state
        self.view = view or GraphView()
        ui.add_tab("Graph", self.view)
        self.graphs: dict[str, ModelGraph | None] = {"A": None, "B": None}
        self.styles: dict[str, GraphStyle | None] = {"A": None, "B": None}
        self.workers: dict[str, Worker | None] = {"A": None, "B": None}
        self.timings: dict[str, float] = {}  # layout_s, draw_s of B's last graph
        self._search_hits: list[int] = []
        self._search_text = ""
        self._clicked: str | None = None  # the canvas a selection came from (not re-centred)
        self.other_subgraph: int | None = None  # B: a subgraph other than the compared one, drawn as structure
        self._built_from: dict[str, Model] = {}  # slot -> the model its graph shows
        self._pending: dict[str, tuple[GraphLayout, float]] = {}  # slot -> graph being drawn (layout, start)
        self._stylers: dict[str, Worker] = {}  # slot -> the worker styling its large graph
        self._unmatched_for: tuple | None = None  # what A's unmatched ops were marked for (graph, a node, models)
        for slot, canvas in self.view.canvas.items():
            canvas.shown.connect(lambda s=slot: self._shown(s))

        c.slot_changed.connect(self._model_changed)
        c.signature_changed.connect(lambda _k: self.rebuild_all())
        c.selection_changed.connect(self._selection_changed)
        compare.result_changed.connect(lambda _r: self.restyle())
        requantize.versions_changed.connect(self.restyle)
        review.audit_updated.connect(lambda _f: self.restyle())
        v = self.view
        v.op_clicked.connect(self.click)
        v.metric_changed.connect(lambda _m: self.restyle())
        v.show_a_toggled.connect(self._show_a)
        v.search_requested.connect(self.search)
        v.worst_requested.connect(self.go_to_worst)
        v.subgraph.activated.connect(lambda _i: self.show_subgraph(v.subgraph.currentData()))
        v.room_toggled.connect(self.give_room)
        panes = ui.action("panes")  # View › Show model panes (F9): the button follows it
        if panes is not None:
            panes.toggled.connect(lambda shown: self._room_follows(not shown))

    def give_room(self, on: bool) -> None:
        """The graph takes the window's height (the model panes hidden, as F9 does) or gives it back."""
        panes = self.ui.action("panes")
        if panes is not None and panes.isChecked() == on:
            panes.trigger()

    def _room_follows(self, maximized: bool) -> None:
        b = self.view.btn_room
        b.blockSignals(True)
        b.setChecked(maximized)
        b.blockSignals(False)

    # ------------------------------------------------------------------ graphs
    def _model_changed(self, slot: str) -> None:
        if slot == "B":
            self.other_subgraph = None
            self._fill_subgraphs()
        if slot == "B" or self.view.show_a.isChecked():
            self.rebuild(slot)
        else:
            self.graphs["A"] = None
        if slot == "A" and self.graphs["B"] is not None:
            self.restyle()  # pairing changed: A's unmatched ops, the comparison may be gone

    def rebuild_all(self) -> None:
        self.other_subgraph = None
        self._fill_subgraphs()
        self.rebuild("B")
        if self.view.show_a.isChecked():
            self.rebuild("A")

    def rebuild(self, slot: str) -> Worker | None:
        """Lay the model in `slot` out in a worker thread; drawn when done."""
        model = self.controller.models[slot]
        old = self.workers[slot]
        if old is not None:
            old.cancel()
        if model is None:
            self.graphs[slot], self.workers[slot] = None, None
            self._built_from.pop(slot, None)
            self.view.canvas[slot].clear()
            if slot == "B":
                self.view.status.setText("Open model B to see its graph.")
            return None
        self.view.status.setText(f"Laying out {len(model.main.ops)} ops of {model.path}…")
        style_of = self._style_maker(slot, model)
        w = Worker(build_styled, model, self.other_subgraph if slot == "B" else None, style_of)
        self.workers[slot] = w
        w.finished.connect(guarded(self, lambda out, s=slot, wk=w, m=model, f=style_of: self._built(s, wk, m, out, f)))
        w.failed.connect(guarded(self, lambda msg: self.view.status.setText(f"Graph not drawn: {msg}")))
        return w.start()  # (not a status-bar task: a second or less even for 5,000 ops; the tab says it)

    def _built(self, slot: str, worker: Worker, model: Model,
               out: tuple[ModelGraph, GraphLayout, GraphStyle | None], made: StyleMaker | None = None) -> None:
        graph, layout, style = out
        if worker is not self.workers[slot] or self.controller.models[slot] is not model:
            return  # superseded
        self.workers[slot] = None
        self.graphs[slot] = graph
        self._built_from[slot] = model
        if style is None or made is None or not _same(made.inputs, self._style_inputs(slot)):
            style = self._style(slot)  # small, or what it was styled by changed meanwhile
        else:
            self._adopt(slot, style)
        t0 = time.perf_counter()
        canvas = self.view.canvas[slot]
        if canvas.same_shape(graph) and slot not in self._pending:  # another version of B, same ops
            canvas.adopt(graph, layout, style)
            self._mark_unmatched()
            self._status()
            sel = self.controller.selection
            canvas.select(sel.op(slot), centre=False)
            self.laid_out.emit(slot)
            return
        self._pending[slot] = (layout, t0)
        canvas.show_graph(graph, layout, style)

    def _shown(self, slot: str) -> None:
        canvas = self.view.canvas[slot]
        if slot not in self._pending:
            return
        layout, t0 = self._pending.pop(slot)
        self._mark_unmatched()
        canvas.show_top()
        canvas.viewport().repaint()
        if slot == "B":
            self.timings = {"layout_s": layout.seconds, "draw_s": time.perf_counter() - t0}
        self._status()
        sel = self.controller.selection
        canvas.select(sel.op(slot), centre=sel.op(slot) is not None)
        self.laid_out.emit(slot)

    # ------------------------------------------------------------------ colours
    def _result(self):
        return self.state.current_comparison()

    def _style_inputs(self, slot: str, model: Model | None = None) -> StyleInputs:
        """What a style is made of (compared by identity: a style made from other inputs is stale)."""
        model = model or self.controller.models[slot]
        result = self._result() if not (slot == "B" and self.other_subgraph is not None) else None
        badges = self._badges(model) if model is not None and slot == "B" and self.other_subgraph is None else {}
        return (result, self.view.current_metric(), tuple(sorted(badges.items())), self.other_subgraph)

    def _badges(self, model: Model) -> dict[int, tuple[str, ...]]:
        """`op_badges` of `model`, kept while the model and the edited and audited ops are the same
        (asked for at every restyle and staleness check: O(ops) each time)."""
        edited, audited = self._edited_and_audited()
        key = (id(model), frozenset(edited), frozenset(audited))
        if self._badge_memo is None or self._badge_memo[0] != key or self._badge_memo[1] is not model:
            self._badge_memo = (key, model, op_badges(model, edited, audited))
        return self._badge_memo[2]

    _badge_memo: tuple | None = None

    def _style_maker(self, slot: str, model: Model | None = None) -> StyleMaker:
        """A callable that styles a graph from the inputs captured now (runs in a worker)."""
        inputs = self._style_inputs(slot, model)
        result = inputs[0]
        return StyleMaker(inputs, float_side(result) if slot == "A" and result is not None else result)

    def _adopt(self, slot: str, style: GraphStyle) -> None:
        self.styles[slot] = style
        if slot == "B":
            self.view.legend.set_legend(style.legend)

    def _style(self, slot: str) -> GraphStyle:
        graph, model = self.graphs[slot], self.controller.models[slot]
        assert graph is not None and model is not None
        style = self._style_maker(slot)(graph)
        self._adopt(slot, style)
        return style

    def _edited_and_audited(self) -> tuple[set[int], set[int]]:
        v = self.state.version(self.state.current)
        edited = set(v.edited_ops) if v is not None and v.kind == "edited" else set()
        b = self.controller.models["B"]
        findings = self.review.findings or []
        sub = b.main.index if b is not None else 0
        audited = {f.op_index for f in findings if f.op_index is not None and f.subgraph == sub}
        return edited, audited

    def restyle(self) -> None:
        for slot in ("B", "A"):
            model, graph = self.controller.models[slot], self.graphs[slot]
            if model is None or self._built_from.get(slot) is not model:
                continue  # closed or replaced: its new graph is on the way (styled when it arrives)
            if graph is None or self.view.canvas[slot].graph is not graph:
                continue
            if graph.op_count <= ASYNC_OPS:
                self.view.canvas[slot].set_style(self._style(slot))
                continue
            make = self._style_maker(slot)  # a large graph: styled in a worker, the window stays live
            old = self._stylers.get(slot)
            if old is not None:
                old.cancel()
            w = Worker(make, graph)
            self._stylers[slot] = w
            w.finished.connect(guarded(self, lambda st, s=slot, g=graph, wk=w, m=make: self._styled(s, g, wk, m, st)))
            w.start()
        self._mark_unmatched()
        self._status()

    def _styled(self, slot: str, graph: ModelGraph, worker: Worker, make: StyleMaker, style: GraphStyle) -> None:
        if self._stylers.get(slot) is not worker or self.graphs[slot] is not graph:
            return  # superseded
        self._stylers.pop(slot, None)
        if not _same(make.inputs, self._style_inputs(slot)):
            self.restyle()  # the comparison, metric or badges changed meanwhile
            return
        self._adopt(slot, style)
        self.view.canvas[slot].set_style(style)
        self._status()
        self.restyled.emit(slot)

    def _mark_unmatched(self) -> None:
        canvas = self.view.canvas["A"]
        models = self.controller.models
        key = (canvas.graph, next(iter(canvas.nodes.values()), None), models["A"], models["B"])
        if self._unmatched_for is not None and all(x is y for x, y in zip(key, self._unmatched_for, strict=True)):
            return  # the same drawing of the same pair (a new result restyles: 1,500 nodes, 10 ms each time)
        self._unmatched_for = key
        for op, item in canvas.nodes.items():
            item.unmatched = self.controller.models["B"] is not None and self.controller.counterpart_op("A", op) is None
            item.update()

    def _status(self) -> None:
        g, st = self.graphs["B"], self.styles["B"]
        if g is None or st is None:
            return
        colour = "structure only (run a comparison to colour the ops)" if st.metric is None else f"coloured by {st.legend.title}"
        if self.other_subgraph is not None:
            colour = "structure only: not the compared subgraph (its ops are not selected in the other views)"
        t = self.timings
        self.view.status.setText(f"{g.op_count} ops, {len(g.edges)} tensors, subgraph {g.subgraph}: {colour}. "
                                 f"Layout {t.get('layout_s', 0):.2f} s, drawn in {t.get('draw_s', 0):.2f} s. "
                                 "Wheel: zoom · drag: pan · click: select.")  # fmt: skip

    # ------------------------------------------------------------------ selection
    def click(self, slot: str, op: int) -> None:
        if slot == "B" and self.other_subgraph is not None:
            self.view.canvas["B"].select(op, centre=False)  # another subgraph's op: not the app's selection
            return
        self._clicked = slot
        try:
            self.controller.select_op(slot, op)
        finally:
            self._clicked = None

    def _selection_changed(self, sel: Selection) -> None:
        for slot, canvas in self.view.canvas.items():
            if not (slot == "B" and self.other_subgraph is not None):
                canvas.select(sel.op(slot), centre=self._clicked != slot)

    def go_to_worst(self) -> int | None:
        st = self.styles["B"]
        op = None if st is None or self.other_subgraph is not None else st.worst_op
        if op is None:
            self.view.status.setText("No comparison yet: nothing to rank (run one, Ctrl+R).")
            return None
        self.controller.select_op("B", op)
        return op

    def search(self, text: str) -> int | None:
        """Select the op named `text` (an index, or part of its type or tensor name); Enter again: the next."""
        g = self.graphs["B"]
        text = text.strip()
        if g is None or not text:
            return None
        if text != self._search_text:
            self._search_text = text
            if text.lstrip("#").isdigit():
                hits = [int(text.lstrip("#"))]
            else:
                low = text.lower()
                hits = [n.op_index for n in g.nodes if n.op_index is not None and _matches(g, n, low)]
            self._search_hits = [h for h in hits if h in self.view.canvas["B"].nodes]
        elif self._search_hits:
            self._search_hits = self._search_hits[1:] + self._search_hits[:1]
        if not self._search_hits:
            self.view.status.setText(f"No op matches '{text}'.")
            return None
        op = self._search_hits[0]
        if self.other_subgraph is None:
            self.controller.select_op("B", op)
        self.view.canvas["B"].select(op, centre=True)
        return op

    # ------------------------------------------------------------------ subgraphs
    def _fill_subgraphs(self) -> None:
        """B's other subgraphs (control-flow bodies, other signatures') in the chooser."""
        combo, b = self.view.subgraph, self.controller.models["B"]
        combo.clear()
        combo.addItem("compared subgraph", None)
        others = [sg for sg in b.subgraphs if sg.index != b.main.index] if b is not None else []
        for sg in others:
            combo.addItem(f"subgraph {sg.index} {sg.name} ({len(sg.ops)} ops)".replace("  ", " "), sg.index)
        combo.setVisible(combo.count() > 1)

    def show_subgraph(self, index: int | None) -> Worker | None:
        """Draw B's subgraph `index` (structure only), or the compared one (None)."""
        if index == self.other_subgraph:
            return None
        self.other_subgraph = index
        i = self.view.subgraph.findData(index)
        if i >= 0:
            self.view.subgraph.setCurrentIndex(i)
        return self.rebuild("B")

    def _show_a(self, on: bool) -> None:
        if on and self.graphs["A"] is None:
            self.rebuild("A")
        elif not on:
            self.view.canvas["A"].clear()
            self.graphs["A"] = None


def _same(a: StyleInputs, b: StyleInputs) -> bool:
    """Style inputs equal: the same comparison object (never compared field by field), the rest equal."""
    return a[0] is b[0] and a[1:] == b[1:]


def _matches(g: ModelGraph, node: GraphNode, low: str) -> bool:
    full = g.tensors[node.tensor].name.lower() if node.tensor is not None else ""
    return low in node.name.lower() or low in node.label.lower() or low in full
