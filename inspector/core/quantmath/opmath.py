"""The integer arithmetic behind one op of a quantized model, as the TFLite kernels do it.

For the op math panel and reports: which kernel path runs (see `kernel_path`), every
quantized tensor's parameters and representable float range, and the rescaling the kernel
derives from them, with (M0, shift) from `fixed_point.quantize_multiplier`:

- CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED / TRANSPOSE_CONV / BATCH_MATMUL: per output
  channel M = S1*S2[c]/S3 computed in double from the float32 scales
  (tflite::PopulateConvolutionQuantizationParams, tensorflow/lite/kernels/kernel_util.cc);
- ADD / SUB: left_shift 20 (8-bit) or 15 (16-bit), twice_max_input_scale = 2*max(S_in1, S_in2),
  real_input_multiplier = S_in/twice_max, real_output_multiplier = twice_max/((1<<left_shift)*S_out)
  (tensorflow/lite/kernels/add.cc Prepare, sub.cc PrepareGeneralSubOp); int16 ADD with power-of-two
  scales and zero zero-points (pot_scale_int16) uses plain shifts instead;
- MUL: M = S1*S2/S3 (tensorflow/lite/kernels/mul.cc Prepare);
- other int ops that rescale (QUANTIZE int->int, MEAN, ...): M = S_in/S_out.
Fused activations become a clamp in the quantized domain (CalculateActivationRangeQuantized).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from inspector.core.quantmath import opmath_text
from inspector.core.quantmath.blockwise import BlockwiseError, blockwise_params
from inspector.core.quantmath.fixed_point import quantize_multiplier
from inspector.core.quantmath.kernel_path import (
    PATH_LABELS,
    classify,
    input_at,
    is_quantized_int,
    quant_of,
    roles,
)
from inspector.core.quantmath.opmath_types import (  # noqa: F401  (re-exported)
    BlockwiseMath,
    ConvMath,
    HybridMath,
    Multiplier,
    ObservedLayers,
    OpMath,
    RescaleMath,
    TensorQuant,
)
from inspector.core.quantmath.quant import representable_range
from inspector.core.tflite.dtypes import INT_LIMITS
from inspector.core.tflite.model import Model, Op, Subgraph, Tensor
from inspector.core.tflite.op_facts import (
    ADD_SUB_OPS,
    HYBRID_CONV_OPS,
    SAME_SCALE_OPS,
    fixed_output,
)

# The result types live in `opmath_types` and are re-exported here, with the op fact the
# re-quantization reads from here too (mypy checks this module with no implicit re-export).
__all__ = [
    "SAME_SCALE_OPS", "BlockwiseMath", "ConvMath", "HybridMath", "Multiplier", "ObservedLayers", "OpMath",
    "RescaleMath", "TensorQuant", "activation_clamp", "blockwise_math", "compared_subgraph", "conv_math",
    "fixed_output_params", "hybrid_math", "observed_lookup", "op_math", "rescale_math", "tensor_quant",
]


def tensor_quant(t: Tensor, role: str, observed: dict[str, Any] | None = None, model: Model | None = None) -> TensorQuant:
    q = t.quantization
    lo = hi = None
    if q is not None and q.blockwise is not None:
        return _blockwise_tensor_quant(t, role, observed, model)
    if q is not None and t.dtype in INT_LIMITS:
        lo_a, hi_a = representable_range(q, t.dtype)
        lo, hi = tuple(float(v) for v in lo_a), tuple(float(v) for v in hi_a)
    return TensorQuant(
        role=role, index=t.index, name=t.name, dtype=t.dtype, shape=t.shape, is_constant=t.is_constant,
        scales=None if q is None else q.scales, zero_points=None if q is None else q.zero_points,
        quantized_dimension=None if q is None else q.quantized_dimension,
        range_lo=lo, range_hi=hi, observed=observed,
    )  # fmt: skip


def _blockwise_tensor_quant(t: Tensor, role: str, observed: dict[str, Any] | None, model: Model | None) -> TensorQuant:
    """A blockwise tensor: no scales of its own; block size, block count and scale range instead."""
    bw = quant_of(t).blockwise
    assert bw is not None  # called for blockwise tensors only
    lo = hi = None
    n = srange = None
    zps: tuple[int, ...] = ()  # (0,) when every block is symmetric; () when a zero-point tensor holds them
    if model is not None and t.dtype in INT_LIMITS:
        try:
            p = blockwise_params(model, t)
        except BlockwiseError:
            p = None
        if p is not None:
            qmin, qmax = INT_LIMITS[t.dtype]
            z = np.zeros_like(p.scales) if p.zero_points is None else p.zero_points
            lo, hi = (float(np.min(p.scales * (qmin - z))),), (float(np.max(p.scales * (qmax - z))),)
            n, srange = p.num_blocks, p.scale_range
            zps = (0,) if p.zero_points is None else ()
    return TensorQuant(
        role=role, index=t.index, name=t.name, dtype=t.dtype, shape=t.shape, is_constant=t.is_constant,
        scales=(), zero_points=zps, quantized_dimension=None, range_lo=lo, range_hi=hi, observed=observed,
        block_size=bw.block_size, num_blocks=n, block_scale_range=srange,
    )  # fmt: skip


def _op_tensors(sg: Subgraph, op: Op, observed: Callable[[int], dict[str, Any] | None],
                model: Model | None = None) -> list[TensorQuant]:
    r = roles(op)
    names = {}
    if r is not None:
        names = {r.activation: "input", r.weights: "weights"}
        if r.bias is not None:
            names[r.bias] = "bias"
        if op.type == "BATCH_MATMUL":
            w1 = input_at(sg, op, 1)
            names = {0: "input", 1: "weights" if w1 is not None and w1.is_constant else "input 2"}
    out: list[TensorQuant] = []
    n_in = sum(1 for i in op.inputs if i >= 0)
    for pos, ti in enumerate(op.inputs):
        if ti < 0:
            continue
        role = names.get(pos, "input" if n_in == 1 else f"input {pos + 1}")
        out.append(tensor_quant(sg.tensors[ti], role, observed(ti), model))
    for k, ti in enumerate(op.outputs):
        if ti >= 0:
            out.append(tensor_quant(sg.tensors[ti], "output" if len(op.outputs) == 1 else f"output {k + 1}", observed(ti)))
    return out


# ------------------------------------------------------------------ kernels
def activation_clamp(op: Op, out: Tensor) -> tuple[int, int]:
    """Output clamp of a fused activation in quantized units (CalculateActivationRangeQuantized)."""
    qmin, qmax = INT_LIMITS[out.dtype]
    q = out.quantization
    if q is None:
        return qmin, qmax
    s, z = np.float32(q.scales[0]), q.zero_points[0]

    def quant(f: float) -> int:  # zero_point + TfLiteRound(f / scale), in float32 like the kernel
        v = float(np.float32(f) / s)
        return z + int(math.copysign(math.floor(abs(v) + 0.5), v))

    act = op.options.get("fused_activation_function", "NONE")
    if act == "RELU":
        return max(qmin, quant(0.0)), qmax
    if act == "RELU6":
        return max(qmin, quant(0.0)), min(qmax, quant(6.0))
    if act == "RELU_N1_TO_1":
        return max(qmin, quant(-1.0)), min(qmax, quant(1.0))
    return qmin, qmax


def _mult(name: str, formula: str, real: float) -> Multiplier:
    m0, shift = quantize_multiplier(real)
    return Multiplier(name, formula, float(real), m0, shift)


def conv_math(sg: Subgraph, op: Op) -> ConvMath | None:
    r = roles(op)
    if r is None:
        return None
    a, w, out = input_at(sg, op, r.activation), input_at(sg, op, r.weights), sg.tensors[op.outputs[0]]
    b = input_at(sg, op, r.bias)
    if not (is_quantized_int(a) and is_quantized_int(w) and is_quantized_int(out)):
        return None
    s1, s3 = float(quant_of(a).scales[0]), float(quant_of(out).scales[0])
    s2 = np.asarray(quant_of(w).scales, np.float64)
    m = s1 * s2 / s3  # double(S1) * double(S2[c]) / double(S3), as the kernel computes it
    fixed = [quantize_multiplier(float(v)) for v in m]
    expected = s1 * s2
    actual = ratio = None
    if b is not None and b.quantization is not None:
        act = np.asarray(b.quantization.scales, np.float64)
        exp_b = np.broadcast_to(expected, act.shape) if expected.size == 1 else expected
        if act.size == exp_b.size or act.size == 1:
            actual = tuple(float(v) for v in act)
            ratio = tuple(float(v) for v in np.broadcast_to(act, exp_b.shape) / exp_b)
    return ConvMath(
        input_scale=s1, input_zero_point=quant_of(a).zero_points[0],
        weight_scales=tuple(float(v) for v in s2), weight_zero_points=quant_of(w).zero_points,
        per_channel=quant_of(w).per_channel,
        output_scale=s3, output_zero_point=quant_of(out).zero_points[0],
        multipliers=tuple(float(v) for v in m), m0=tuple(f[0] for f in fixed), shifts=tuple(f[1] for f in fixed),
        accumulator="int64" if a.dtype == "int16" else "int32",
        bias_dtype=None if b is None else b.dtype,
        bias_scale_expected=tuple(float(v) for v in expected), bias_scale_actual=actual, bias_scale_ratio=ratio,
        clamp=activation_clamp(op, out),
    )  # fmt: skip


def fixed_output_params(op: Op, sg: Subgraph) -> tuple[float, int] | None:
    ins = [sg.tensors[i] for i in op.inputs if i >= 0]
    outs = [sg.tensors[o] for o in op.outputs if o >= 0]
    if not ins or not outs:
        return None
    return fixed_output(op.type, ins[0].dtype, outs[0].dtype)


def rescale_math(sg: Subgraph, op: Op) -> RescaleMath | None:
    ins = [sg.tensors[i] for i in op.inputs if i >= 0]
    outs = [sg.tensors[o] for o in op.outputs if o >= 0]
    if not outs:
        return None
    out = outs[0]
    qins = [t for t in ins if is_quantized_int(t) and not (t.dtype == "int32")]
    if op.type == "QUANTIZE" and ins and not is_quantized_int(ins[0]) and is_quantized_int(out):
        return RescaleMath("quantize", None, None, (), None, None)
    if op.type == "DEQUANTIZE":
        return RescaleMath("dequantize", None, None, (), None, None)
    if not is_quantized_int(out) or not qins:
        return None
    s_out = float(quant_of(out).scales[0])
    clamp = activation_clamp(op, out) if out.dtype in INT_LIMITS else None
    if op.type in ADD_SUB_OPS and len(qins) >= 2:
        s1, s2 = float(quant_of(qins[0]).scales[0]), float(quant_of(qins[1]).scales[0])
        zs = [quant_of(t).zero_points[0] for t in (qins[0], qins[1], out)]
        int16 = out.dtype == "int16"
        pot = int16 and bool(op.options.get("pot_scale_int16", False)) and all(z == 0 for z in zs) and all(
            _is_pot(s) for s in (s1, s2, s_out))
        if pot:
            shifts = tuple(round(math.log2(s)) - round(math.log2(s_out)) for s in (s1, s2))
            return RescaleMath("add_sub_pot", None, None, (), shifts, clamp)
        left = 15 if int16 else 20
        twice = 2 * max(s1, s2)
        mults = (
            _mult("input 1", "S_in1 / (2·max(S_in1, S_in2))", s1 / twice),
            _mult("input 2", "S_in2 / (2·max(S_in1, S_in2))", s2 / twice),
            _mult("output", f"2·max(S_in1, S_in2) / (2^{left}·S_out)", twice / ((1 << left) * s_out)),
        )
        return RescaleMath("add_sub", left, twice, mults, None, clamp)
    if op.type == "MUL" and len(qins) >= 2:
        s1, s2 = float(quant_of(qins[0]).scales[0]), float(quant_of(qins[1]).scales[0])
        return RescaleMath("mul", None, None, (_mult("output", "S_in1·S_in2 / S_out", s1 * s2 / s_out),), None, clamp)
    if fixed_output_params(op, sg) is not None:
        return RescaleMath("fixed_output", None, None, (), None, clamp)
    if op.type in SAME_SCALE_OPS:
        return RescaleMath("same_scale", None, None, (), None, clamp)
    s_in = float(quant_of(qins[0]).scales[0])
    return RescaleMath("requantize", None, None, (_mult("output", "S_in / S_out", s_in / s_out),), None, clamp)


def _is_pot(s: float) -> bool:
    return s > 0 and abs(math.log2(s) - round(math.log2(s))) < 1e-3  # CheckedLog2 tolerance


def blockwise_math(model: Model, w: Tensor) -> BlockwiseMath:
    """Block size, counts and scale ranges of blockwise weights (or the problem with them)."""
    bw = quant_of(w).blockwise
    assert bw is not None  # called for blockwise weights only
    n_in = w.shape[-1] if w.shape else 0
    try:
        p = blockwise_params(model, w)
    except BlockwiseError as e:
        return BlockwiseMath(bw.block_size, n_in, 0, 0, math.nan, math.nan, "", "", (), (), str(e))
    rows = p.scales.reshape(-1, p.blocks_per_row)
    return BlockwiseMath(
        block_size=p.block_size, input_channels=n_in, blocks_per_row=p.blocks_per_row, num_blocks=p.num_blocks,
        scale_min=p.scale_range[0], scale_max=p.scale_range[1], scale_tensor=p.scale_tensor,
        zero_points="0 (symmetric)" if p.zero_point_tensor is None else p.zero_point_tensor,
        row_scale_min=tuple(float(v) for v in rows.min(axis=1)), row_scale_max=tuple(float(v) for v in rows.max(axis=1)),
    )  # fmt: skip


def hybrid_math(sg: Subgraph, op: Op, model: Model | None = None) -> HybridMath | None:
    w = next((sg.tensors[i] for i in op.inputs if i >= 0 and sg.tensors[i].is_constant
              and is_quantized_int(sg.tensors[i])), None)  # fmt: skip
    if w is None:
        return None
    r = roles(op)
    a = input_at(sg, op, r.activation) if r else next((sg.tensors[i] for i in op.inputs if i >= 0), None)
    out = sg.tensors[op.outputs[0]]
    q = quant_of(w)  # w is quantized (picked above)
    # FULLY_CONNECTED / BATCH_MATMUL follow their asymmetric_quantize_inputs option; per-channel
    # hybrid convolutions always quantize inputs asymmetrically (conv.cc EvalHybridPerChannel
    # calls AsymmetricQuantizeFloats), per-tensor ones symmetrically (EvalHybrid).
    asym = bool(op.options.get("asymmetric_quantize_inputs", False))
    if op.type in HYBRID_CONV_OPS:
        asym = q.per_channel
    if q.blockwise is not None:
        return HybridMath(
            weight_scales=(), weight_zero_points=(), per_channel=False, asymmetric_quantize_inputs=True,
            input_dtype=a.dtype if a is not None else "?", output_dtype=out.dtype, weight_dtype=w.dtype,
            blockwise=blockwise_math(model, w) if model is not None else None,
        )  # fmt: skip
    return HybridMath(
        weight_scales=q.scales, weight_zero_points=q.zero_points, per_channel=q.per_channel,
        asymmetric_quantize_inputs=asym,
        input_dtype=a.dtype if a is not None else "?", output_dtype=out.dtype, weight_dtype=w.dtype,
    )  # fmt: skip


# ------------------------------------------------------------------ entry point
def observed_lookup(comparison: ObservedLayers | None, sg: Subgraph) -> Callable[[int], dict[str, Any] | None]:
    """tensor index -> {range_use, clip_rate, sqnr_db} from a comparison result (typed). Only the
    few tensors of the op asked for get their figures: a result arriving asks this for the
    selected op, and building them for all 1,500 layers of a large model (1,500 dicts, and the
    cyclic collection their allocation set off) held the GUI thread 160-220 ms."""
    layers = {} if comparison is None else {layer.quant_tensor: layer for layer in comparison.layers}

    def figures(ti: int) -> dict[str, Any] | None:
        layer = layers.get(ti) if 0 <= ti < len(sg.tensors) else None
        if layer is None:
            return None
        m = layer.metrics
        return {"range_use": m.range_use, "clip_rate": m.clip_rate, "sqnr_db": m.sqnr_db if math.isfinite(m.sqnr_db) else None}

    return figures


def compared_subgraph(model: Model, comparison: ObservedLayers) -> int | None:
    """The subgraph of `model` whose tensors a comparison's layers index: its signature's, else 0
    (None: the signature is not in the model)."""
    key = getattr(comparison, "signature", None)
    if key is None:
        return 0
    return next((s.subgraph for s in model.signatures if s.key == key), None)


def op_math(model: Model, op_index: int, subgraph: int | None = None, comparison: ObservedLayers | None = None) -> OpMath:
    """Everything the op math panel shows for op `op_index` of `subgraph` (None: the subgraph the
    model view compares, `model.main`: a signature's, so op indices and `comparison` agree)."""
    sg = model.main if subgraph is None else model.subgraphs[subgraph]
    subgraph = sg.index
    if not 0 <= op_index < len(sg.ops):
        raise IndexError(f"op {op_index} does not exist (subgraph {subgraph} has {len(sg.ops)} ops)")
    op = sg.ops[op_index]
    path = classify(sg, op)
    if comparison is not None and compared_subgraph(model, comparison) != sg.index:
        comparison = None  # its tensor indices are another subgraph's
    tensors = tuple(_op_tensors(sg, op, observed_lookup(comparison, sg), model))
    conv = conv_math(sg, op) if path.startswith("full_integer") else None
    rescale = rescale_math(sg, op) if path.startswith("full_integer") and conv is None else None
    hybrid = hybrid_math(sg, op, model) if path == "hybrid" else None
    fixed = fixed_output_params(op, sg)
    text = opmath_text.explain(op, path, tensors, conv, rescale, hybrid, fixed)
    return OpMath(subgraph, op_index, op.type, path, PATH_LABELS[path], tensors, conv, rescale, hybrid, tuple(text))
