"""A layered top-to-bottom layout of a `ModelGraph`: igraph's Sugiyama layout (C core: layers by
longest path, crossings reduced by the barycenter heuristic, long edges routed through bends).

Coordinates are in drawing units (pixels at zoom 1): node centres and edge polylines from the
bottom of the producer to the top of the reader. The SVG export, the report and the GUI all
draw this one layout.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from inspector.core.graph.structure import ModelGraph

NODE_W, NODE_H = 150.0, 38.0  # op boxes
PORT_W, PORT_H = NODE_W, 26.0  # input / output boxes
COL, ROW = NODE_W + 28.0, NODE_H + 46.0  # distance between neighbour columns / layers
MARGIN = 20.0


@dataclass(frozen=True)
class GraphLayout:
    centres: tuple[tuple[float, float], ...]  # per node id
    sizes: tuple[tuple[float, float], ...]  # (width, height) per node id
    edges: tuple[tuple[tuple[float, float], ...], ...]  # polyline per edge, same order as graph.edges
    width: float
    height: float
    seconds: float = 0.0  # how long the layout took

    def box(self, node: int) -> tuple[float, float, float, float]:
        """(x, y, w, h) of node `node`'s box."""
        (cx, cy), (w, h) = self.centres[node], self.sizes[node]
        return cx - w / 2, cy - h / 2, w, h


def layout_graph(graph: ModelGraph, maxiter: int = 100) -> GraphLayout:
    """Lay `graph` out top to bottom (inputs at the top, outputs at the bottom)."""
    import igraph

    t0 = time.perf_counter()
    n = len(graph.nodes)
    sizes = tuple((NODE_W, NODE_H) if nd.kind == "op" else (PORT_W, PORT_H) for nd in graph.nodes)
    if n == 0:
        return GraphLayout((), (), (), 2 * MARGIN, 2 * MARGIN, time.perf_counter() - t0)
    g = igraph.Graph(n=n, edges=[(e.src, e.dst) for e in graph.edges], directed=True)
    lay = g.layout_sugiyama(hgap=2, vgap=1, maxiter=maxiter)  # x in half columns: igraph centres on half units
    routing = [[(float(b[0]), float(b[1])) for b in r] for r in (getattr(lay, "edge_routing", None) or [[] for _ in graph.edges])]
    xs, ys = _spread([float(c[0]) for c in lay.coords[:n]], [float(c[1]) for c in lay.coords[:n]], routing)
    x0, y0 = min(xs), min(ys)

    def place(x: float, y: float) -> tuple[float, float]:
        return MARGIN + NODE_W / 2 + (x - x0) * COL / 2, MARGIN + NODE_H / 2 + (y - y0) * ROW

    centres = tuple(place(x, y) for x, y in zip(xs, ys, strict=True))
    lines = []
    for e, bends in zip(graph.edges, routing, strict=True):
        (sx, sy), (dx, dy) = centres[e.src], centres[e.dst]
        pts = [(sx, sy + sizes[e.src][1] / 2)]
        pts += [place(bx, by) for bx, by in bends]
        pts.append((dx, dy - sizes[e.dst][1] / 2))
        lines.append(tuple(pts))
    bend_x = [x for line in lines for x, _ in line]
    width = max([cx + w / 2 for (cx, _), (w, _) in zip(centres, sizes, strict=True)] + bend_x) + MARGIN
    height = max(cy + h / 2 for (_, cy), (_, h) in zip(centres, sizes, strict=True)) + MARGIN
    return GraphLayout(centres, sizes, tuple(lines), width, height, time.perf_counter() - t0)


def _spread(xs: list[float], ys: list[float], routing: list[list[tuple[float, float]]]) -> tuple[list[float], list[float]]:
    """Push apart, row by row and keeping their order, nodes closer than one column (2 units)
    and bends closer than half a column to anything: igraph's compaction leaves some neighbours
    one unit apart. `routing` is updated in place."""
    rows: dict[float, list[tuple[float, int, int, int]]] = {}  # y -> (x, is_bend, node or edge, bend)
    for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
        rows.setdefault(y, []).append((x, 0, i, -1))
    for e, bends in enumerate(routing):
        for k, (x, y) in enumerate(bends):
            rows.setdefault(y, []).append((x, 1, e, k))
    xs = list(xs)
    for y, items in rows.items():
        items.sort()
        last_x, last_bend = None, 1
        for x, bend, i, k in items:
            if last_x is not None:
                x = max(x, last_x + (1.0 if bend or last_bend else 2.0))
            if bend:
                routing[i][k] = (x, y)
            else:
                xs[i] = x
            last_x, last_bend = x, bend
    return xs, ys

