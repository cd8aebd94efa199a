"""One name per layer, the same in the plan rows, the versions and Suggest's text: B's op index
and a short tensor name that tells this op from every other op of the subgraph.

Converter tensor names are paths ('model/conv2_1/Relu;model/conv2_1/BiasAdd'); the layer is the
part before the last step ('conv2'). Keras numbers repeated layers ('activation', 'activation_1',
'activation_2'), so stripping the suffix alone named three convs "activation": a suffix, then
more of the path, then the whole name are added until the name is unique in the subgraph.
"""

from __future__ import annotations

import re
from collections import Counter

from inspector.core.tflite.model import Model, Subgraph


def _candidates(sg: Subgraph, op_index: int) -> list[str]:
    """Names of op `op_index`, shortest first."""
    op = sg.ops[op_index]
    outs = [sg.tensors[o].name for o in op.outputs if o >= 0]
    full = outs[0] if outs else ""
    first = full.split(";")[0]
    parts = [p for p in first.split("/") if p]
    if len(parts) < 2:
        return [op.type.lower(), *(n for n in (first, full) if n)]
    layer = parts[-2]
    return [re.sub(r"_\d+$", "", layer) or layer, layer, "/".join(parts[-3:-1]), first, full]


def distinct_names(sg: Subgraph) -> list[str]:
    """Per op of `sg`: its shortest name that no other op of `sg` shares at the same length.
    Counted once per (length, name): O(ops), where comparing every op with every other took
    11 s on the GUI thread for a 1,500-op model."""
    cands = [_candidates(sg, i) for i in range(len(sg.ops))]
    counts = Counter((level, c) for mine in cands for level, c in enumerate(mine))
    out = []
    for mine in cands:
        out.append(next((c for level, c in enumerate(mine) if counts[(level, c)] == 1), mine[-1]))
    return out


_cache: dict[int, tuple[Subgraph, list[str]]] = {}


def layer_short_name(model: Model, op_index: int) -> str:
    """The distinguishing tensor name of op `op_index` of the model's chosen subgraph ('conv2',
    'activation_1'); 'op N' when there is no such op."""
    sg = model.main
    if not 0 <= op_index < len(sg.ops):
        return f"op {op_index}"
    hit = _cache.get(id(sg))
    if hit is None or hit[0] is not sg:
        hit = (sg, distinct_names(sg))
        if len(_cache) >= 8:  # A's and B's and a few versions': no growth over a session
            _cache.clear()
        _cache[id(sg)] = hit
    return hit[1][op_index]


def layer_name(model: Model, op_index: int) -> str:
    """'op 12 activation_1': B's op index (the layer identity everywhere) and its distinguishing
    name; 'op 12' alone when the model has no such op."""
    if not 0 <= op_index < len(model.main.ops):
        return f"op {op_index}"
    return f"op {op_index} {layer_short_name(model, op_index)}"
