"""Per-channel int8 weights from A's float weights, with the int32 bias re-derived from A's bias.

Weights: symmetric, zero-point 0, values in [-127, 127], one scale per output channel
(dimension 0 for CONV_2D / FULLY_CONNECTED, 3 for DEPTHWISE_CONV_2D). Scale per channel:
"maxabs" = max|w|/127; "mse" = the clipping of max|w| (a grid search) that minimises the
channel's weight MSE. Bias: round(b_float / (S_in * S_w[c])), int32, zero-point 0.
"""

from __future__ import annotations

import copy

import numpy as np
from ai_edge_litert import schema_py_generated as schema

from inspector.core.errors import InputError
from inspector.core.requantize.surgery import Surgery, quant_t
from inspector.core.tflite import edit as fe
from inspector.core.tflite.op_facts import SURGICAL_WEIGHT_OPS, WEIGHTED_OPS

CLIP_GRID = np.linspace(0.3, 1.0, 71)


def output_dim(kind: str) -> int:
    """The output-channel dimension of a conv/FC op's weights (`OpRoles.channel_dim`)."""
    dim = WEIGHTED_OPS[kind].channel_dim
    if dim is None:
        raise ValueError(f"{kind} has no output-channel dimension")
    return dim


def channel_scales(w: np.ndarray, dim: int, rounding: str) -> np.ndarray:
    """Per-channel scales along `dim` ("maxabs" or "mse")."""
    x = np.moveaxis(np.asarray(w, np.float64), dim, 0).reshape(w.shape[dim], -1)
    amax = np.abs(x).max(axis=1)
    amax = np.where(amax > 0, amax, 1.0)
    if rounding == "maxabs":
        return amax / 127.0
    if rounding != "mse":
        raise ValueError(rounding)
    best = amax / 127.0
    best_err = np.full(len(amax), np.inf)
    for a in CLIP_GRID:
        s = (a * amax / 127.0)[:, None]
        err = ((x - s * np.clip(np.round(x / s), -127, 127)) ** 2).sum(axis=1)
        better = err < best_err
        best = np.where(better, s[:, 0], best)
        best_err = np.where(better, err, best_err)
    return best


def quantize_weights(w: np.ndarray, scales: np.ndarray, dim: int) -> np.ndarray:
    shape = [1] * w.ndim
    shape[dim] = len(scales)
    q: np.ndarray = np.clip(np.round(w / scales.reshape(shape)), -127, 127).astype(np.int8)
    return q


def input_scale(s: Surgery, op_index: int) -> float:
    t = s.bsg.tensors[s.bsg.operators[op_index].inputs[0]]
    if t.quantization is None or t.quantization.scale is None or len(t.quantization.scale) != 1:
        raise InputError(f"{s.describe(op_index)}: its input has no per-tensor quantization", s.qm.path)
    return float(t.quantization.scale[0])


def own_tensor(s: Surgery, op_index: int, position: int) -> int:
    """B's tensor at `position` of the op, copied first when another op reads it too."""
    op = s.bsg.operators[op_index]
    t = int(op.inputs[position])
    if len(fe.consumers(s.bsg, t)) > 1 or fe.buffer_users(s.bm, s.bsg.tensors[t].buffer) > 1:
        nt = copy.deepcopy(s.bsg.tensors[t])
        buf = schema.BufferT()
        buf.data = copy.deepcopy(s.bm.buffers[nt.buffer].data)
        s.bm.buffers.append(buf)
        nt.buffer = len(s.bm.buffers) - 1
        s.bsg.tensors.append(nt)
        t = len(s.bsg.tensors) - 1
        op.inputs = [t if k == position else int(v) for k, v in enumerate(op.inputs)]
    return t


def requantize_weights(s: Surgery, ops: tuple[int, ...], rounding: str) -> None:
    for i in ops:
        kind = s.qm.main.ops[i].type
        if kind not in SURGICAL_WEIGHT_OPS:
            raise InputError(f"{s.describe(i)} has no conv/FC weights to requantize", s.qm.path)
        dim = output_dim(kind)
        op = s.bsg.operators[i]
        wt = s.bsg.tensors[op.inputs[1]]
        if wt.type != schema.TensorType.INT8 or not s.qm.main.tensors[op.inputs[1]].is_constant:
            raise InputError(f"{s.describe(i)}: its weights are not int8 constants", s.qm.path)
        if s.bsg.tensors[op.inputs[0]].type != schema.TensorType.INT8:
            raise InputError(f"{s.describe(i)}: per-channel requantization needs an int8 input", s.qm.path)
        w = s.float_constant(i, 1)
        if w is None or tuple(w.shape) != tuple(wt.shape):
            raise InputError(f"{s.describe(i)}: the float model's weights do not match in shape", s.fm.path)
        sw = channel_scales(w, dim, rounding)
        was_per_channel = wt.quantization is not None and wt.quantization.scale is not None and len(wt.quantization.scale) > 1
        w_idx = own_tensor(s, i, 1)
        wt = s.bsg.tensors[w_idx]
        fe.set_buffer(s.bm, wt, quantize_weights(w, sw, dim), share_ok=True)
        wt.quantization = quant_t(sw, np.zeros(len(sw), np.int64), dim)
        s_in = input_scale(s, i)
        if len(op.inputs) > 2 and op.inputs[2] >= 0:
            b = s.float_constant(i, 2)
            if b is None:
                b = np.zeros(len(sw), np.float32)
            b_idx = own_tensor(s, i, 2)
            bt = s.bsg.tensors[b_idx]
            if bt.type != schema.TensorType.INT32:
                raise InputError(f"{s.describe(i)}: its bias is not int32", s.qm.path)
            bs = s_in * sw
            bq = np.clip(np.round(np.asarray(b, np.float64) / bs), -(2**31), 2**31 - 1).astype(np.int32)
            fe.set_buffer(s.bm, bt, bq, share_ok=True)
            bt.quantization = quant_t(bs, np.zeros(len(bs), np.int64), 0)
        what = "per-channel weights" + (" (MSE rounding)" if rounding == "mse" else "")
        if was_per_channel and rounding == "maxabs":
            s.notes.append(f"{s.describe(i)} already had per-channel weights; re-derived from the float weights")
        s.notes.append(f"{what}: {s.describe(i)}")
