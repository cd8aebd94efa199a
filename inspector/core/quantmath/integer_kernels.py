"""Integer reimplementations of the int8 kernels the spec defines, fed an op's actual int8 inputs.

What a kernel *should* output for CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and ADD, written
from the quantization spec and the reference kernels (tensorflow/lite/kernels/internal/
reference/integer_ops/{conv,depthwise_conv,fully_connected,add}.h):

- conv / depthwise / FC: acc[c] = sum((q_in - Z_in) * (q_w - Z_w)) + bias[c] in int32 (int64 here,
  a wider accumulator changes nothing unless int32 would overflow), padding positions contribute
  nothing; out = clamp(MultiplyByQuantizedMultiplier(acc, M0[c], shift[c]) + Z_out) with
  (M0, shift) of M[c] = S_in * S_w[c] / S_out (`conv_math`);
- ADD: both inputs shifted left by 20 and rescaled by S_in/(2*max S_in), summed, rescaled by
  2*max S_in / (2^20 * S_out), plus Z_out, clamped (`rescale_math`).

The rescale rounds as the reference kernels of the ai-edge-litert wheels do, measured bit for bit
against `OpResolverType.BUILTIN_REF` (tests/core/compare/test_runtime_parity.py): conv and depthwise use
the double-rounding gemmlowp path (SaturatingRoundingDoublingHighMul, then RoundingDivideByPOT),
FULLY_CONNECTED the single-rounding one (one 64-bit product rounded once, TFLITE_SINGLE_ROUNDING),
ADD matches either on every measured input (double rounding kept).
Comparing a runtime's output with this computation says which kernel departs from the spec.
"""

from __future__ import annotations

import numpy as np

from inspector.core.quantmath.fixed_point import multiply_by_quantized_multiplier
from inspector.core.quantmath.kernel_path import input_at, quant_of, roles
from inspector.core.quantmath.opmath import activation_clamp, conv_math, rescale_math
from inspector.core.tflite.dtypes import INT_LIMITS
from inspector.core.tflite.model import Model, Op, Subgraph
from inspector.core.tflite.op_facts import SPEC_OPS, facts


def supports(sg: Subgraph, op: Op) -> bool:
    """True when `integer_output` can recompute this op: an 8-bit op this module implements."""
    if op.type not in SPEC_OPS or not op.outputs or op.outputs[0] < 0:
        return False
    out = sg.tensors[op.outputs[0]]
    if out.dtype not in ("int8", "uint8") or out.quantization is None:
        return False
    if op.type == "ADD":
        rm = rescale_math(sg, op)
        ins = [sg.tensors[i] for i in op.inputs if i >= 0]
        return rm is not None and rm.kind == "add_sub" and len(ins) == 2 and all(t.dtype == out.dtype for t in ins)
    cm, r = conv_math(sg, op), roles(op)
    if cm is None or r is None:  # conv math: a weighted op
        return False
    w = input_at(sg, op, r.weights)
    return w is not None and w.is_constant and w.dtype in ("int8", "uint8")


def integer_output(model: Model, op: Op, inputs: dict[int, np.ndarray], sg: Subgraph | None = None,
                   single_rounding: bool | None = None) -> np.ndarray:  # fmt: skip
    """The op's output as the spec computes it from `inputs` ({tensor index: int array} of its
    non-constant inputs; constants are read from the model). `single_rounding` None: the
    reference kernel's rounding for this op type."""
    sg = sg or model.main
    if single_rounding is None:
        single_rounding = facts(op.type).single_rounding
    if op.type == "ADD":
        return _add(sg, op, inputs, single_rounding)
    return _conv_like(model, sg, op, inputs, single_rounding)


def _value(model: Model, sg: Subgraph, index: int, inputs: dict[int, np.ndarray]) -> np.ndarray:
    if index in inputs:
        return np.asarray(inputs[index])
    data = model.tensor_data(sg.tensors[index])
    if data is None:
        raise ValueError(f"tensor {index} ({sg.tensors[index].name}) has no value")
    return np.asarray(data)


def _rescale(acc: np.ndarray, m0: np.ndarray, shift: np.ndarray, single_rounding: bool) -> np.ndarray:
    """Per-channel (last axis) MultiplyByQuantizedMultiplier."""
    out = np.empty(acc.shape, np.int64)
    for c in range(acc.shape[-1]):
        k = c if len(m0) > 1 else 0
        out[..., c] = multiply_by_quantized_multiplier(acc[..., c], int(m0[k]), int(shift[k]), single_rounding)
    return out


def _finish(op: Op, sg: Subgraph, scaled: np.ndarray, zp_out: int) -> np.ndarray:
    out = sg.tensors[op.outputs[0]]
    lo, hi = activation_clamp(op, out)
    q: np.ndarray = np.clip(scaled + zp_out, lo, hi).astype(out.dtype)
    return q


def _same_padding(size: int, k: int, stride: int, dilation: int, padding: str) -> tuple[int, int, int]:
    """(output size, pad before, pad after) as ComputePaddingHeightWidth does it."""
    eff = (k - 1) * dilation + 1
    if padding == "SAME":
        out = (size + stride - 1) // stride
    else:
        out = (size - eff + stride) // stride
    total = max(0, (out - 1) * stride + eff - size)
    return out, total // 2, total - total // 2


def _windows(x: np.ndarray, kh: int, kw: int, op: Op) -> np.ndarray:
    """Zero-padded sliding windows of NHWC x: (N, OH, OW, KH, KW, C)."""
    o = op.options
    sh, sw = int(o.get("stride_h", 1)), int(o.get("stride_w", 1))
    dh, dw = int(o.get("dilation_h_factor", 1)), int(o.get("dilation_w_factor", 1))
    pad = str(o.get("padding", "VALID"))
    oh, pt, pb = _same_padding(x.shape[1], kh, sh, dh, pad)
    ow, pl, pr = _same_padding(x.shape[2], kw, sw, dw, pad)
    xp = np.pad(x, ((0, 0), (pt, pb + sh * oh), (pl, pr + sw * ow), (0, 0)))
    iy = (np.arange(oh) * sh)[:, None] + (np.arange(kh) * dh)[None, :]  # (OH, KH)
    ix = (np.arange(ow) * sw)[:, None] + (np.arange(kw) * dw)[None, :]  # (OW, KW)
    return xp[:, iy[:, None, :, None], ix[None, :, None, :], :]  # (N, OH, OW, KH, KW, C)


def _conv_like(model: Model, sg: Subgraph, op: Op, inputs: dict[int, np.ndarray], single_rounding: bool) -> np.ndarray:
    r = roles(op)
    cm = conv_math(sg, op)
    if r is None or cm is None:
        raise ValueError(f"op {op.index} {op.type} is not a quantized conv-like op")
    a_idx, w_idx = op.inputs[r.activation], op.inputs[r.weights]
    b_idx = op.inputs[r.bias] if r.bias is not None and r.bias < len(op.inputs) else -1
    x = _value(model, sg, a_idx, inputs).astype(np.int64) - int(cm.input_zero_point)
    w = _value(model, sg, w_idx, {}).astype(np.int64)
    wz = np.asarray(cm.weight_zero_points, np.int64)
    m0, shift = np.asarray(cm.m0, np.int64), np.asarray(cm.shifts, np.int64)
    if op.type == "FULLY_CONNECTED":
        w = w - (wz[:, None] if len(wz) > 1 else wz[0])
        acc = x.reshape(-1, w.shape[1]) @ w.T  # (batch, out)
    elif op.type == "CONV_2D":
        w = w - (wz[:, None, None, None] if len(wz) > 1 else wz[0])  # (O, KH, KW, I)
        win = _windows(x, w.shape[1], w.shape[2], op)
        acc = np.einsum("nhwyxc,oyxc->nhwo", win, w, optimize=True)
    else:  # DEPTHWISE_CONV_2D: filter (1, KH, KW, I * mult), output channel = i * mult + m
        w = w - (wz if len(wz) > 1 else wz[0])
        mult = w.shape[3] // x.shape[3]
        win = _windows(x, w.shape[1], w.shape[2], op)
        win = np.repeat(win, mult, axis=-1) if mult > 1 else win
        acc = np.einsum("nhwyxc,yxc->nhwc", win, w[0], optimize=True)
    if b_idx >= 0:
        acc = acc + _value(model, sg, b_idx, {}).astype(np.int64)
    scaled = _rescale(acc, m0, shift, single_rounding)
    out = _finish(op, sg, scaled, int(cm.output_zero_point))
    return out.reshape(sg.tensors[op.outputs[0]].shape) if op.type == "FULLY_CONNECTED" and sg.tensors[op.outputs[0]].shape else out


def _add(sg: Subgraph, op: Op, inputs: dict[int, np.ndarray], single_rounding: bool) -> np.ndarray:
    rm = rescale_math(sg, op)
    if rm is None or rm.kind != "add_sub":
        raise ValueError(f"op {op.index} ADD does not use the general 8-bit path")
    t1, t2, out = sg.tensors[op.inputs[0]], sg.tensors[op.inputs[1]], sg.tensors[op.outputs[0]]
    x1 = np.asarray(inputs[op.inputs[0]], np.int64) - int(quant_of(t1).zero_points[0])  # the spec kernels run on quantized tensors only
    x2 = np.asarray(inputs[op.inputs[1]], np.int64) - int(quant_of(t2).zero_points[0])
    m_in1, m_in2, m_out = rm.multipliers
    assert rm.left_shift is not None  # ADD/SUB rescales always have a left shift
    left = int(rm.left_shift)
    s1 = multiply_by_quantized_multiplier(x1 * (1 << left), m_in1.m0, m_in1.shift, single_rounding)
    s2 = multiply_by_quantized_multiplier(x2 * (1 << left), m_in2.m0, m_in2.shift, single_rounding)
    raw = multiply_by_quantized_multiplier(s1 + s2, m_out.m0, m_out.shift, single_rounding)
    lo, hi = activation_clamp(op, out)
    qmin, qmax = INT_LIMITS[out.dtype]
    zp_out = int(quant_of(out).zero_points[0])
    q: np.ndarray = np.clip(raw + zp_out, max(lo, qmin), min(hi, qmax)).astype(out.dtype)
    return q
