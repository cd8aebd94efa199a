"""The compared subgraph as a graph: one node per op (B's op index), one per graph input and
output, one edge per tensor from its producer to each reader.

Constant inputs (weights, biases) are not drawn as nodes (they would double a transformer's node
count); each op lists them (`GraphNode.constants`) and the drawing marks ops that have them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from inspector.core.progress import paced
from inspector.core.tflite.model import Model, Subgraph, Tensor

KINDS = ("op", "input", "output")


@dataclass(frozen=True)
class GraphNode:
    id: int  # position in `ModelGraph.nodes`
    kind: str  # one of KINDS
    label: str  # op type, or the input / output tensor's short name
    name: str  # short name of the op's first output tensor (or the tensor's)
    op_index: int | None = None  # B's op index (op nodes)
    tensor: int | None = None  # the op's first output tensor / the input or output tensor
    constants: tuple[int, ...] = ()  # constant input tensors of an op


@dataclass(frozen=True)
class GraphEdge:
    src: int  # node ids
    dst: int
    tensor: int


@dataclass(frozen=True)
class ModelGraph:
    subgraph: int
    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]
    tensors: tuple[Tensor, ...]  # the subgraph's tensors (edge tooltips)

    def node_of_op(self) -> dict[int, int]:
        """B's op index -> node id."""
        return {n.op_index: n.id for n in self.nodes if n.op_index is not None}

    @cached_property
    def op_count(self) -> int:
        return sum(1 for n in self.nodes if n.kind == "op")  # once per graph (asked for at every restyle)


def short_name(tensor_name: str) -> str:
    """'model/block_2/conv/BiasAdd;model/...' -> 'block_2/conv': the layer, without the model's
    name before it and the step after it."""
    first = tensor_name.split(";")[0]
    parts = [p for p in first.split("/") if p]
    if len(parts) < 2:
        return first
    return "/".join(parts[1:-1][-2:]) if len(parts) > 2 else parts[0]


def model_graph(model: Model, subgraph: int | None = None) -> ModelGraph:
    """The graph of `model.main` (the chosen signature's subgraph, else subgraph 0), or of
    subgraph `subgraph` (a control-flow body, another signature's)."""
    return subgraph_graph(model.main if subgraph is None else model.subgraphs[subgraph])


def subgraph_graph(sg: Subgraph) -> ModelGraph:
    nodes: list[GraphNode] = []
    edges: list[GraphEdge] = []
    source: dict[int, int] = {}  # tensor -> node that provides it
    for t in sg.inputs:
        if t >= 0:
            source[t] = len(nodes)
            nodes.append(GraphNode(len(nodes), "input", "input", short_name(sg.tensors[t].name), tensor=t))
    for op in paced(sg.ops):
        me = len(nodes)
        outs = [o for o in op.outputs if o >= 0]
        first = outs[0] if outs else None
        consts = tuple(i for i in op.inputs if i >= 0 and i not in source and sg.tensors[i].is_constant)
        name = short_name(sg.tensors[first].name) if first is not None else ""
        nodes.append(GraphNode(me, "op", op.type, name, op.index, first, consts))
        seen: set[int] = set()
        for i in op.inputs:
            if i >= 0 and i in source and i not in seen:
                seen.add(i)
                edges.append(GraphEdge(source[i], me, i))
        for o in outs:
            source[o] = me
    for t in sg.outputs:
        if t >= 0:
            me = len(nodes)
            nodes.append(GraphNode(me, "output", "output", short_name(sg.tensors[t].name), tensor=t))
            if t in source:
                edges.append(GraphEdge(source[t], me, t))
    return ModelGraph(sg.index, tuple(nodes), tuple(edges), sg.tensors)
