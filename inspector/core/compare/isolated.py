"""Isolated (per-layer) error: each float op fed the dequantized inputs its quantized twin saw.

One float model is built (and cached) from the float file: every matched compute op is kept,
and each of its activation inputs (non-constant, non-variable) is replaced by a new graph input;
constants (the float weights) stay. One invoke per sample then computes every layer's isolated
float output, given the quantized model's actual values of those inputs, dequantized with their
own scale and zero-point (float inputs, as in hybrid or float16 models, are passed as they are).
This is the comparison TensorFlow's QuantizationDebugger reports per layer. A float twin that
keeps fake quantization (a QAT model's) keeps it in the isolated model too: a kernel's QUANTIZE →
DEQUANTIZE runs before the op, and the output's after it (its DEQUANTIZE output is read).

Ops that cannot be cut out this way (control flow, resource variables, custom ops, inputs whose
shapes differ between the models) keep `isolated = null`, with the reason in `notes`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np

from inspector.core.compare.equalized import rescale_float_weights
from inspector.core.compare.pairing import Pairing
from inspector.core.quantmath.quant import dequantize
from inspector.core.tflite.fake_quant import fake_quant_after, fake_quantized_constant
from inspector.core.tflite.model import Model, Quantization
from inspector.core.tflite.op_facts import BOUNDARY_OPS
from inspector.core.tflite.rewrite import cached, file_key, read_object, to_bytes

NOT_ISOLATABLE = frozenset(
    {"WHILE", "IF", "CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", *BOUNDARY_OPS}
)


@dataclass(frozen=True)
class IsoFeed:
    iso_tensor: int  # new graph input of the isolated model
    quant_tensor: int  # the quantized-model tensor the quantized op read at that position
    quant: Quantization | None  # dequantize with this (None: pass as is)
    dtype: str  # the float model's dtype for this input
    constant: np.ndarray | None = None  # quantized-model constant, when the input is one


@dataclass
class IsolatedPlan:
    content: bytes
    feeds: list[IsoFeed]
    outputs: tuple[int, ...]  # tensor indices of the isolated model to read (float op outputs)
    float_ops: dict[int, int]  # quant op -> float op computed in isolation
    notes: dict[int, str] = field(default_factory=dict)  # quant op -> why it has no isolated value

    def feed(self, quant_values: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
        out = {}
        for f in self.feeds:
            v = f.constant if f.constant is not None else quant_values[f.quant_tensor]
            if f.quant is not None:
                v = dequantize(v, f.quant)
            out[f.iso_tensor] = np.asarray(v, dtype=f.dtype)
        return out


def _eligible(fm: Model, qm: Model, f_index: int, q_index: int) -> str | None:
    """None when the op can be isolated, else the reason."""
    fop, qop = fm.main.ops[f_index], qm.main.ops[q_index]
    if fop.type in NOT_ISOLATABLE or fop.is_custom:
        return f"{fop.type} cannot be run on its own"
    for pos, fi in enumerate(fop.inputs):
        if fi < 0:
            continue
        ft = fm.main.tensors[fi]
        if ft.is_constant or fake_quantized_constant(fm.main, fi) is not None:  # a QAT twin's kernel: kept
            continue
        if ft.is_variable or ft.dtype in ("resource", "variant", "string"):
            return f"input {pos} is a {ft.dtype} / variable tensor"
        qi = qop.inputs[pos] if pos < len(qop.inputs) else -1
        if qi < 0:
            return f"the quantized op has no input {pos}"
        qt = qm.main.tensors[qi]
        if tuple(qt.shape) != tuple(ft.shape):
            return f"input {pos} has shape {list(qt.shape)} in the quantized model, {list(ft.shape)} in the float model"
        if qt.dtype in ("resource", "variant", "string"):
            return f"input {pos} of the quantized op is a {qt.dtype} tensor"
    return None


def build_isolated_plan(fm: Model, qm: Model, pairing: Pairing) -> IsolatedPlan:
    key = ("isolated", fm.main.index, qm.main.index, *file_key(fm.path), *file_key(qm.path))
    return cached(key, lambda: _build(fm, qm, pairing))  # type: ignore[return-value]


def _build(fm: Model, qm: Model, pairing: Pairing) -> IsolatedPlan:
    notes: dict[int, str] = {}
    kept: list[tuple[int, int]] = []  # (float op, quant op)
    for p in pairing.ops:
        reason = _eligible(fm, qm, p.float_op, p.quant_op)
        if reason is None:
            kept.append((p.float_op, p.quant_op))
        else:
            notes[p.quant_op] = reason
    m = read_object(fm.path)
    rescale_float_weights(m, fm, qm, pairing)  # an equalized P and C: A's weights as B's equalization left them
    sg = m.subgraphs[fm.main.index]
    feeds: list[IsoFeed] = []
    new_ops = []
    outputs: list[int] = []
    producers, consumers = fm.main.producers(), fm.main.consumers()
    for f_index, q_index in sorted(kept):
        op = sg.operators[f_index]
        fop, qop = fm.main.ops[f_index], qm.main.ops[q_index]
        inputs = list(op.inputs)
        after: list[int] = []  # the output's fake quant (QAT twin): the value B reproduces is after it
        for o in fop.outputs:
            fq = fake_quant_after(fm.main, o, consumers) if o >= 0 else None
            if fq is not None:
                after += [fq.quantize_op, fq.dequantize_op]
                outputs.append(fq.output)
        for pos, fi in enumerate(fop.inputs):
            if fi < 0 or fm.main.tensors[fi].is_constant:
                continue
            wq = fake_quantized_constant(fm.main, fi, producers)
            if wq is not None:  # the kernel's fake quant runs inside the isolated model, as in A
                new_ops += [sg.operators[wq.quantize_op], sg.operators[wq.dequantize_op]]
                continue
            t = copy.deepcopy(sg.tensors[fi])
            t.name = (fm.main.tensors[fi].name + f"@isolated_op{f_index}_in{pos}").encode()
            t.quantization = None
            sg.tensors.append(t)
            new_index = len(sg.tensors) - 1
            inputs[pos] = new_index
            qt = qm.main.tensors[qop.inputs[pos]]
            quant = qt.quantization if qt.quantization is not None and qt.dtype.startswith(("int", "uint")) else None
            const = qm.tensor_data(qt) if qt.is_constant else None
            feeds.append(IsoFeed(new_index, qt.index, quant, fm.main.tensors[fi].dtype, const))
        op.inputs = inputs
        new_ops.append(op)
        new_ops += [sg.operators[i] for i in after]
        outputs.extend(o for o in fop.outputs if o >= 0 and o not in outputs)
    sg.operators = new_ops
    sg.inputs = [f.iso_tensor for f in feeds]
    sg.outputs = outputs
    m.signatureDefs = []
    return IsolatedPlan(
        content=to_bytes(m),
        feeds=feeds,
        outputs=tuple(outputs),
        float_ops={q: f for f, q in kept},
        notes=notes,
    )
