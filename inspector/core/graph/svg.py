"""The model graph as one SVG document (the CLI's `graph --svg` and the HTML report draw it).

Each op is one `<g class="op" data-op="N" fill="#rrggbb">` (N = B's op index) holding its
`<title>` (op, tensor, metric value, cause), its box, label and badges; inputs and outputs are
`<g class="input|output">`, edges `<path class="edge" data-tensor="T">` with the tensor's
shape, dtype, scale and zero point in their title. A legend sits above the graph. `link(op)`
(optional) wraps each op in an `<a href>` (the report links ops to their sections).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from html import escape

from inspector.core.graph.layout import GraphLayout
from inspector.core.graph.structure import ModelGraph
from inspector.core.graph.style import BADGES, GraphStyle

LEGEND_ROW = 22.0
LEGEND_W = 720.0  # the legend's width: narrow graphs get this much room
_FONT = "font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif"


@lru_cache(maxsize=256)  # a graph has a few dozen distinct fills; 1,500 nodes restyled at once
def text_colour(fill: str) -> str:
    """Black or white, whichever reads better on `fill` (relative luminance)."""
    r, g, b = (int(fill[k : k + 2], 16) / 255 for k in (1, 3, 5))
    return "#ffffff" if 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.45 else "#1a1a1a"


def tensor_title(graph: ModelGraph, t: int) -> str:
    """An edge's tooltip: the tensor's name, dtype, shape, scale and zero point."""
    ten = graph.tensors[t]
    q = ten.quantization
    if q is None:
        qs = "not quantized"
    elif len(q.scales) == 1:
        qs = f"scale {q.scales[0]:.6g}, zero point {q.zero_points[0]}"
    elif q.scales:
        qs = f"per-channel: {len(q.scales)} scales {min(q.scales):.4g}..{max(q.scales):.4g}"
    else:
        qs = "blockwise"
    return f"tensor {t} {ten.name.split(';')[0]}\n{ten.dtype} {list(ten.shape)}\n{qs}"


def _fit(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _legend(style: GraphStyle, width: float) -> tuple[str, float]:
    """The legend (colours, then badges and the constant-input mark), wrapped to `width`."""
    parts = [f'<text x="8" y="15" font-size="12" font-weight="600">{escape(style.legend.title)}</text>']
    x, y = 8.0, LEGEND_ROW + 4

    def place(w: float) -> tuple[float, float]:
        nonlocal x, y
        if x + w > width and x > 8:
            x, y = 8.0, y + LEGEND_ROW
        at = (x, y)
        x += w
        return at

    for label, fill in style.legend.items:
        lx, ly = place(26 + 6.4 * len(label))
        parts.append(f'<rect x="{lx:.0f}" y="{ly:.0f}" width="14" height="14" fill="{fill}" stroke="#555" stroke-width="0.5"/>'
                     f'<text x="{lx + 19:.0f}" y="{ly + 11:.0f}" font-size="11">{escape(label)}</text>')  # fmt: skip
    x, y = 8.0, y + LEGEND_ROW
    for letter, colour, meaning in BADGES.values():
        lx, ly = place(30 + 6.2 * len(meaning))
        parts.append(f'<circle cx="{lx + 7:.0f}" cy="{ly + 7:.0f}" r="7" fill="{colour}"/>'
                     f'<text x="{lx + 7:.0f}" y="{ly + 11:.0f}" font-size="10" fill="#fff" text-anchor="middle">{escape(letter)}</text>'
                     f'<text x="{lx + 19:.0f}" y="{ly + 11:.0f}" font-size="11">{escape(meaning)}</text>')  # fmt: skip
    lx, ly = place(200)
    parts.append(f'<rect x="{lx:.0f}" y="{ly + 3:.0f}" width="7" height="7" fill="#444"/>'
                 f'<text x="{lx + 12:.0f}" y="{ly + 11:.0f}" font-size="11">has constant inputs (weights)</text>')  # fmt: skip
    return f'<g class="legend">{"".join(parts)}</g>', y + LEGEND_ROW + 6


def render_svg(graph: ModelGraph, layout: GraphLayout, style: GraphStyle, link: Callable[[int], str | None] | None = None) -> str:
    """The SVG document (UTF-8 text) of `graph` drawn at `layout` with `style`."""
    width = max(layout.width, LEGEND_W)
    legend, top = _legend(style, width)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="model-graph" width="{width:.0f}" '
           f'height="{layout.height + top:.0f}" viewBox="0 0 {width:.0f} {layout.height + top:.0f}" style="{_FONT}">',
           '<defs><marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" orient="auto">'
           '<path d="M0,0 L8,4 L0,8 z" fill="#777"/></marker></defs>', legend,
           f'<g transform="translate(0,{top:.0f})">', '<g class="edges" fill="none" stroke="#8a8a8a" stroke-width="1.2">']  # fmt: skip
    for e, pts in zip(graph.edges, layout.edges, strict=True):
        d = "M" + " L".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        out.append(f'<path class="edge" data-tensor="{e.tensor}" d="{d}" marker-end="url(#arrow)">'
                   f"<title>{escape(tensor_title(graph, e.tensor))}</title></path>")  # fmt: skip
    out.append('</g><g class="nodes">')
    for node, st in zip(graph.nodes, style.nodes, strict=True):
        x, y, w, h = layout.box(node.id)
        title = f"<title>{escape(st.title)}</title>"
        if node.kind != "op":
            out.append(f'<g class="{node.kind}" data-tensor="{node.tensor}" fill="{st.fill}">{title}'
                       f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.0f}" height="{h:.0f}" rx="{h / 2:.0f}" stroke="#222" stroke-width="2"/>'
                       f'<text x="{x + w / 2:.1f}" y="{y + h / 2 + 4:.1f}" font-size="10" fill="#1a1a1a" text-anchor="middle">'
                       f"{escape(node.kind)}: {escape(_fit(node.name, 17))}</text></g>")  # fmt: skip
            continue
        ink = text_colour(st.fill)
        body = (f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.0f}" height="{h:.0f}" rx="4" stroke="#333" stroke-width="0.8"/>'
                f'<text x="{x + w / 2:.1f}" y="{y + 15:.1f}" font-size="{12 if len(node.label) <= 16 else 10}" font-weight="600" '
                f'fill="{ink}" text-anchor="middle">{escape(_fit(node.label, 22))}</text>'
                f'<text x="{x + w / 2:.1f}" y="{y + 30:.1f}" font-size="10" fill="{ink}" text-anchor="middle">'
                f"#{node.op_index} {escape(_fit(node.name, 17))}</text>")  # fmt: skip
        if node.constants:
            body += f'<rect x="{x + 3:.1f}" y="{y + h - 10:.1f}" width="7" height="7" fill="#444"/>'
        for k, b in enumerate(st.badges):
            letter, colour, _ = BADGES[b]
            cx = x + w - 7 - 15 * k
            body += (f'<circle cx="{cx:.1f}" cy="{y:.1f}" r="7" fill="{colour}" stroke="#fff"/>'
                     f'<text x="{cx:.1f}" y="{y + 3.5:.1f}" font-size="9" fill="#fff" text-anchor="middle">{escape(letter)}</text>')  # fmt: skip
        g = f'<g class="op" data-op="{node.op_index}" fill="{st.fill}">{title}{body}</g>'
        href = link(node.op_index) if link is not None and node.op_index is not None else None
        out.append(f'<a href="{escape(href)}">{g}</a>' if href else g)
    out.append("</g></g></svg>")
    return "\n".join(out) + "\n"
