"""The graph feature: B's compared subgraph (A's beside it on demand) as a layered drawing of ops
and tensors, coloured by the comparison, linked to the app's selection (`GraphController`)."""

from inspector.gui.graph.controller import GraphController

__all__ = ["GraphController"]
