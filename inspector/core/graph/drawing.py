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
              link: Callable[[int], str | None] | None = None) -> str:  # fmt: skip
    """The SVG of `model.main` (B seen through the compared signature), coloured by `metric` of
    `result` when given, else its structure."""
    graph = model_graph(model)
    style = style_graph(graph, result, metric, op_badges(model, edited, audit_ops))
    return render_svg(graph, layout_graph(graph), style, link)
