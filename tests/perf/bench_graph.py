"""The graph view at scale: layout, SVG and drawing times for ~100, 1,500 and 5,000 ops.

    .venv/bin/python tests/perf/bench_graph.py

Synthetic transformer-like graphs (13 ops a block: layer norm, three projections, two matmuls,
softmax, output projection, residual add, feed-forward with GELU, residual add) of ~100, 1,500
and 5,000 ops, and the converter-built 32-block transformer of `tests/helpers/graph_fixtures.py`
(~1,460 int8 ops, built once and cached). Per graph: igraph's Sugiyama layout, the styled SVG,
and in an offscreen Qt view at 1280x800 building the items (all at once; then as the app does, in
slices between events: the longest slice and the one-off index build), the first paint fitted (boxes only),
a paint at reading zoom (labels) and the mean time per frame of a 20-step pan.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
sys.path[:0] = [str(REPO)]
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from inspector.core.graph.layout import layout_graph  # noqa: E402
from inspector.core.graph.structure import GraphEdge, GraphNode, ModelGraph, model_graph  # noqa: E402
from inspector.core.graph.style import style_graph  # noqa: E402
from inspector.core.graph.svg import render_svg  # noqa: E402
from inspector.core.tflite.model import Tensor  # noqa: E402

BLOCK = (("LAYER_NORM", (-1,)), ("FULLY_CONNECTED", (0,)), ("FULLY_CONNECTED", (0,)), ("FULLY_CONNECTED", (0,)),
         ("BATCH_MATMUL", (1, 2)), ("SOFTMAX", (4,)), ("BATCH_MATMUL", (5, 3)), ("FULLY_CONNECTED", (6,)),
         ("ADD", (-1, 7)), ("FULLY_CONNECTED", (8,)), ("GELU", (9,)), ("FULLY_CONNECTED", (10,)), ("ADD", (8, 11)))  # fmt: skip


def synthetic(n_ops: int) -> ModelGraph:
    """~n_ops ops in transformer blocks (-1: the block's input)."""
    tensors, nodes, edges = [], [], []

    def tensor() -> int:
        tensors.append(Tensor(0, len(tensors), f"t{len(tensors)}", "int8", (1, 16, 64), (1, 16, 64), 0, 0, False, None))
        return len(tensors) - 1

    t_in = tensor()
    nodes.append(GraphNode(0, "input", "input", "tokens", tensor=t_in))
    src = (0, t_in)  # node, tensor of the block input
    op = 0
    while op < n_ops:
        made: list[tuple[int, int]] = []
        for typ, ins in BLOCK:
            t = tensor()
            me = len(nodes)
            nodes.append(GraphNode(me, "op", typ, f"block{op // 13}/{typ.lower()}", op, t))
            for i in ins:
                s = src if i < 0 else made[i]
                edges.append(GraphEdge(s[0], me, s[1]))
            made.append((me, t))
            op += 1
        src = made[-1]
    nodes.append(GraphNode(len(nodes), "output", "output", "logits", tensor=src[1]))
    edges.append(GraphEdge(src[0], len(nodes) - 1, src[1]))
    return ModelGraph(0, tuple(nodes), tuple(edges), tuple(tensors))


def _qt_times(graph, layout, style) -> dict[str, float]:
    from PySide6.QtCore import QCoreApplication, QEvent

    from inspector.gui.app import make_app
    from inspector.gui.graph.canvas import GraphCanvas

    make_app()
    c = GraphCanvas()
    c.resize(1280, 800)
    c.show()
    QCoreApplication.processEvents()
    t0 = time.perf_counter()
    c.show_graph(graph, layout, style, incremental=False)
    items = time.perf_counter() - t0
    c.clear()  # (dropping a scene of 11,000 items takes a moment of its own: not counted below)
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QCoreApplication.processEvents()
    # as the app does it: items added in slices between events; the longest the loop waits
    done, gaps, last = [], [], [time.perf_counter()]
    c.shown.connect(lambda: done.append(1))
    c.show_graph(graph, layout, style)
    gaps.append(time.perf_counter() - last[0])
    last[0] = time.perf_counter()
    while not done:
        QCoreApplication.processEvents()
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now
    c.scene().items(c.sceneRect())  # the index is built once, at the first paint or lookup
    index = time.perf_counter() - last[0]
    c.fit_whole()
    t0 = time.perf_counter()
    c.viewport().repaint()
    fitted = time.perf_counter() - t0
    c.resetTransform()
    c.centerOn(c.items_by_id[len(c.items_by_id) // 2])
    t0 = time.perf_counter()
    c.viewport().repaint()
    labelled = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(20):
        c.verticalScrollBar().setValue(c.verticalScrollBar().value() + 40)
        c.viewport().repaint()
    pan = (time.perf_counter() - t0) / 20
    c.close()
    c.deleteLater()
    QCoreApplication.processEvents()
    return {"items": items, "fitted": fitted, "labelled": labelled, "pan": pan, "slice": max(gaps), "index": index}


def bench(label: str, graph: ModelGraph) -> None:
    layout = layout_graph(graph)
    style = style_graph(graph)
    t0 = time.perf_counter()
    svg = render_svg(graph, layout, style)
    t_svg = time.perf_counter() - t0
    q = _qt_times(graph, layout, style)
    print(f"{label:<34} {graph.op_count:>5} ops {len(graph.edges):>5} edges | layout {layout.seconds:6.3f} s | "
          f"SVG {t_svg:6.3f} s {len(svg) / 1e6:5.2f} MB | Qt items {q['items']:6.3f} s, first paint fitted {q['fitted']:6.3f} s, "
          f"labelled {q['labelled']:6.3f} s, pan {1000 * q['pan']:5.1f} ms/frame | GUI thread held at most "
          f"{1000 * q['slice']:4.0f} ms while adding items, {1000 * q['index']:4.0f} ms indexing them", flush=True)  # fmt: skip


def main() -> None:
    for n in (100, 1500, 5000):
        bench(f"synthetic transformer ~{n}", synthetic(n))
    from inspector.core.tflite.model import load_model
    from tests.helpers.graph_fixtures import deep_transformer

    path = deep_transformer(REPO / ".fixture-cache", 32, "int8")
    t0 = time.perf_counter()
    graph = model_graph(load_model(path))
    print(f"converter transformer (32 blocks, int8): graph built from the file in {time.perf_counter() - t0:.3f} s")
    bench("converter transformer32 int8", graph)


if __name__ == "__main__":
    main()
