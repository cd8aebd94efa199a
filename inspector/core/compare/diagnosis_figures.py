"""The figures the diagnosis weighs beyond the comparison's metrics: the share of the error a
per-channel bias carries, the weight noise per-channel scales would remove, how far B's weights
are from A's, and how much error clipping can carry at most. Weights are read only when asked.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from inspector.core.compare.equalized import reference_weights
from inspector.core.compare.result import LayerResult
from inspector.core.quantmath.quant import dequantize
from inspector.core.stats.metrics import Metrics
from inspector.core.tflite.dtypes import INT_LIMITS
from inspector.core.tflite.model import Model
from inspector.core.tflite.op_facts import SURGICAL_WEIGHT_OPS, WEIGHTED_OPS

# The ops whose weights the diagnosis measures (and the surgical per-channel / rounding edits
# can fix): their output-channel dimension from the one table of op facts.
SURGICAL_CHANNEL_DIM = {t: WEIGHTED_OPS[t].channel_dim for t in SURGICAL_WEIGHT_OPS}  # the weights output-channel dim
WEIGHT_SAMPLE = 1 << 20  # weight elements read for the weight SQNR (big weights: a subset of rows)
BIAS_SIGMAS = 2.0  # a channel mean is significant beyond this many standard errors


def bias_share(m: Metrics | None, sigmas: float = BIAS_SIGMAS) -> float | None:
    """Share of the error power (MSE) carried by the channel means that are significant."""
    if m is None or m.per_channel_mean_error is None or not m.mse > 0:
        return None
    mean = np.asarray(m.per_channel_mean_error, np.float64)
    se = np.nan_to_num(np.asarray(m.per_channel_mean_stderr or [math.nan] * len(mean), np.float64), nan=0.0)
    sig = np.abs(mean) > sigmas * se
    return float(np.mean(np.where(sig, mean * mean, 0.0)) / m.mse)


def weight_channel_gain_db(fm: Model, qm: Model, layer: LayerResult) -> float | None:
    """Predicted weight-noise gain (dB) of per-channel over B's per-tensor weight scale, from A's
    per-channel ranges: 10 log10(max(a_c)^2 / mean(a_c^2)). None when not a per-tensor weight op."""
    dim = SURGICAL_CHANNEL_DIM.get(layer.op_type)
    if dim is None or layer.float_op_index is None:
        return None
    qop = qm.main.ops[layer.op_index]
    if len(qop.inputs) < 2 or qop.inputs[1] < 0:
        return None
    wq = qm.main.tensors[qop.inputs[1]].quantization
    if wq is None or len(wq.scales) != 1:
        return None
    fop = fm.main.ops[layer.float_op_index]
    if len(fop.inputs) < 2 or fop.inputs[1] < 0:
        return None
    w = fm.tensor_data(fm.main.tensors[fop.inputs[1]])
    if w is None or w.ndim <= dim or not np.issubdtype(w.dtype, np.floating):
        return None
    a = np.abs(np.moveaxis(w, dim, 0).reshape(w.shape[dim], -1)).max(axis=1).astype(np.float64)  # no float64 copy
    if a.size < 2 or not a.max() > 0:
        return None
    return float(10 * math.log10(a.max() ** 2 / np.mean(a * a)))


def weight_sqnr_db(fm: Model, qm: Model, layer: LayerResult) -> float | None:
    """SQNR (dB) of B's dequantized int8 weights against A's float weights (same layout only)."""
    if layer.op_type not in SURGICAL_CHANNEL_DIM or layer.float_op_index is None:
        return None
    qop, fop = qm.main.ops[layer.op_index], fm.main.ops[layer.float_op_index]
    if len(qop.inputs) < 2 or len(fop.inputs) < 2 or min(qop.inputs[1], fop.inputs[1]) < 0:
        return None
    qt, ft = qm.main.tensors[qop.inputs[1]], fm.main.tensors[fop.inputs[1]]
    if qt.quantization is None or qt.quantization.blockwise is not None or qt.dtype != "int8":
        return None
    wq, w = qm.tensor_data(qt), reference_weights(qm, qt, fm.tensor_data(ft))  # equalized: A's ÷/× s
    if wq is None or w is None or wq.shape != w.shape or not np.issubdtype(w.dtype, np.floating):
        return None
    q = qt.quantization
    if wq.size > WEIGHT_SAMPLE:  # big weights: whole rows of the quantized dimension, evenly spread
        dim = q.quantized_dimension if q.per_channel else 0
        rows = np.unique(np.linspace(0, wq.shape[dim] - 1, max(1, WEIGHT_SAMPLE * wq.shape[dim] // wq.size)).astype(int))
        wq, w = np.take(wq, rows, axis=dim), np.take(w, rows, axis=dim)
        if q.per_channel:
            q = replace(q, scales=tuple(np.asarray(q.scales)[rows]), zero_points=tuple(np.asarray(q.zero_points)[rows]))
    y = dequantize(wq, q)
    x = np.asarray(w, np.float64)
    noise = float(np.sum((x - y) ** 2))
    return math.inf if noise == 0 else 10 * math.log10(max(float(np.sum(x * x)), 1e-300) / noise)


def clip_error_bound(layer: LayerResult) -> float | None:
    """An upper bound of the error power clipping causes, mean((x - clamp(x, lo, hi))^2) with
    [lo, hi] B's representable range: per channel, clip rate x (the channel's largest overshoot)^2,
    averaged over the channels (every channel has as many elements), which is never above the
    whole tensor's clip rate x (largest overshoot)^2 and is exact where a channel's clipped values
    overshoot alike (MobileNetV2's last FC: one clipped class per sample); the whole tensor's
    bound where no channel figures (of the same values) exist. Values within half a step of the
    range count as rounding, as in the clip rate. None for per-channel or unquantized outputs."""
    m = layer.metrics
    lim = INT_LIMITS.get(layer.dtype)
    if m.clip_rate is None or lim is None or not layer.scale or len(layer.scale) != 1 or layer.float_min is None or layer.float_max is None:
        return None
    s, z = float(layer.scale[0]), float((layer.zero_point or (0,))[0])
    lo, hi = s * (lim[0] - z), s * (lim[1] - z)
    over = max(layer.float_max - hi, lo - layer.float_min, 0.0)
    bound = m.clip_rate * over * over
    ch = layer.channels
    if ch is None or ch.clip_rate is None or not ch.count:
        return bound
    rate = np.asarray(ch.clip_rate, np.float64)
    if not abs(float(np.mean(rate)) - m.clip_rate) <= 1e-9 + 1e-6 * m.clip_rate:
        return bound  # channel figures of other values than the tensor's (a layer made up from parts)
    over_c = np.maximum(np.maximum(np.asarray(ch.float_max, np.float64) - hi, lo - np.asarray(ch.float_min, np.float64)), 0.0)
    per_channel = float(np.mean(np.where(rate > 0, rate * over_c * over_c, 0.0)))
    return min(bound, per_channel) if math.isfinite(per_channel) else bound
