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
    lay = g.layout_sugiyama(hgap=1, vgap=1, maxiter=maxiter)
    xs = [float(c[0]) for c in lay.coords[:n]]
    ys = [float(c[1]) for c in lay.coords[:n]]
    x0, y0 = min(xs), min(ys)

    def place(x: float, y: float) -> tuple[float, float]:
        return MARGIN + NODE_W / 2 + (x - x0) * COL, MARGIN + NODE_H / 2 + (y - y0) * ROW

    centres = tuple(place(x, y) for x, y in zip(xs, ys, strict=True))
    routing = getattr(lay, "edge_routing", None) or [[] for _ in graph.edges]
    lines = []
    for e, bends in zip(graph.edges, routing, strict=True):
        (sx, sy), (dx, dy) = centres[e.src], centres[e.dst]
        pts = [(sx, sy + sizes[e.src][1] / 2)]
        pts += [place(float(b[0]), float(b[1])) for b in bends]
        pts.append((dx, dy - sizes[e.dst][1] / 2))
        lines.append(tuple(pts))
    bend_x = [x for line in lines for x, _ in line]
    width = max([cx + w / 2 for (cx, _), (w, _) in zip(centres, sizes, strict=True)] + bend_x) + MARGIN
    height = max(cy + h / 2 for (_, cy), (_, h) in zip(centres, sizes, strict=True)) + MARGIN
    return GraphLayout(centres, sizes, tuple(lines), width, height, time.perf_counter() - t0)
