"""What a comparison measures: the matched layers, the model outputs and what is unmatched.

A layer is an output tensor of a quantized-model op other than QUANTIZE/DEQUANTIZE that has a
float counterpart of the same shape, in the quantized model's execution order. Each gets a
TensorStats set up with the quantized tensor's scale and representable range (per channel when
it is quantized per channel) and per-channel SQNR along the last axis for conv/FC outputs, and
per-channel ranges and SQNR along the channel axis of every tensor (`inside`); a CONCATENATION /
PACK output, and a model output read from one, also keeps sums per index of its axis.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from inspector.core.compare.concat_layout import ConcatLayout, op_layout, output_layout
from inspector.core.compare.pairing import TRANSPARENT_OPS, Pairing
from inspector.core.quantmath.quant import representable_range
from inspector.core.stats.metrics import TensorStats
from inspector.core.tflite.dtypes import INT_LIMITS
from inspector.core.tflite.model import Model, Quantization, Tensor
from inspector.core.tflite.op_facts import PER_CHANNEL_SQNR_OPS

_OPAQUE = ("string", "resource", "variant")


def int_quant(t: Tensor) -> Quantization | None:
    """The tensor's quantization when it holds quantized integers, else None."""
    if t.quantization is not None and t.quantization.blockwise is None and t.dtype in INT_LIMITS:
        return t.quantization  # blockwise tensors are constant weights, never compared activations
    return None


def make_stats(
    scale_source: Tensor, shape: tuple[int, ...], op_type: str | None, ranges: bool = False, concat_axis: int | None = None
) -> TensorStats:
    """`ranges`: keep per-channel sums and ranges along the channel axis (the last one, or the
    quantized dimension); `concat_axis`: also per index of that axis when it is another one."""
    ch = -1 if op_type in PER_CHANNEL_SQNR_OPS and len(shape) >= 2 else None
    q = int_quant(scale_source)
    ra = None
    if ranges and q is not None and q.per_channel:
        ra = q.quantized_dimension % max(len(shape), 1)
    elif ranges and len(shape) >= 2 and shape[-1] >= 2:
        ra = len(shape) - 1
    sa = concat_axis if concat_axis is not None and concat_axis != ra else None
    kw = {"channel_axis": ch, "range_axis": ra, "slice_axis": sa}
    if q is None:
        return TensorStats(**kw)
    lo, hi = representable_range(q, scale_source.dtype)
    if q.per_channel:
        return TensorStats(np.asarray(q.scales, np.float64), lo, hi, quant_axis=q.quantized_dimension, **kw)
    return TensorStats(float(q.scales[0]), float(lo[0]), float(hi[0]), **kw)


@dataclass
class LayerJob:
    op_index: int
    op_type: str
    tensor_name: str
    float_tensor: int
    quant_tensor: int
    match: str
    float_op_index: int | None
    dtype: str
    shape: tuple[int, ...]
    quant: Quantization | None  # dequantize the quantized values with this (None: float values)
    stats: TensorStats
    iso_stats: TensorStats | None = None
    concat: ConcatLayout | None = None  # a CONCATENATION / PACK: where each input lies


@dataclass
class OutputJob:
    name: str
    float_tensor: int
    quant_tensor: int
    quant: Quantization | None
    stats: TensorStats
    concat: ConcatLayout | None = None  # read from a CONCATENATION / PACK (through DEQUANTIZE/RESHAPE/QUANTIZE)


@dataclass
class Plan:
    layers: list[LayerJob] = field(default_factory=list)
    outputs: list[OutputJob] = field(default_factory=list)
    unmatched: list[dict[str, Any]] = field(default_factory=list)


def _output_names(model: Model) -> dict[int, str]:
    names = {}
    for sig in model.signatures:
        if sig.subgraph == model.main.index:
            names.update({t: k for k, t in sig.outputs.items()})
    return names


def plan_layers(fm: Model, qm: Model, pairing: Pairing) -> Plan:
    fsg, qsg = fm.main, qm.main
    plan = Plan()
    op_match = {p.quant_op: p.match for p in pairing.ops}
    producers = qsg.producers()
    for op in qsg.ops:
        if op.type in TRANSPARENT_OPS:
            continue
        for o in op.outputs:
            if o < 0:
                continue
            qt = qsg.tensors[o]
            if qt.dtype in _OPAQUE:
                continue
            f = pairing.float_for_quant(o)
            reason = None
            if f is None:
                reason = "no float counterpart"
            elif tuple(fsg.tensors[f].shape) != tuple(qt.shape):
                reason = f"shape {list(qt.shape)} differs from the float tensor's {list(fsg.tensors[f].shape)}"
            elif fsg.tensors[f].dtype in _OPAQUE:
                reason = f"the float tensor is a {fsg.tensors[f].dtype}"
            if reason is not None or f is None:
                plan.unmatched.append(
                    {"side": "quant", "op_index": op.index, "op_type": op.type, "tensor_name": qt.name,
                     "quant_tensor": o, "reason": reason}
                )
                continue
            quant = int_quant(qt)
            values = quant is not None or qt.dtype in ("float32", "float16")  # not shapes, indices
            lay = op_layout(qsg, op, producers) if o == op.outputs[0] and values else None
            plan.layers.append(
                LayerJob(
                    op_index=op.index,
                    op_type=op.type,
                    tensor_name=qt.name,
                    float_tensor=f,
                    quant_tensor=o,
                    match=op_match.get(op.index) or pairing.tensor_match(o) or "structure",
                    float_op_index=pairing.float_op_for(op.index),
                    dtype=qt.dtype,
                    shape=tuple(qt.shape),
                    quant=quant,
                    stats=make_stats(qt, qt.shape, op.type, values, None if lay is None else lay.axis),
                    iso_stats=make_stats(qt, qt.shape, op.type),
                    concat=lay,
                )
            )
    for i in pairing.unmatched_float_ops:
        op = fsg.ops[i]
        name = fsg.tensors[op.outputs[0]].name if op.outputs and op.outputs[0] >= 0 else ""
        plan.unmatched.append(
            {"side": "float", "op_index": i, "op_type": op.type, "tensor_name": name, "reason": "no quantized counterpart"}
        )
    plan.outputs = _outputs(fm, qm)
    return plan


def _outputs(fm: Model, qm: Model) -> list[OutputJob]:
    fsg, qsg = fm.main, qm.main
    qnames, fnames = _output_names(qm), _output_names(fm)
    producers = qsg.producers()
    jobs = []
    for qo, fo in zip(qsg.outputs, fsg.outputs, strict=False):
        qt = qsg.tensors[qo]
        if qt.dtype in _OPAQUE or tuple(qt.shape) != tuple(fsg.tensors[fo].shape):
            continue
        scale_src = qt
        prod = producers.get(qo)
        if int_quant(qt) is None and prod is not None and prod.type == "DEQUANTIZE" and prod.inputs:
            scale_src = qsg.tensors[prod.inputs[0]]  # float output of a quantized tensor: its grid
        name = qnames.get(qo) or fnames.get(fo) or qt.name
        lay = output_layout(qsg, qo)
        stats = make_stats(scale_src, qt.shape, None, True, None if lay is None else lay.axis)
        jobs.append(OutputJob(name, fo, qo, int_quant(qt), stats, lay))
    return jobs
