"""Where each input of a CONCATENATION or PACK lies in its output, and in a model output read
through DEQUANTIZE / RESHAPE / QUANTIZE (issue 25: a concatenated head's parts are measured apart).

A CONCATENATION input of size k along the axis fills k consecutive indices there; a PACK input
fills one index of the new axis. Each slice also names the op that produced its input, looking
through the QUANTIZE (requantize), DEQUANTIZE and shape-only ops in between (a sigmoid's scores
reach the concatenation through a QUANTIZE to the concatenation's scale).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from inspector.core.tflite.model import Op, Subgraph
from inspector.core.tflite.op_facts import CONCAT_OPS, OUTPUT_CONCAT_PATH_OPS, PASS_THROUGH_OPS


@dataclass(frozen=True)
class SliceOrigin:
    input: int  # position among the concatenation's inputs
    tensor: int  # B's input tensor
    start: int
    stop: int  # along `ConcatLayout.axis` of the measured tensor
    producer_op: int | None  # the op that computed it (through requantization and reshapes)
    producer_type: str | None


@dataclass(frozen=True)
class ConcatLayout:
    op_index: int  # the CONCATENATION / PACK op of B
    op_type: str
    axis: int  # non-negative, on the measured tensor's shape
    slices: tuple[SliceOrigin, ...]


def _producer(sg: Subgraph, producers: Mapping[int, Op], t: int) -> Op | None:
    seen = 0
    p = producers.get(t)
    while p is not None and p.type in PASS_THROUGH_OPS and p.inputs and p.inputs[0] >= 0 and seen < 16:
        seen += 1
        nxt = producers.get(p.inputs[0])
        if nxt is None:
            break
        p = nxt
    return p


def op_layout(sg: Subgraph, op: Op, producers: Mapping[int, Op] | None = None) -> ConcatLayout | None:
    """The layout of a CONCATENATION / PACK op's output (None for other ops or odd shapes)."""
    if op.type not in CONCAT_OPS or not op.outputs or op.outputs[0] < 0:
        return None
    producers = producers if producers is not None else sg.producers()
    shape = tuple(sg.tensors[op.outputs[0]].shape)
    if not shape:
        return None
    axis = int(op.options.get("axis", 0))
    axis = axis % len(shape)
    ins = [i for i in op.inputs if i >= 0]
    sizes = [1] * len(ins) if op.type == "PACK" else []
    if op.type == "CONCATENATION":
        for i in ins:
            s = tuple(sg.tensors[i].shape)
            if len(s) != len(shape):
                return None
            sizes.append(int(s[axis]))
    if sum(sizes) != shape[axis] or len(ins) < 2:
        return None
    out, start = [], 0
    for k, (t, n) in enumerate(zip(ins, sizes, strict=True)):
        p = _producer(sg, producers, t)
        out.append(SliceOrigin(k, t, start, start + n, None if p is None else p.index, None if p is None else p.type))
        start += n
    return ConcatLayout(op.index, op.type, axis, tuple(out))


def output_layout(sg: Subgraph, tensor: int) -> ConcatLayout | None:
    """The layout of the concatenation a model output comes from through DEQUANTIZE / RESHAPE /
    QUANTIZE, mapped onto the output's shape (None when there is none, or a reshape mixes the
    concatenation's axis with others)."""
    producers = sg.producers()
    p = producers.get(tensor)
    hops = 0
    while p is not None and p.type in OUTPUT_CONCAT_PATH_OPS and p.inputs and hops < 8:
        p = producers.get(p.inputs[0])
        hops += 1
    if p is None or p.type not in CONCAT_OPS:
        return None
    lay = op_layout(sg, p, producers)
    if lay is None:
        return None
    src = tuple(sg.tensors[p.outputs[0]].shape)
    dst = tuple(sg.tensors[tensor].shape)
    outer, inner = _size(src[: lay.axis]), _size(src[lay.axis + 1 :])
    for k, n in enumerate(dst):
        if n == src[lay.axis] and _size(dst[:k]) == outer and _size(dst[k + 1 :]) == inner:
            return ConcatLayout(lay.op_index, lay.op_type, k, lay.slices)
    return None


def _size(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape, dtype=np.int64))
