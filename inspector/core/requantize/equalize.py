"""Cross-layer equalization of a producer P and its one consumer C (Nagel et al. 2019, "Data-Free
Quantization Through Weight Equalization and Bias Correction", §4.1).

P (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED) ends in no activation or ReLU, both positively
homogeneous (f(x/s) = f(x)/s for s > 0), so dividing P's output channel i (weights and bias) by
s_i and multiplying C's input channel i by s_i leaves the float function unchanged. From model A's
float weights, with r1_i = max|W_P| over output channel i and r2_i = max|W_C| over input channel i
(the symmetric per-channel grids are set by max|w|), s_i = √(r1_i·r2_i) / r2_i makes both √(r1_i·r2_i)
(s_i = 1 where either is 0). A depthwise P divides its channel i; a depthwise C multiplies its
channel(s) of input channel i. On B: both ops' weights are quantized per channel from the rescaled
float weights (symmetric, [−127, 127], zero point 0), P's output tensor (C's input) is re-calibrated
(min/max) from A's values of that tensor on the calibration samples divided by s per channel
(exact by homogeneity), and both int32 biases are re-derived: round(b / (S_in·S_w[c])). Nothing
else changes. Pairs apply in plan order; a later pair starts from the float weights an earlier one
left (an op may be the consumer of one pair and the producer of the next). Each pair leaves a
record in `Surgery.equalized` (the result's JSON `equalized`): the ops, s per channel, P's output
channel-range ratio (largest ÷ median) before and after, its scale and zero point before and after.
The written model carries what a comparison needs to take A's reference like for like (P's output
÷ s, P's weights ÷ s, C's weights × s) in its metadata entry `tflite_inspector.equalize`
(`compare/equalized.py`), so a later `compare` of A with it is honest; nothing else changes. On a B
equalized before, the float weights and P's output values start from that record (`Surgery.
float_constant`, `measure`), and the factors of a pair equalized again compose in the record.
A producer ending in ReLU6 is equalized by `relu6_equalize` (`relu6.py`): its ReLU6 becomes ReLU
in B first (a change of the float function, measured there), P's output range is measured on A
with the same change, and the record marks the pair `"activation": "RELU"`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from ai_edge_litert import schema_py_generated as schema

from inspector.core.compare.equalized import METADATA_NAME, equalization_of, record
from inspector.core.errors import InputError
from inspector.core.requantize import measure
from inspector.core.requantize.bias_correction import add_zero_bias
from inspector.core.requantize.recalibrate import int8_params
from inspector.core.requantize.surgery import Surgery, quant_t
from inspector.core.requantize.weight_requant import (
    channel_scales,
    input_scale,
    output_dim,
    own_tensor,
    quantize_weights,
)
from inspector.core.samples.spec import Sample
from inspector.core.tflite import edit as fe
from inspector.core.tflite.equalize_pair import consumer_of
from inspector.core.tflite.model import Model
from inspector.core.tflite.op_facts import WEIGHTED_OPS
from inspector.core.writing import json_float


def _rows(w: np.ndarray, dim: int) -> np.ndarray:
    return np.moveaxis(np.asarray(w, np.float64), dim, 0).reshape(w.shape[dim], -1)


def producer_ranges(w: np.ndarray, p_type: str) -> np.ndarray:
    """r1: max|w| of P's float weights per output channel."""
    r: np.ndarray = np.abs(_rows(w, output_dim(p_type))).max(axis=1)
    return r


def consumer_ranges(w: np.ndarray, c_type: str, channels: int) -> np.ndarray:
    """r2: max|w| of C's float weights per input channel (a depthwise C: over its multiplier's columns)."""
    dim = _input_dim(c_type)
    per = w.shape[dim] // channels  # depthwise: column k reads input channel k // per; else 1
    r: np.ndarray = np.abs(_rows(w, dim)).max(axis=1).reshape(channels, per).max(axis=1)
    return r


def _input_dim(c_type: str) -> int:
    """The dimension of a consumer's weights that reads its input channels (`OpRoles.input_dim`)."""
    dim = WEIGHTED_OPS[c_type].input_dim
    if dim is None:
        raise ValueError(f"{c_type} is not a consumer equalization scales")
    return dim


def equalization_scales(r1: np.ndarray, r2: np.ndarray) -> np.ndarray:
    """s_i = √(r1_i·r2_i) / r2_i, 1 where either range is 0 (or not finite)."""
    r1, r2 = np.asarray(r1, np.float64), np.asarray(r2, np.float64)
    ok = (r1 > 0) & (r2 > 0) & np.isfinite(r1) & np.isfinite(r2)
    return np.where(ok, np.sqrt(np.where(ok, r1 * r2, 1.0)) / np.where(ok, r2, 1.0), 1.0)


def scale_producer(w: np.ndarray, b: np.ndarray | None, p_type: str, s: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """P's weights and bias with output channel i divided by s_i."""
    dim = output_dim(p_type)
    shape = [1] * w.ndim
    shape[dim] = len(s)
    w2 = (np.asarray(w, np.float64) / s.reshape(shape)).astype(np.float32)
    return w2, None if b is None else (np.asarray(b, np.float64).reshape(-1) / s).astype(np.float32)


def scale_consumer(w: np.ndarray, c_type: str, s: np.ndarray) -> np.ndarray:
    """C's weights with input channel i multiplied by s_i."""
    w = np.asarray(w, np.float64)
    dim = _input_dim(c_type)
    shape = [1] * w.ndim
    shape[dim] = -1
    per = w.shape[dim] // len(s)  # depthwise: column k reads input channel k // per; else 1
    out: np.ndarray = (w * np.repeat(s, per).reshape(shape)).astype(np.float32)
    return out


@dataclass
class _FloatOp:
    """An op's float weights and bias as the equalization leaves them (A's to start with)."""

    weights: np.ndarray
    bias: np.ndarray | None


def _spread(lo: np.ndarray, hi: np.ndarray) -> float:
    """Largest channel range ÷ median channel range."""
    r = np.asarray(hi, np.float64) - np.asarray(lo, np.float64)
    med = float(np.median(r))
    return float(r.max() / med) if med > 0 else float("inf")


def equalize(s: Surgery, pairs: Sequence[tuple[int, int]], samples: Sequence[Sample], runtime: str = "optimized",
             float_model: Model | None = None, relu6: Sequence[int] = ()) -> None:  # fmt: skip
    """Equalize each (P, C) of `pairs` in B (see the module docstring). `relu6`: producers whose
    ReLU6 the caller replaced by ReLU in B (`relu6.py`), `float_model` then A with the same change
    (P's output range is measured on it)."""
    qm = s.qm
    floats: dict[int, _FloatOp] = {}

    def current(i: int) -> _FloatOp:
        if i not in floats:
            wt = qm.main.tensors[qm.main.ops[i].inputs[1]]
            w = s.float_constant(i, 1)
            if w is None or tuple(w.shape) != tuple(wt.shape):
                raise InputError(f"equalize: {s.describe(i)}: the float model's weights do not match in shape", s.fm.path)
            floats[i] = _FloatOp(w, _float_bias(s, i))
        return floats[i]

    scales: dict[int, np.ndarray] = {}
    for p, c in pairs:
        if consumer_of(qm, p, p in relu6) != c:
            raise InputError(f"equalize: {s.describe(c)} is not the one consumer of {s.describe(p)}", qm.path)
        if p in scales:
            raise InputError(f"equalize: {s.describe(p)} is selected twice", qm.path)
        p_type, c_type = qm.main.ops[p].type, qm.main.ops[c].type
        fp, fc = current(p), current(c)
        channels = qm.main.tensors[qm.main.ops[p].outputs[0]].shape[-1]
        r1 = producer_ranges(fp.weights, p_type)
        r2 = consumer_ranges(fc.weights, c_type, channels)
        if len(r1) != channels:
            raise InputError(f"equalize: {s.describe(p)} has {len(r1)} weight channels for {channels} output channels", qm.path)
        sc = equalization_scales(r1, r2)
        fp.weights, fp.bias = scale_producer(fp.weights, fp.bias, p_type, sc)
        fc.weights = scale_consumer(fc.weights, c_type, sc)
        scales[p] = sc

    # P's output tensor (C's input): A's values ÷ s per channel, min/max over the calibration samples.
    outs = {p: qm.main.ops[p].outputs[0] for p, _ in pairs}
    ranges = measure.channel_ranges(float_model or s.fm, qm, s.pairing, list(outs.values()), samples, runtime)
    for p, c in pairs:
        t = outs[p]
        lo_c, hi_c = ranges[t]
        sc = scales[p]
        lo, hi = float((lo_c / sc).min()), float((hi_c / sc).max())
        old = s.bsg.tensors[t].quantization
        scale, zp = int8_params(lo, hi)
        s.bsg.tensors[t].quantization = quant_t(np.array([scale]), np.array([zp]), 0)
        s.equalized.append({
            "producer": p, "consumer": c, "tensor": qm.main.tensors[t].name, "scales": [float(v) for v in sc],
            "channel_range_ratio_before": json_float(float(_spread(lo_c, hi_c))), "channel_range_ratio_after": json_float(float(_spread(lo_c / sc, hi_c / sc))),
            "output_scale_before": float(old.scale[0]), "output_zero_point_before": int(old.zeroPoint[0]),
            "output_scale_after": scale, "output_zero_point_after": zp,
        })
        s.notes.append(
            f"equalized {s.describe(p)} with {s.describe(c)}: s from {sc.min():.3g} to {sc.max():.3g}; its output's channel "
            f"ranges (largest ÷ median) {_spread(lo_c, hi_c):.1f} → {_spread(lo_c / sc, hi_c / sc):.1f}; output scale "
            f"{float(old.scale[0]):.4g} → {scale:.4g}, zero-point {zp}; op {p}'s output is the float model's ÷ s per "
            f"channel (by design), recorded in the model's metadata '{METADATA_NAME}', so comparisons take that as its reference"
        )
    for i in sorted(floats):
        _write_op(s, i, floats[i])
    _record(s, [(p, c, outs[p], scales[p]) for p, c in pairs], relu6)


def _record(s: Surgery, done: Sequence[tuple[int, int, int, np.ndarray]], relu6: Sequence[int] = ()) -> None:
    """B's metadata entry `tflite_inspector.equalize`: the pairs equalized here, and those an
    earlier equalization of B recorded for other producers."""
    qm = s.qm
    earlier = equalization_of(qm)
    marked = {*relu6, *(e.producer for e in (earlier.pairs if earlier is not None else ()) if e.relu6)}  # stays marked
    rows: list[dict[str, Any]] = [{"producer": p, "consumer": c, "producer_type": qm.main.ops[p].type, "consumer_type": qm.main.ops[c].type,
             "tensor": t, "tensor_name": qm.main.tensors[t].name, "scales": sc,
             **({"activation": "RELU"} if p in marked else {})} for p, c, t, sc in done]  # fmt: skip
    redone = {p for p, *_ in done}
    before = {e.producer: e.scales for e in (earlier.pairs if earlier is not None else ())}
    for r in rows:  # B equalized before: this edit started from its weights, so the factors compose
        r["scales"] = np.asarray(r["scales"], np.float64) * before.get(r["producer"], 1.0)
    kept = [{"producer": e.producer, "consumer": e.consumer, "producer_type": e.producer_type, "consumer_type": e.consumer_type,
             "tensor": e.tensor, "tensor_name": e.tensor_name, "scales": e.scales,
             **({"activation": "RELU"} if e.relu6 else {})} for e in (earlier.pairs if earlier is not None else ()) if e.producer not in redone]  # fmt: skip
    fe.set_metadata(s.bm, METADATA_NAME, record(qm.main.index, kept + rows))


def _float_bias(s: Surgery, i: int) -> np.ndarray | None:
    """A's float bias of B's op `i`; B's own bias, dequantized, where A has none."""
    b = s.float_constant(i, 2)
    op = s.bsg.operators[i]
    if b is None and len(op.inputs) > 2 and op.inputs[2] >= 0:
        bt = s.bsg.tensors[op.inputs[2]]
        b = s.b_constant(i, bt).astype(np.float64) * np.asarray(bt.quantization.scale, np.float64)
    return None if b is None else np.asarray(b, np.float32).reshape(-1)


def _write_op(s: Surgery, i: int, f: _FloatOp) -> None:
    """B's op `i`: per-channel int8 weights from `f.weights`, int32 bias from `f.bias` at S_in·S_w."""
    kind = s.qm.main.ops[i].type
    dim = output_dim(kind)
    op = s.bsg.operators[i]
    sw = channel_scales(f.weights, dim, "maxabs")
    w_idx = own_tensor(s, i, 1)
    wt = s.bsg.tensors[w_idx]
    fe.set_buffer(s.bm, wt, quantize_weights(f.weights, sw, dim), share_ok=True)
    wt.quantization = quant_t(sw, np.zeros(len(sw), np.int64), dim)
    b = f.bias
    if b is None:
        return
    if not (len(op.inputs) > 2 and op.inputs[2] >= 0):
        add_zero_bias(s, i, len(sw))
    b_idx = own_tensor(s, i, 2)
    bt = s.bsg.tensors[b_idx]
    if bt.type != schema.TensorType.INT32:
        raise InputError(f"equalize: {s.describe(i)}: its bias is not int32", s.qm.path)
    bs = input_scale(s, i) * sw
    bq = np.clip(np.round(np.asarray(b, np.float64).reshape(-1) / bs), -(2**31), 2**31 - 1).astype(np.int32)
    fe.set_buffer(s.bm, bt, bq, share_ok=True)
    bt.quantization = quant_t(bs, np.zeros(len(bs), np.int64), 0)
