"""Keep float: selected ops of B compute in float with A's weights and bias.

For each selected op (in execution order): a DEQUANTIZE for each quantized activation input
that does not already come from a float op of the selection, the float op (A's options, A's
constants copied in), and a QUANTIZE back into B's ORIGINAL output tensor (same index, name,
scale and zero-point) when anything outside the selection reads it. Consecutive selected ops
pass float tensors to each other: no DEQUANTIZE/QUANTIZE pair between them. An input that a
QUANTIZE requantized from another integer grid is dequantized from that grid (its finer values). When the one
reader outside the selection is a DEQUANTIZE (the float output of a model with float I/O), the
float op writes that DEQUANTIZE's float tensor itself and the QUANTIZE/DEQUANTIZE round trip
goes: keeping the last layer float must not requantize its output to 8 bits on the way out.
Every other consumer and tensor of B stays as it was.
"""

from __future__ import annotations

from typing import Any

from ai_edge_litert import schema_py_generated as schema

from inspector.core.errors import InputError
from inspector.core.requantize.surgery import FLOAT32, Surgery
from inspector.core.tflite import edit as fe

QUANTIZED = (schema.TensorType.INT8, schema.TensorType.UINT8, schema.TensorType.INT16)


def keep_float(s: Surgery, ops: tuple[int, ...]) -> None:
    """Register the float replacement of every op in `ops` (B indices) with `s`."""
    selected = set(ops)
    float_of: dict[int, int] = {}  # B tensor -> float tensor carrying its value
    dq = s.opcode(schema.BuiltinOperator.DEQUANTIZE, 2)
    qz = s.opcode(schema.BuiltinOperator.QUANTIZE, 2)
    for i in sorted(ops):
        f = s.float_op(i)
        a_op = s.asg.operators[f]
        b_op = s.bsg.operators[i]
        fop = s.fm.main.ops[f]
        pre: list[Any] = []  # schema.OperatorT before and after the op
        post: list[Any] = []
        inputs: list[int] = []
        for pos, a_in in enumerate(fop.inputs):
            if a_in < 0:
                inputs.append(-1)
                continue
            if s.fm.main.tensors[a_in].is_constant:
                inputs.append(s.copy_a_constant(a_in, i, pos))
                continue
            if pos >= len(b_op.inputs) or b_op.inputs[pos] < 0:
                raise InputError(f"{s.describe(i)} has no input {pos}, which the float op reads", s.qm.path)
            b_in = int(b_op.inputs[pos])
            bt = s.bsg.tensors[b_in]
            if b_in in float_of:
                inputs.append(float_of[b_in])
            elif bt.type in QUANTIZED:
                src = _before_requantize(s, b_in)
                t = s.add_tensor(bt, fe.tensor_name(bt) + "/dequantized", FLOAT32)
                pre.append(s.new_op(dq, [src], [t]))
                float_of[b_in] = t
                inputs.append(t)
            else:
                inputs.append(b_in)  # already float, or an integer shape/index tensor
        outputs: list[int] = []
        for b_out in [int(o) for o in b_op.outputs]:
            bt = s.bsg.tensors[b_out]
            if bt.type not in QUANTIZED:
                outputs.append(b_out)
                continue
            bypass = s.only_dequantized(b_out, selected)
            if bypass is not None:  # the float value goes straight into the DEQUANTIZE's output
                d_op, d = bypass
                s.replacements[d_op] = []
                float_of[b_out] = d
                outputs.append(d)
                continue
            t = s.add_tensor(bt, fe.tensor_name(bt) + "/float", FLOAT32)
            float_of[b_out] = t
            outputs.append(t)
            if s.consumed_outside(b_out, selected):
                post.append(s.new_op(qz, [t], [b_out]))
        a_shapes = [tuple(s.fm.main.tensors[o].shape) for o in fop.outputs if o >= 0]
        b_shapes = [tuple(s.qm.main.tensors[o].shape) for o in s.qm.main.ops[i].outputs if o >= 0]
        if a_shapes != b_shapes:
            raise InputError(f"{s.describe(i)}: output shape {b_shapes} differs from the float op's {a_shapes}", s.qm.path)
        new = s.new_op(s.opcode_from_a(a_op), inputs, outputs, like=a_op)
        s.replacements[i] = pre + [new] + post
    s.notes.append(f"kept float: {', '.join(s.describe(i) for i in sorted(ops))}")


def _before_requantize(s: Surgery, b_in: int) -> int:
    """The tensor to dequantize for a float op reading `b_in`: the input of the QUANTIZE that
    requantized it from another integer grid (a sigmoid's 1/256 into a concatenation's scale),
    whose finer values the float op can read directly; else `b_in` itself."""
    p = s.qm.main.producers().get(b_in)
    if p is None or p.type != "QUANTIZE" or not p.inputs or p.inputs[0] < 0:
        return b_in
    return p.inputs[0] if s.bsg.tensors[p.inputs[0]].type in QUANTIZED else b_in
