"""Per-op error as Google Model Explorer "node data", to colour the quantized graph by error.

Format (model_explorer/node_data_builder.py, `ModelNodeData.to_json_string`):
    {"<graph id>": {"results": {"<node id>": {"value": <number>}, ...},
                    "gradient": [{"stop": 0, "bgColor": "#..."}, ..., {"stop": 1, "bgColor": "#..."}]}}
For .tflite files Model Explorer's flatbuffer adapter names each subgraph's graph after the
subgraph ("main" for an unnamed subgraph 0, "subgraph_<i>" for others) and gives operator i of
the subgraph the node id "<i>" (auxiliary input/output/constant nodes get ids after the ops), so
a compare layer's `op_index` is its node id. Load the file in Model Explorer's side panel
("Node data") on the quantized model.
"""

from __future__ import annotations

import math
from typing import Any

from inspector.core.compare.result import ComparisonResult
from inspector.core.quantmath.opmath import compared_subgraph
from inspector.core.stats.metric_table import spec
from inspector.core.stats.metrics import METRIC_KEYS
from inspector.core.tflite.model import Model

RED, YELLOW, GREEN = "#d73027", "#fee08b", "#1a9850"


def graph_id(model: Model | None, subgraph: int | None = None) -> str:
    """Model Explorer's graph id of `subgraph` (None: the one the model view compares, `main`)."""
    if model is None:
        return "main" if not subgraph else f"subgraph_{subgraph}"
    if subgraph is None:
        subgraph = model.main.index
    name = model.subgraphs[subgraph].name
    return name or ("main" if subgraph == 0 else f"subgraph_{subgraph}")


def node_data(comparison: ComparisonResult, metric: str = "sqnr_db", *, isolated: bool = False,
              model: Model | None = None) -> dict[str, Any]:  # fmt: skip
    """Model Explorer node data of `metric` per op of the quantized model (accumulated or isolated).

    The graph is the compared subgraph (the comparison's signature's), whatever `model` views.

    Layers whose value is missing or not finite (SQNR of identical tensors) are left out, since
    Model Explorer values must be numbers.
    """
    if metric not in METRIC_KEYS:
        raise ValueError(f"unknown metric {metric!r} (one of {', '.join(METRIC_KEYS)})")
    up = spec(metric).higher_is_better  # the gradient runs red -> green as values grow
    results: dict[str, dict[str, Any]] = {}
    for layer in comparison.layers:
        m = layer.isolated if isolated else layer.metrics
        v = None if m is None else getattr(m, metric)
        if v is None or not math.isfinite(v):
            continue
        key = str(layer.op_index)
        # one op can have several compared outputs: keep the worst
        if key in results:
            old = results[key]["value"]
            v = min(old, v) if up else max(old, v)
        results[key] = {"value": float(v)}
    colors = (RED, YELLOW, GREEN) if up else (GREEN, YELLOW, RED)
    gradient = [{"stop": s, "bgColor": c} for s, c in zip((0, 0.5, 1), colors, strict=True)]
    subgraph = None if model is None else compared_subgraph(model, comparison)
    if model is not None and subgraph is None:
        raise ValueError(f"{model.path} has no signature '{comparison.signature}' (the comparison's)")
    return {graph_id(model, subgraph): {"results": results, "gradient": gradient}}
