"""The graph view: model B's chosen subgraph (and A's beside it) drawn from `core.graph`'s
layout, coloured by the comparison, linked to the app's selection (`install_graph`)."""

from inspector.gui.graph.controller import install_graph

__all__ = ["install_graph"]
