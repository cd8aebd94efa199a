"""One call from a model (and optionally its comparison) to the graph's SVG: what the CLI and
the report use."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from inspector.core.compare.result import ComparisonResult
from inspector.core.graph.layout import layout_graph
from inspector.core.graph.structure import model_graph
from inspector.core.graph.style import op_badges, style_graph
from inspector.core.graph.svg import render_svg
from inspector.core.tflite.model import Model


def graph_svg(model: Model, result: ComparisonResult | None = None, metric: str = "sqnr", *,
              edited: Iterable[int] = (), audit_ops: Iterable[int] = (),
              link: Callable[[int], str | None] | None = None, subgraph: int | None = None) -> str:  # fmt: skip
    """The SVG of `model.main` (B seen through the compared signature), coloured by `metric` of
    `result` when given, else its structure; `subgraph`: another subgraph's structure."""
    graph = model_graph(model, subgraph)
    other = subgraph is not None and subgraph != model.main.index
    badges = {} if other else op_badges(model, edited, audit_ops)  # (badges and colours index the compared subgraph)
    style = style_graph(graph, None if other else result, metric, badges)
    return render_svg(graph, layout_graph(graph), style, link)
