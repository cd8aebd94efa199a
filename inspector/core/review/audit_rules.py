"""Per-op checks of the TFLite int8 / 16x8 quantization specification.

Tolerances (relative):
- bias scale vs S_in*S_w: BIAS_SCALE_RTOL = 1e-5. The converter stores float32(S_in*S_w), which
  differs from the double product by < 1.2e-7 (one float32 rounding); anything beyond ~80 float32
  ulps is a different scale, and the kernel would silently read the bias in units of S_in*S_w.
  A bias whose values are all zero is unaffected by its scale: reported as info, not error.
- fixed output params (LOGISTIC, SOFTMAX, TANH, ...): FIXED_OUTPUT_RTOL = 1e-3, the tolerance of
  the kernels' own TF_LITE_ENSURE_NEAR checks (activations.cc); zero-points must match exactly.
- same-scale ops: SAME_SCALE_RTOL = 1e-6 on scales, zero-points exact.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from inspector.core.quantmath.blockwise import blockwise_problems
from inspector.core.quantmath.kernel_path import input_at, is_quantized_int, quant_of, roles
from inspector.core.quantmath.opmath import fixed_output_params
from inspector.core.tflite.dtypes import QUANTIZED_DTYPES
from inspector.core.tflite.model import Model, Op, Subgraph, Tensor
from inspector.core.tflite.op_facts import SAME_SCALE_OPS, UNQUANTIZED_INT_OPS, OpRoles

BIAS_SCALE_RTOL = 1e-5
FIXED_OUTPUT_RTOL = 1e-3
SAME_SCALE_RTOL = 1e-6
SCALE_SPREAD = 100.0  # per-channel scales differing by more than this factor



def _f(severity: str, rule: str, op: Op | None, t: Tensor | None, message: str,
       observed: Any = None, expected: Any = None) -> dict[str, Any]:
    return {
        "severity": severity, "rule": rule,
        "op_index": None if op is None else op.index, "op_type": None if op is None else op.type,
        "tensor_index": None if t is None else t.index, "tensor_name": None if t is None else t.name,
        "message": message, "observed": observed, "expected": expected,
    }  # fmt: skip


def check_op(model: Model, sg: Subgraph, op: Op, path: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    r = roles(op)
    if r is not None:
        w = input_at(sg, op, r.weights)
        if w is not None and w.is_constant and is_quantized_int(w):
            out += _weights(model, op, w, r.channel_dim)
        if path.startswith("full_integer") and r.bias is not None:
            out += _bias(model, sg, op, r, path)
    if path.startswith("full_integer"):
        out += _preserve_scale(sg, op)
        out += _fixed_output(sg, op)
    return out


# ------------------------------------------------------------------ weights
def _weights(model: Model, op: Op, w: Tensor, channel_dim: int | None) -> list[dict[str, Any]]:
    out = []
    q = w.quantization
    assert q is not None
    if q.blockwise is not None:
        return _blockwise(model, op, w)
    nz = sorted({z for z in q.zero_points if z != 0})
    if nz:
        out.append(_f("error", "weight-zero-point", op, w,
                      f"int8 weights must be symmetric (zero-point 0); this tensor has zero-point(s) {nz[:5]}. "
                      "Integer conv/FC kernels assume Z2 = 0 and ignore it (or reject the model).",
                      observed=nz[:8], expected=0))  # fmt: skip
    data = model.tensor_data(w)
    lo_allowed = {"int8": -127, "int4": -7}.get(w.dtype)
    if data is not None and lo_allowed is not None:
        n_low = int(np.count_nonzero(data < lo_allowed))
        if n_low:
            out.append(_f("error", "weight-range", op, w,
                          f"{n_low} weight value(s) equal {lo_allowed - 1}: the {w.dtype} weight range is restricted to "
                          f"[{lo_allowed}, {-lo_allowed}] so that optimized kernels may accumulate pairs of products without overflow.",
                          observed={"count": n_low, "min": int(data.min())}, expected=f">= {lo_allowed}"))  # fmt: skip
    if q.per_channel:
        if channel_dim is not None and q.quantized_dimension != channel_dim:
            out.append(_f("error", "weight-channel-dimension", op, w,
                          f"per-channel weights of {op.type} must be quantized along dimension {channel_dim} "
                          f"(the output channels); this tensor uses dimension {q.quantized_dimension}.",
                          observed=q.quantized_dimension, expected=channel_dim))  # fmt: skip
        dim = q.quantized_dimension
        if 0 <= dim < len(w.shape) and w.shape[dim] != q.num_channels:
            out.append(_f("error", "weight-channel-count", op, w,
                          f"{q.num_channels} scales for {w.shape[dim]} channels along dimension {dim}.",
                          observed=q.num_channels, expected=w.shape[dim]))  # fmt: skip
        s = np.asarray(q.scales, np.float64)
        if s.min() > 0 and s.max() / s.min() > SCALE_SPREAD:
            out.append(_f("warning", "channel-scale-spread", op, w,
                          f"per-channel weight scales differ by {s.max() / s.min():.0f}x across channels: a few channels "
                          "have a much wider range than the rest (outliers, or dead channels) — check them, consider "
                          "equalization or keeping this layer in higher precision.",
                          observed={"min": float(s.min()), "max": float(s.max())}, expected=f"max/min <= {SCALE_SPREAD:g}"))  # fmt: skip
    axis = q.quantized_dimension if q.per_channel else channel_dim
    if data is not None and axis is not None and 0 <= axis < data.ndim and data.size:
        moved = np.moveaxis(data, axis, 0).reshape(data.shape[axis], -1)
        dead = np.flatnonzero(~moved.any(axis=1))
        if dead.size:
            out.append(_f("warning", "all-zero-channel", op, w,
                          f"{dead.size} of {moved.shape[0]} output channels have all-zero weights (pruned or dead "
                          "filters): they cost compute and their outputs carry only the bias.",
                          observed=dead[:16].tolist(), expected="no all-zero channel"))  # fmt: skip
    return out


def _blockwise(model: Model, op: Op, w: Tensor) -> list[dict[str, Any]]:
    """Blockwise weights: the block size divides the input dimension, the scale (and zero-point)
    tensors are constants of shape [out, in / block size]; otherwise the runtime misreads them."""
    out = []
    for kind, message, observed, expected in blockwise_problems(model, w):
        out.append(_f("error", f"blockwise-{kind}", op, w, f"blockwise weights of {op.type}: {message}.",
                      observed=observed, expected=expected))  # fmt: skip
    return out


# ------------------------------------------------------------------ bias
def _bias(model: Model, sg: Subgraph, op: Op, r: OpRoles, path: str) -> list[dict[str, Any]]:
    b = input_at(sg, op, r.bias)
    a, w = input_at(sg, op, r.activation), input_at(sg, op, r.weights)
    if b is None or not is_quantized_int(a) or not is_quantized_int(w):
        return []
    out = []
    wide = path == "full_integer_16x8"
    if wide and b.dtype == "int32":
        out.append(_f("warning", "bias-dtype", op, b,
                      "16x8 bias is int32: accepted by recent runtimes, but the 16x8 specification uses int64 and an "
                      "int32 bias can overflow for large accumulations.", observed=b.dtype, expected="int64"))  # fmt: skip
    elif b.dtype != ("int64" if wide else "int32"):
        out.append(_f("error", "bias-dtype", op, b,
                      f"the bias of a {'16x8' if wide else 'int8'} {op.type} must be {'int64' if wide else 'int32'} "
                      f"(it is added to the integer accumulator); found {b.dtype}.",
                      observed=b.dtype, expected="int64" if wide else "int32"))  # fmt: skip
        return out
    bq = b.quantization
    if bq is None:
        out.append(_f("warning", "bias-scale", op, b, "the bias has no quantization parameters; the kernel assumes scale "
                      "S_in·S_w and zero-point 0.", observed=None, expected="scale S_in·S_w"))  # fmt: skip
        return out
    nz = sorted({z for z in bq.zero_points if z != 0})
    if nz:
        out.append(_f("error", "bias-zero-point", op, b, f"bias zero-point must be 0; found {nz[:5]}.",
                      observed=nz[:8], expected=0))  # fmt: skip
    s_in = float(quant_of(a).scales[0])  # the caller checked both tensors are quantized
    expected = s_in * np.asarray(quant_of(w).scales, np.float64)
    actual = np.asarray(bq.scales, np.float64)
    if expected.size not in (1, actual.size) and actual.size != 1:
        out.append(_f("error", "bias-scale", op, b, f"{actual.size} bias scales for {expected.size} weight channels.",
                      observed=actual.size, expected=expected.size))  # fmt: skip
        return out
    ratio = np.broadcast_to(actual, np.broadcast_shapes(actual.shape, expected.shape)) / expected
    worst = int(np.argmax(np.abs(ratio - 1)))
    dev = float(abs(ratio.flat[worst] - 1))
    if dev > BIAS_SCALE_RTOL:
        data = model.tensor_data(b)
        zero = data is not None and not np.any(data)
        obs = {"channel": worst, "scale": float(np.broadcast_to(actual, ratio.shape).flat[worst]),
               "ratio": float(ratio.flat[worst])}  # fmt: skip
        exp = {"scale": float(np.broadcast_to(expected, ratio.shape).flat[worst]), "rtol": BIAS_SCALE_RTOL}
        if zero:
            out.append(_f("info", "bias-scale", op, b,
                          f"bias scale is off from S_in·S_w by {dev:.1%} (channel {worst}), but every bias value is 0, "
                          "so the scale has no effect (a shared all-zero bias tensor).", observed=obs, expected=exp))  # fmt: skip
        else:
            out.append(_f("error", "bias-scale", op, b,
                          f"bias scale must equal S_in·S_w per channel; channel {worst} is off by {dev:.2%} "
                          f"(ratio {ratio.flat[worst]:.6g}). The kernel adds the bias in units of S_in·S_w, so the bias "
                          "is effectively scaled by that ratio.", observed=obs, expected=exp))  # fmt: skip
    return out


# ------------------------------------------------------------------ activations
def _preserve_scale(sg: Subgraph, op: Op) -> list[dict[str, Any]]:
    if op.type not in SAME_SCALE_OPS:
        return []
    outs = [sg.tensors[o] for o in op.outputs if o >= 0 and is_quantized_int(sg.tensors[o])]
    if not outs or outs[0].dtype not in ("int8", "int16"):
        return []
    ref = outs[0]
    data_ins = [sg.tensors[i] for i in op.inputs if i >= 0 and sg.tensors[i].dtype == ref.dtype
                and is_quantized_int(sg.tensors[i])]  # fmt: skip
    out = []
    rq = quant_of(ref)  # is_quantized_int: every tensor compared has quantization
    for t in data_ins + outs[1:]:
        q = quant_of(t)
        same = abs(q.scales[0] - rq.scales[0]) <= SAME_SCALE_RTOL * rq.scales[0] and q.zero_points[0] == rq.zero_points[0]
        if not same:
            out.append(_f("error", "preserve-scale", op, t,
                          f"{op.type} does not rescale: its {ref.dtype} kernel copies integers, so '{t.name}' must have the "
                          f"output's scale and zero-point; otherwise values are silently reinterpreted (or the kernel rejects the model).",
                          observed={"scale": q.scales[0], "zero_point": q.zero_points[0]},
                          expected={"scale": rq.scales[0], "zero_point": rq.zero_points[0]}))  # fmt: skip
    return out


def _fixed_output(sg: Subgraph, op: Op) -> list[dict[str, Any]]:
    want = fixed_output_params(op, sg)
    if want is None:
        return []
    out_t = sg.tensors[op.outputs[0]]
    q = out_t.quantization
    s, z = want
    if q is None:
        return [_f("error", "fixed-output", op, out_t, f"{op.type} output has no quantization; it must be scale {s:g}, zero-point {z}.",
                   observed=None, expected={"scale": s, "zero_point": z})]  # fmt: skip
    if abs(q.scales[0] - s) > FIXED_OUTPUT_RTOL * s or q.zero_points[0] != z:
        return [_f("error", "fixed-output", op, out_t,
                   f"{op.type} with {out_t.dtype} output must use scale {s:g} and zero-point {z} (its output range is "
                   f"fixed); found scale {q.scales[0]:.6g}, zero-point {q.zero_points[0]}. The kernel rejects this model "
                   "or computes with the wrong output grid.",
                   observed={"scale": q.scales[0], "zero_point": q.zero_points[0]},
                   expected={"scale": s, "zero_point": z, "rtol": FIXED_OUTPUT_RTOL})]  # fmt: skip
    return []


def check_activations(sg: Subgraph, producers: Mapping[int, Op]) -> list[dict[str, Any]]:
    """int16 activations symmetric; integer activations carrying quantization parameters."""
    out = []
    consumers = sg.consumers()
    for t in sg.tensors:
        if t.is_constant or t.dtype not in QUANTIZED_DTYPES:
            continue
        op = producers.get(t.index) or next(iter(consumers.get(t.index) or ()), None)
        if t.quantization is None:
            if op is not None and op.type not in UNQUANTIZED_INT_OPS:
                out.append(_f("error", "missing-quantization", op, t,
                              f"{t.dtype} activation without scale/zero-point: integer kernels cannot interpret it.",
                              observed=None, expected="scale and zero-point"))  # fmt: skip
            continue
        if t.dtype == "int16" and any(z != 0 for z in t.quantization.zero_points):
            out.append(_f("error", "int16-zero-point", op, t,
                          "int16 activations (16x8) must be symmetric with zero-point 0; the int16 kernels assume it.",
                          observed=list(t.quantization.zero_points[:4]), expected=0))  # fmt: skip
    return out
