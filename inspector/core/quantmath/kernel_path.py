"""Which kernel path the TFLite runtime takes for an op, read from its tensor types.

Paths (strings, stable for JSON):
- "full_integer_int8": int8 (or uint8) activations and weights, integer arithmetic end to end;
- "full_integer_16x8": int16 activations, int8 weights (int64 bias accumulator);
- "hybrid": float activations with int8 weights used directly (dynamic range quantization):
  the kernel quantizes the input per batch at run time, so no output scale exists;
- "weight_only": int8/int4 weights behind a DEQUANTIZE op, then an ordinary float kernel;
- "float16_weights": float16 weights behind a DEQUANTIZE op, then a float kernel;
- "float": float tensors only;
- "other": index/shape arithmetic (int32, bool) where quantization plays no part.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeGuard

from inspector.core.tflite.dtypes import QUANTIZED_STORAGE_DTYPES
from inspector.core.tflite.model import Op, Quantization, Subgraph, Tensor
from inspector.core.tflite.op_facts import WEIGHTED_OPS, OpRoles

PATHS = ("full_integer_int8", "full_integer_16x8", "hybrid", "weight_only", "float16_weights", "float", "other")

PATH_LABELS = {
    "full_integer_int8": "full integer (int8)",
    "full_integer_16x8": "full integer (16x8: int16 activations, int8 weights)",
    "hybrid": "hybrid / dynamic range (float activations, integer weights)",
    "weight_only": "weight-only (DEQUANTIZE, then float)",
    "float16_weights": "float16 weights (DEQUANTIZE, then float)",
    "float": "float",
    "other": "index / shape arithmetic (not quantized)",
}

QUANT_INT = QUANTIZED_STORAGE_DTYPES


def roles(op: Op) -> OpRoles | None:
    return WEIGHTED_OPS.get(op.type)


def input_at(sg: Subgraph, op: Op, pos: int | None) -> Tensor | None:
    if pos is None or pos >= len(op.inputs) or op.inputs[pos] < 0:
        return None
    return sg.tensors[op.inputs[pos]]


def is_quantized_int(t: Tensor | None) -> TypeGuard[Tensor]:
    return t is not None and t.dtype in QUANT_INT and t.quantization is not None


def quant_of(t: Tensor) -> Quantization:
    """`t`'s quantization parameters, for a tensor the caller checked is quantized (`is_quantized_int`)."""
    if t.quantization is None:
        raise ValueError(f"tensor '{t.name}' is not quantized")
    return t.quantization


def dequantized_source(sg: Subgraph, producers: Mapping[int, Op], t: Tensor) -> Tensor | None:
    """The constant a DEQUANTIZE turned into `t`, when `t` is such an output (weights stored small)."""
    p = producers.get(t.index)
    if p is None or p.type != "DEQUANTIZE" or not p.inputs or p.inputs[0] < 0:
        return None
    src = sg.tensors[p.inputs[0]]
    return src if src.is_constant else None


def classify(sg: Subgraph, op: Op, producers: Mapping[int, Op] | None = None) -> str:
    """The kernel path of `op` (one of PATHS)."""
    producers = sg.producers() if producers is None else producers
    ins = [sg.tensors[i] for i in op.inputs if i >= 0]
    outs = [sg.tensors[o] for o in op.outputs if o >= 0]
    if op.type == "DEQUANTIZE" and ins:
        src = ins[0]
        if src.is_constant:
            return "float16_weights" if src.dtype == "float16" else "weight_only"
        return "full_integer_16x8" if src.dtype == "int16" else "full_integer_int8"
    if op.type == "QUANTIZE" and outs:
        return "full_integer_16x8" if outs[0].dtype == "int16" else "full_integer_int8"
    if outs and all(t.dtype in ("int32", "int64", "bool", "string") and t.quantization is None for t in outs):
        return "other"
    acts = [t for t in ins if not t.is_constant and dequantized_source(sg, producers, t) is None]
    data = acts + outs
    if any(is_quantized_int(t) and t.dtype == "int16" for t in data):
        return "full_integer_16x8"
    if any(is_quantized_int(t) for t in data):
        return "full_integer_int8"
    if any(t.dtype in ("float32", "float16") for t in data):
        if any(t.is_constant and is_quantized_int(t) for t in ins):
            return "hybrid"
        sources = [s for s in (dequantized_source(sg, producers, t) for t in ins) if s is not None]
        if any(s.dtype in QUANT_INT for s in sources):
            return "weight_only"
        if any(s.dtype == "float16" for s in sources):
            return "float16_weights"
        return "float"
    return "other"
