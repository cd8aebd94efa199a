"""16-bit activations (16x8) for a run of B's ops: int16 activations, int8 weights, int64 bias.

Inside the selection every activation is a new int16 tensor, symmetric (zero-point 0), with the
scale max|x|/32767 of the measured float values of A's paired tensor (ops that must keep
scale and zero-point take their input's). Inputs from outside get a QUANTIZE int8 -> int16
(at the int8 tensor's representable range, so nothing clips); outputs read outside get a
QUANTIZE int16 -> int8 back into B's original tensor, so consumers are untouched. Weights stay
B's symmetric int8 weights; the bias becomes int64 = round(b_float / (S_in16 * S_w[c])) from
A's float bias. Only ops with LiteRT 16x8 kernels are accepted (A16W8_OPS). Ops whose int16
output the kernel fixes (LOGISTIC, TANH, SOFTMAX: 1/32768, 0) get that grid; constant operands
that are not int8 data (MEAN's axis) stay as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from ai_edge_litert import schema_py_generated as schema

from inspector.core.errors import InputError
from inspector.core.requantize import measure
from inspector.core.requantize.surgery import Surgery, quant_t
from inspector.core.samples.spec import Sample
from inspector.core.tflite import edit as fe
from inspector.core.tflite.model import Tensor
from inspector.core.tflite.op_facts import (
    A16W8_OPS,
    SAME_SCALE_OPS,
    SURGICAL_WEIGHT_OPS,
    fixed_output,
)

INT16 = schema.TensorType.INT16
INT8 = schema.TensorType.INT8


def _max_abs_scale(lo: float, hi: float) -> float:
    return max(abs(lo), abs(hi), 1e-12) / 32767.0


def _int8_params(s: Surgery, i: int, tt: Tensor) -> tuple[float, int]:
    """Scale and zero point of an int8 tensor op `i` reads (InputError when it has none)."""
    q = tt.quantization
    if q is None or not q.scales:
        raise InputError(f"{s.describe(i)}: tensor '{tt.name}' has no scale and zero point", s.qm.path)
    return q.scales[0], q.zero_points[0]


def to_a16w8(s: Surgery, ops: tuple[int, ...], samples: Sequence[Sample], runtime: str) -> None:
    sg = s.qm.main
    selected = set(ops)
    for i in ops:
        op = sg.ops[i]
        if op.type not in A16W8_OPS:
            raise InputError(
                f"{s.describe(i)}: 16-bit activations are not offered for {op.type} "
                f"(16-bit activations work for {', '.join(sorted(A16W8_OPS))})", s.qm.path)  # fmt: skip
        for t in [*op.inputs[:1], *op.outputs] if op.type in SURGICAL_WEIGHT_OPS else [*op.inputs, *op.outputs]:
            if t >= 0 and not sg.tensors[t].is_constant and sg.tensors[t].dtype != "int8":
                if op.type == "RESHAPE" and t == op.inputs[-1] and len(op.inputs) > 1:
                    continue  # the shape operand
                raise InputError(f"{s.describe(i)}: tensor '{sg.tensors[t].name}' is {sg.tensors[t].dtype}, not int8", s.qm.path)
    outs = [o for i in ops for o in sg.ops[i].outputs if o >= 0]
    observed = measure.float_values(s.fm, s.qm, s.pairing, outs, samples, runtime)
    int16_of: dict[int, int] = {}
    qz = s.opcode(schema.BuiltinOperator.QUANTIZE, 3)
    for i in sorted(ops):
        op = sg.ops[i]
        b_op = s.bsg.operators[i]
        pre: list[Any] = []  # schema.OperatorT before and after the op
        post: list[Any] = []
        inputs = [int(v) for v in b_op.inputs]
        data_positions = [0] if op.type in SURGICAL_WEIGHT_OPS else [
            p for p, t in enumerate(op.inputs) if t >= 0 and (not sg.tensors[t].is_constant or sg.tensors[t].dtype == "int8")]
        if op.type == "RESHAPE":
            data_positions = [0]
        for pos in data_positions:
            t = op.inputs[pos]
            if t in int16_of:
                inputs[pos] = int16_of[t]
                continue
            bt = s.bsg.tensors[t]
            tt = sg.tensors[t]
            sc_in, zp_in = _int8_params(s, i, tt)
            if tt.is_constant:
                data = s.qm.tensor_data(tt)
                if data is None:
                    raise InputError(f"{s.describe(i)}: tensor '{tt.name}' has no readable values", s.qm.path)
                vals = (data.astype(np.float64) - zp_in) * sc_in
                sc = _max_abs_scale(float(vals.min()), float(vals.max()))
                q16 = np.clip(np.round(vals / sc), -32767, 32767).astype(np.int16).reshape(tt.shape)
                inputs[pos] = s.add_constant(bt, tt.name + "/int16", INT16, q16, quant_t(np.array([sc]), np.array([0])))
                continue
            sc = _max_abs_scale(sc_in * (-128 - zp_in), sc_in * (127 - zp_in))
            new = s.add_tensor(bt, tt.name + "/int16", INT16, quant_t(np.array([sc]), np.array([0])))
            pre.append(s.new_op(qz, [t], [new]))
            int16_of[t] = new
            inputs[pos] = new
        in_scale = float(s.bsg.tensors[inputs[0]].quantization.scale[0])
        outputs = []
        for o in op.outputs:
            ot = sg.tensors[o]
            fixed = fixed_output(op.type, "int16", "int16")
            if fixed is not None:
                sc = fixed[0]  # the kernel's grid (zero point 0)
            elif op.type in SAME_SCALE_OPS:
                sc = in_scale
            else:
                sc = _max_abs_scale(observed[o].lo, observed[o].hi)
            new = s.add_tensor(s.bsg.tensors[o], ot.name + "/int16", INT16, quant_t(np.array([sc]), np.array([0])))
            int16_of[o] = new
            outputs.append(new)
            if s.consumed_outside(o, selected):
                post.append(s.new_op(qz, [new], [o]))
        if op.type in SURGICAL_WEIGHT_OPS:
            _int64_bias(s, i, inputs, in_scale)
        new_op = s.new_op(b_op.opcodeIndex, inputs, outputs, like=b_op)
        s.replacements[i] = pre + [new_op] + post
    s.notes.append(f"16-bit activations (a16w8): {', '.join(s.describe(i) for i in sorted(ops))}")


def _int64_bias(s: Surgery, i: int, inputs: list[int], in_scale: float) -> None:
    wt = s.bsg.tensors[inputs[1]]
    if wt.type != INT8 or wt.quantization is None or any(int(z) != 0 for z in wt.quantization.zeroPoint):
        raise InputError(f"{s.describe(i)}: 16x8 kernels need symmetric int8 weights", s.qm.path)
    channels = s.qm.main.tensors[s.qm.main.ops[i].outputs[0]].shape[-1]
    sw = np.asarray(wt.quantization.scale, np.float64)
    sw = np.full(channels, sw[0]) if len(sw) == 1 else sw
    b = s.float_constant(i, 2)
    if b is None:
        if len(inputs) > 2 and inputs[2] >= 0:  # B has a bias A lacks: keep its float value
            bt = s.bsg.tensors[inputs[2]]
            b = s.b_constant(i, bt).astype(np.float64) * np.asarray(bt.quantization.scale, np.float64)
        else:
            return
    bs = in_scale * sw
    b64 = np.round(np.asarray(b, np.float64).reshape(-1) / bs).astype(np.int64)
    like = s.bsg.tensors[inputs[2]] if len(inputs) > 2 and inputs[2] >= 0 else wt
    name = fe.tensor_name(s.bsg.tensors[s.bsg.operators[i].outputs[0]]) + "/bias_int64"
    t = s.add_constant(like, name, schema.TensorType.INT64, b64, quant_t(bs, np.zeros(len(bs), np.int64), 0))
    while len(inputs) < 3:
        inputs.append(-1)
    inputs[2] = t
