"""The Graph tab: structure before a comparison, colours after one, and the selection in step
both ways (a real click on a node selects the op in the panes and the layer plot; a selection
made in the layer plot centres its node). The layout runs in a worker thread."""

from __future__ import annotations

import time

from PySide6.QtCore import QPoint, QPointF, QRectF, Qt, QTimer

from inspector.core.graph.scales import NO_DATA
from inspector.paths import example_pair
from tests.gui.compare.test_compare_gui import _run
from tests.helpers.gui_helpers import open_pair_checked

WAIT_MS = 30_000


def _opened(qtbot, window, pair):
    """`pair`: the fixture CNN (`cnn_pair`: 13+ ops, a residual ADD, shape ops; the bundled
    digits example is too small for the selection and search checks)."""
    g = window.features.graph
    f, q = pair
    open_pair_checked(qtbot, window, f, q)
    qtbot.waitUntil(lambda: g.view.canvas["B"].graph is not None and g.graphs["B"] is g.view.canvas["B"].graph, timeout=WAIT_MS)
    window.tabs.setCurrentWidget(g.view)
    return g


def _click_node(qtbot, canvas, op: int) -> None:
    item = canvas.nodes[op]
    canvas.centerOn(item)
    pos = canvas.mapFromScene(item.sceneBoundingRect().center())
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def test_structure_first_then_colours_and_selection_both_ways(qtbot, window, cnn_pair):
    g = _opened(qtbot, window, cnn_pair)
    canvas = g.view.canvas["B"]
    n_ops = len(window.controller.models["B"].main.ops)
    assert sorted(canvas.nodes) == list(range(n_ops))  # one item per op
    assert {it.style.fill for it in canvas.nodes.values()} == {NO_DATA}  # structure only
    others = [window.tabs.widget(i) for i in range(window.tabs.count()) if window.tabs.widget(i) is not g.view]
    assert g.view.minimumSizeHint().width() <= max(w.minimumSizeHint().width() for w in others)  # never widens the window
    result = _run(qtbot, window, count=4)
    fills = {op: it.style.fill for op, it in canvas.nodes.items()}
    compared = {lay.op_index for lay in result.layers}
    assert all(fills[op] != NO_DATA for op in compared if op in fills and result.layers[0].metrics is not None)
    assert len(set(fills.values())) > 2  # a scale, not one colour

    # a click on a node selects the op everywhere: the app's selection, B's and A's panes, the layer plot
    _click_node(qtbot, canvas, 5)
    sel = window.controller.selection
    assert sel.op("B") == 5 and sel.op("A") == window.controller.counterpart_op("B", 5)
    assert window.panes["B"].selected_op() == 5
    assert window.features.compare_features.plot.selected == 5
    assert canvas.nodes[5].selected and canvas.selected == 5

    # a selection made elsewhere (the layer plot's click) centres its node
    canvas.set_zoom(1.0)
    canvas.centerOn(canvas.nodes[0])

    def visible() -> QRectF:
        return canvas.mapToScene(canvas.viewport().rect()).boundingRect()

    assert not visible().intersects(canvas.nodes[12].sceneBoundingRect())
    window.features.compare_features.plot.layer_clicked.emit(12)
    assert canvas.selected == 12 and not canvas.nodes[5].selected
    assert visible().contains(canvas.nodes[12].sceneBoundingRect())
    assert abs(visible().center().y() - canvas.nodes[12].sceneBoundingRect().center().y()) < 2  # centred (vertically:
    # the graph is narrower than the view, which keeps it in the middle)
    assert window.panes["B"].selected_op() == 12

    # an edge's tooltip: its tensor's name, dtype, shape, scale and zero point
    graph = g.graphs["B"]
    b = window.controller.models["B"].main
    k = next(k for k, e in enumerate(graph.edges) if e.tensor in b.ops[5].outputs)
    t = b.tensors[graph.edges[k].tensor]
    (x1, y1), (x2, y2) = canvas.graph_layout.edges[k][:2]
    mid = QPointF((x1 + x2) / 2, (y1 + y2) / 2)
    canvas.centerOn(mid)
    tip = canvas.tooltip_at(canvas.mapFromScene(mid))
    assert t.dtype in tip and str(list(t.shape)) in tip
    assert f"scale {t.quantization.scales[0]:.6g}, zero point {t.quantization.zero_points[0]}" in tip
    assert canvas.tooltip_at(canvas.mapFromScene(canvas.nodes[5].sceneBoundingRect().center())).startswith("op 5 ")

    # go to worst: the op with the lowest accumulated SQNR
    worst = min((lay for lay in result.layers), key=lambda lay: lay.metrics.sqnr_db).op_index
    assert g.go_to_worst() == worst and window.controller.selection.op("B") == worst
    # search by index and by name
    assert g.search("3") == 3 and window.controller.selection.op("B") == 3
    name = g.graphs["B"].nodes[g.graphs["B"].node_of_op()[11]].name
    assert g.search(name) in {n.op_index for n in g.graphs["B"].nodes if n.name == name}


def test_a_beside_b_marks_the_partner_and_clicks_in_a_select_in_b(qtbot, window, cnn_pair):
    g = _opened(qtbot, window, cnn_pair)
    g.view.show_a.setChecked(True)
    ca = g.view.canvas["A"]
    qtbot.waitUntil(lambda: ca.graph is not None, timeout=WAIT_MS)
    a_op = next(op for op in ca.nodes if window.controller.counterpart_op("A", op) is not None)
    _click_node(qtbot, ca, a_op)
    b_op = window.controller.counterpart_op("A", a_op)
    assert window.controller.selection.op("B") == b_op
    assert g.view.canvas["B"].selected == b_op and ca.selected == a_op
    unmatched = [op for op, it in ca.nodes.items() if it.unmatched]
    assert unmatched == [op for op in ca.nodes if window.controller.counterpart_op("A", op) is None]


def test_a_big_graph_is_laid_out_without_freezing_the_window(qtbot, window):
    from tests.helpers.graph_fixtures import deep_transformer
    from tests.helpers.gui_helpers import open_wait
    from tests.helpers.paths import REPO

    path = deep_transformer(REPO / ".fixture-cache", 8, "float")
    open_wait(qtbot, window, "B", path)
    g = window.features.graph
    qtbot.waitUntil(lambda: len(g.view.canvas["B"].nodes) >= 300 and not g._pending, timeout=WAIT_MS)
    window.tabs.setCurrentWidget(g.view)
    gaps, last = [], [time.perf_counter()]

    def tick():
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(5)
    with qtbot.waitSignal(g.laid_out, timeout=WAIT_MS):
        g.rebuild("B")  # the graph of the chosen signature again, as after a signature change
    qtbot.wait(50)
    timer.stop()
    # layout in the worker, items added in slices: the window stays responsive (the bound is loose:
    # the test machine is shared; `make bench` prints the figures)
    assert max(gaps) < 0.3, max(gaps)
    assert g.timings["layout_s"] < 5 and g.timings["draw_s"] < 5
    canvas = g.view.canvas["B"]
    assert canvas.op_at(QPoint(-5, -5)) is None


def test_colours_that_arrive_while_the_items_are_being_added_are_applied(qtbot, monkeypatch):
    """A comparison (or audit) finishing while a big graph is still being built must not fail
    (zip of a partial item list) nor be lost."""
    import inspector.gui.graph.canvas as canvas_mod
    from inspector.core.graph.layout import layout_graph
    from inspector.core.graph.structure import model_graph
    from inspector.core.graph.style import GraphStyle, NodeStyle, style_graph
    from inspector.core.tflite.model import load_model

    monkeypatch.setattr(canvas_mod, "CHUNK_S", 0.0)  # one item per slice
    _, q = example_pair()
    graph = model_graph(load_model(q))
    layout = layout_graph(graph)
    c = canvas_mod.GraphCanvas()
    qtbot.addWidget(c)
    with qtbot.waitSignal(c.shown, timeout=WAIT_MS):
        c.show_graph(graph, layout, style_graph(graph))
        red = GraphStyle("sqnr", tuple(NodeStyle("#ff0000", "t") for _ in graph.nodes), style_graph(graph).legend)
        c.set_style(red)
    assert {it.style.fill for it in c.items_by_id} == {"#ff0000"}


def test_the_graph_follows_the_chosen_signature(qtbot, sig_window, sig_pair):
    from inspector.core.tflite.model import Model
    from tests.helpers.gui_helpers import choose_signature

    g = sig_window.features.graph
    ref = Model(sig_pair[1])
    for key in ("prefill", "decode"):
        choose_signature(qtbot, sig_window, key)
        sub = ref.for_signature(key).main
        qtbot.waitUntil(lambda s=sub: g.graphs["B"] is not None and g.graphs["B"].subgraph == s.index
                        and g.view.canvas["B"].graph is g.graphs["B"] and not g._pending, timeout=WAIT_MS)  # fmt: skip
        assert sorted(g.view.canvas["B"].nodes) == list(range(len(sub.ops)))
        assert [g.view.canvas["B"].nodes[i].node.label for i in range(len(sub.ops))] == [op.type for op in sub.ops]


def test_another_subgraph_is_drawn_as_structure_and_back(qtbot, sig_window, sig_pair):
    from inspector.core.tflite.model import Model

    g = sig_window.features.graph
    combo = g.view.subgraph
    qtbot.waitUntil(lambda: g.graphs["B"] is not None and not g._pending, timeout=WAIT_MS)
    main = sig_window.controller.models["B"].main.index
    ref = Model(sig_pair[1])
    others = [sg.index for sg in ref.subgraphs if sg.index != main]
    assert not combo.isHidden() and [combo.itemData(i) for i in range(1, combo.count())] == others
    with qtbot.waitSignal(g.laid_out, timeout=WAIT_MS):
        g.show_subgraph(others[0])
    other = ref.subgraphs[others[0]]
    assert g.graphs["B"].subgraph == other.index
    assert [g.view.canvas["B"].nodes[i].node.label for i in range(len(other.ops))] == [op.type for op in other.ops]
    before = sig_window.controller.selection
    g.click("B", 0)  # another subgraph's op: shown, not the app's selection (its indices are not the compared ones)
    assert sig_window.controller.selection == before and g.view.canvas["B"].selected == 0
    with qtbot.waitSignal(g.laid_out, timeout=WAIT_MS):
        g.show_subgraph(None)
    assert g.graphs["B"].subgraph == main
