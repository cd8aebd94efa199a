"""How each node of a model graph looks: its fill (a metric of a comparison on its scale, or the
diagnosed cause), the value and cause its tooltip states, badges, and the legend. Structure only
(no comparison): ops are grey, inputs and outputs keep their own look.

Badges: `edited` (changed in the current version of B), `float` (computes in float inside a
quantized model), `fixed` (fixed output parameters: SOFTMAX, LOGISTIC, TANH), `audit` (the audit
found something). The caller passes the edited ops and the audit's ops (they live above this
package).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterable
from dataclasses import dataclass

from inspector.core.compare.result import ComparisonResult, LayerResult
from inspector.core.graph.metric_names import METRICS
from inspector.core.graph.scales import (
    CAUSE_FILLS,
    METRIC_LABELS,
    NO_DATA,
    RAMP,
    SCALES,
    Scale,
    cause_fill,
    metric_text,
    metric_value,
    ramp_colour,
)
from inspector.core.graph.structure import ModelGraph
from inspector.core.progress import paced
from inspector.core.quantmath.opmath import fixed_output_params
from inspector.core.stats.ranking import worst
from inspector.core.tflite.model import Model

BADGES = {"edited": ("E", "#1b7837", "edited in the current version"), "float": ("F", "#2166ac", "runs in float"),
          "fixed": ("X", "#762a83", "fixed output scale / zero point"), "audit": ("!", "#d6604d", "audit finding")}  # fmt: skip
INPUT_FILL, OUTPUT_FILL = "#ffffff", "#ffffff"
_FLOAT = frozenset({"float32", "float16", "float64", "bfloat16"})


@dataclass(frozen=True)
class NodeStyle:
    fill: str
    title: str  # the tooltip: op, tensor, metric value, cause
    value: float | None = None
    cause: str | None = None
    badges: tuple[str, ...] = ()


@dataclass(frozen=True)
class Legend:
    title: str
    items: tuple[tuple[str, str], ...]  # (label, fill), bad first for a scale


@dataclass(frozen=True)
class GraphStyle:
    metric: str | None  # None: structure only
    nodes: tuple[NodeStyle, ...]  # per node id
    legend: Legend
    worst_op: int | None = None  # B's op index of the worst op by the metric


_model_badges: dict[int, dict[int, tuple[str, ...]]] = {}


def _own_badges(model: Model) -> dict[int, tuple[str, ...]]:
    """The badges the model alone decides ("float", "fixed") per op, made once per model (the
    graph restyles a 1,500-op model several times when a new version arrives)."""
    key = id(model)
    hit = _model_badges.get(key)
    if hit is not None:
        return hit
    sg = model.main
    quantized = any(t.is_quantized and t.dtype not in _FLOAT and not t.is_constant for t in sg.tensors)
    out: dict[int, tuple[str, ...]] = {}
    for op in sg.ops:
        b = []
        outs = [sg.tensors[o] for o in op.outputs if o >= 0]
        if quantized and op.type != "DEQUANTIZE" and outs and outs[0].dtype in _FLOAT:
            b.append("float")
        if fixed_output_params(op, sg) is not None:
            b.append("fixed")
        if b:
            out[op.index] = tuple(b)
    if key not in _model_badges:
        _model_badges[key] = out
        weakref.finalize(model, _model_badges.pop, key, None)
    return out


def op_badges(model: Model, edited: Iterable[int] = (), audit_ops: Iterable[int] = ()) -> dict[int, tuple[str, ...]]:
    """Badges per op index of `model.main`: "edited", "float", "fixed", "audit" (in that order)."""
    own = _own_badges(model)
    edited, audit_ops = set(edited), set(audit_ops)
    out: dict[int, tuple[str, ...]] = {}
    for op in {*own, *(i for i in edited if 0 <= i < len(model.main.ops)), *(i for i in audit_ops if 0 <= i < len(model.main.ops))}:
        b = (("edited",) if op in edited else ()) + own.get(op, ()) + (("audit",) if op in audit_ops else ())
        if b:
            out[op] = b
    return dict(sorted(out.items()))


def _tensor_line(graph: ModelGraph, t: int | None) -> str:
    if t is None:
        return ""
    ten = graph.tensors[t]
    q = ten.quantization
    qs = f" S={q.scales[0]:.4g} Z={q.zero_points[0]}" if q is not None and len(q.scales) == 1 else ""
    qs = f" per-channel ({len(q.scales)} scales)" if q is not None and len(q.scales) > 1 else qs
    return f"tensor {ten.name.split(';')[0]} {ten.dtype}{list(ten.shape)}{qs}"


def style_graph(graph: ModelGraph, result: ComparisonResult | None = None, metric: str = "sqnr",
                badges: dict[int, tuple[str, ...]] | None = None) -> GraphStyle:  # fmt: skip
    """Styles of every node; `result` None: structure only (grey ops, no legend scale)."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; one of {', '.join(METRICS)}")
    badges = badges or {}
    styles = []
    ranked_ops: list[int] = []  # the ops that can be the worst, and the value each ranks by
    ranked_values: list[float | None] = []
    for node in paced(graph.nodes):
        tline = _tensor_line(graph, node.tensor)
        if node.kind != "op":
            styles.append(NodeStyle(INPUT_FILL if node.kind == "input" else OUTPUT_FILL, f"model {node.kind}\n{tline}"))
            continue
        op = node.op_index
        assert op is not None  # every op node names its op (`structure.model_graph`)
        lines = [f"op {op} {node.label}", tline]
        if node.constants:
            lines.append(f"{len(node.constants)} constant input(s): " + ", ".join(
                f"{graph.tensors[c].dtype}{list(graph.tensors[c].shape)}" for c in node.constants[:4]))  # fmt: skip
        layer = None if result is None else result.layer_for_op(op)
        value = cause = None
        fill = NO_DATA
        if layer is not None:
            d = layer.diagnosis
            cause = None if d is None else d.cause
            if metric == "cause":
                fill = cause_fill(cause)
                if cause not in (None, "none", "inherited"):
                    ranked_ops.append(op)
                    ranked_values.append(cause_rank_value(layer))
            else:
                value = metric_value(layer, metric)
                pos = SCALES[metric].position(value)
                fill = NO_DATA if pos is None else ramp_colour(pos)
                ranked_ops.append(op)
                ranked_values.append(value)
            acc = layer.metrics.sqnr_db
            lines.append(f"{METRIC_LABELS[metric] if metric != 'cause' else METRIC_LABELS['sqnr']}: "
                         f"{metric_text(value if metric != 'cause' else acc, 'sqnr' if metric == 'cause' else metric)}")  # fmt: skip
            if d is not None:
                lines.append(f"cause: {d.cause} — {d.evidence}" + (f" (fix: {d.fix.edit} on op {', '.join(map(str, d.fix.ops))})" if d.fix else ""))
        elif result is not None:
            lines.append("not compared")
        b = badges.get(op, ())  # no badge: the empty tuple
        lines += [BADGES[k][2] for k in b]
        styles.append(NodeStyle(fill, "\n".join(x for x in lines if x), value, cause, b))
    higher = True if metric == "cause" else SCALES[metric].good > SCALES[metric].bad
    at = worst(ranked_values, higher_is_better=higher)  # by the metric's own value, not its colour
    return GraphStyle(None if result is None else metric, tuple(styles), legend(metric if result is not None else None),
                      None if at is None else ranked_ops[at])  # fmt: skip


def cause_rank_value(layer: LayerResult) -> float | None:
    """What ranks the layers that have a cause of their own (higher is better): the negated
    measured blame when the diagnosis has one (the share of the output's error the layer is to
    blame for, ranked below every SQNR), else the layer's own (isolated) SQNR, else (no isolated figure, or an infinite
    one: a same-scale op holding the model input's range, which the diagnosis judges on its
    accumulated error) its accumulated SQNR. A deep layer that inherits most of its error never
    outranks the layer that causes it."""
    d = layer.diagnosis
    blame = None if d is None else d.blame
    if blame is not None and not math.isnan(blame.share):
        return -1e6 * (1.0 + blame.share)  # measured: below every SQNR, the largest share lowest
    own = layer.isolated.sqnr_db if layer.isolated is not None else None
    return own if own is not None and math.isfinite(own) else float(layer.metrics.sqnr_db)


def legend(metric: str | None) -> Legend:
    """The legend of `metric`'s colours (None: structure only)."""
    if metric is None:
        return Legend("structure (no comparison yet)", (("op", NO_DATA),))
    if metric == "cause":
        return Legend(METRIC_LABELS["cause"], tuple((c, f) for c, f in CAUSE_FILLS.items()) + (("not compared", NO_DATA),))
    s = SCALES[metric]
    mid_bad = _between(s, s.bad, s.centre)
    mid_good = _between(s, s.centre, s.good)
    vals = (s.bad, mid_bad, s.centre, mid_good, s.good)
    labels = [metric_text(v, metric) for v in vals]
    labels[0], labels[-1] = "≤ " + labels[0] if s.good > s.bad else "≥ " + labels[0], ("≥ " if s.good > s.bad else "≤ ") + labels[-1]
    labels[2] += " (diagnosis threshold)"
    return Legend(METRIC_LABELS[metric], tuple(zip(labels, RAMP, strict=True)) + (("not compared", NO_DATA),))


def _between(s: Scale, a: float, b: float) -> float:
    return math.sqrt(a * b) if s.log else (a + b) / 2


def float_side(result: ComparisonResult) -> ComparisonResult:
    """`result` indexed by A's op indices (each layer's `float_op_index`): colours A's graph with
    the error measured at its paired op of B. Layers without an op of A are left out."""
    import dataclasses

    layers = tuple(dataclasses.replace(lay, op_index=lay.float_op_index) for lay in result.layers if lay.float_op_index is not None)
    return dataclasses.replace(result, layers=layers)
