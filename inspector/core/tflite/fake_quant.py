"""Fake quantization kept in a float model: a QUANTIZE → DEQUANTIZE pair.

TF's converter turns a QAT model into a float model (no quantization flags) that keeps each
fake quant as a QUANTIZE (float → integers, with the QAT range's scale and zero point) followed
by a DEQUANTIZE (back to float): after each layer's output, and between each constant kernel and
the op that reads it. The value the int8 model reproduces is the one after the pair, so a
comparison pairs the quantized model's tensor with the DEQUANTIZE output, and a weight check
reads the constant behind the pair (and may apply the pair's rounding to it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from inspector.core.tflite.dtypes import INT_LIMITS
from inspector.core.tflite.model import Op, Quantization, Subgraph

_FLOAT = ("float32", "float16", "float64")


@dataclass(frozen=True, slots=True)
class FakeQuant:
    """One QUANTIZE → DEQUANTIZE pair: `source` (float) -> `quantized` (integers) -> `output` (float)."""

    source: int
    quantized: int  # the QUANTIZE output: its scale and zero point are the fake quant's grid
    output: int  # the DEQUANTIZE output: the value the next op reads
    quantize_op: int
    dequantize_op: int

    def quantization(self, sg: Subgraph) -> Quantization | None:
        return sg.tensors[self.quantized].quantization


def _pair_from_quantize(sg: Subgraph, q: Op, consumers: dict[int, list[Op]]) -> FakeQuant | None:
    if q.type != "QUANTIZE" or not q.inputs or not q.outputs or q.outputs[0] < 0:
        return None
    src, mid = q.inputs[0], q.outputs[0]
    tq = sg.tensors[mid]
    if sg.tensors[src].dtype not in _FLOAT or tq.dtype not in INT_LIMITS or tq.quantization is None:
        return None
    nxt = consumers.get(mid, [])
    if len(nxt) != 1 or nxt[0].type != "DEQUANTIZE" or not nxt[0].outputs or nxt[0].outputs[0] < 0:
        return None
    out = nxt[0].outputs[0]
    if sg.tensors[out].dtype not in _FLOAT:
        return None
    return FakeQuant(src, mid, out, q.index, nxt[0].index)


def fake_quant_after(sg: Subgraph, tensor: int, consumers: dict[int, list[Op]] | None = None) -> FakeQuant | None:
    """The fake quant that reads the float `tensor` (its first QUANTIZE consumer followed by one
    DEQUANTIZE), or None. A graph output is its own value: None."""
    if tensor < 0 or tensor in sg.outputs:
        return None
    consumers = sg.consumers() if consumers is None else consumers
    for op in consumers.get(tensor, []):
        fq = _pair_from_quantize(sg, op, consumers)
        if fq is not None:
            return fq
    return None


def after_fake_quant(sg: Subgraph, tensor: int, consumers: dict[int, list[Op]] | None = None) -> int:
    """`tensor`, or the DEQUANTIZE output of the fake quant that follows it (the value the
    quantized model reproduces)."""
    fq = fake_quant_after(sg, tensor, consumers)
    return tensor if fq is None else fq.output


def fake_quant_before(
    sg: Subgraph,
    tensor: int,
    producers: Mapping[int, Op] | None = None,
    consumers: dict[int, list[Op]] | None = None,
) -> FakeQuant | None:
    """The fake quant whose DEQUANTIZE writes `tensor`, or None."""
    producers = sg.producers() if producers is None else producers
    dq = producers.get(tensor)
    if dq is None or dq.type != "DEQUANTIZE" or not dq.inputs or dq.inputs[0] < 0:
        return None
    q = producers.get(dq.inputs[0])
    if q is None:
        return None
    consumers = sg.consumers() if consumers is None else consumers
    fq = _pair_from_quantize(sg, q, consumers)
    return fq if fq is not None and fq.output == tensor else None


def fake_quantized_constant(sg: Subgraph, tensor: int, producers: Mapping[int, Op] | None = None) -> FakeQuant | None:
    """The fake quant of a constant (a QAT kernel in the float twin) that writes `tensor`, or None."""
    fq = fake_quant_before(sg, tensor, producers)
    return fq if fq is not None and sg.tensors[fq.source].is_constant else None


def fake_quant_count(sg: Subgraph) -> tuple[int, int]:
    """(fake quants of activations, fake quants of constants) in the subgraph."""
    consumers = sg.consumers()
    acts = consts = 0
    for op in sg.ops:
        fq = _pair_from_quantize(sg, op, consumers)
        if fq is not None:
            if sg.tensors[fq.source].is_constant:
                consts += 1
            else:
                acts += 1
    return acts, consts
