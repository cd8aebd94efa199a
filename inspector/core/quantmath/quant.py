"""Quantization math: r = S * (q - Z), per tensor or per channel.

Everything here follows the TFLite int8/int16 quantization specification.
"""

from __future__ import annotations

import numpy as np

from inspector.core.tflite.dtypes import INT_LIMITS
from inspector.core.tflite.model import Quantization, Tensor


def int_limits(dtype: str) -> tuple[int, int]:
    """(qmin, qmax) of a quantized storage type."""
    try:
        return INT_LIMITS[dtype]
    except KeyError:
        raise ValueError(f"{dtype} is not an integer quantized type") from None


def _channel_shape(q: Quantization, ndim: int) -> tuple[int, ...]:
    shape = [1] * ndim
    if q.per_channel:
        shape[q.quantized_dimension] = q.num_channels
    return tuple(shape)


def scales_array(q: Quantization, ndim: int) -> tuple[np.ndarray | np.float64, np.ndarray | np.float64]:
    """Scales and zero-points shaped to broadcast against a tensor of rank `ndim` (scalars for rank 0)."""
    shape = _channel_shape(q, ndim) if ndim else ()
    s = np.asarray(q.scales, np.float64).reshape(shape) if ndim else np.float64(q.scales[0])
    z = np.asarray(q.zero_points, np.float64).reshape(shape) if ndim else np.float64(q.zero_points[0])
    return s, z


def dequantize(values: np.ndarray, q: Quantization) -> np.ndarray:
    """Float values (float64) of quantized integers `values`."""
    v = np.asarray(values)
    s, z = scales_array(q, v.ndim)
    r: np.ndarray = (v.astype(np.float64) - z) * s
    return r


def quantize(x: np.ndarray, q: Quantization, dtype: str) -> np.ndarray:
    """Round-to-nearest quantization of float `x`, saturated to the dtype's range."""
    lo, hi = int_limits(dtype)
    s, z = scales_array(q, np.ndim(x))
    out = np.clip(np.round(np.asarray(x, np.float64) / s) + z, lo, hi)
    np_dtype = {"int2": np.int8, "int4": np.int8, "uint4": np.uint8}.get(dtype) or np.dtype(dtype)
    q_out: np.ndarray = out.astype(np_dtype)
    return q_out


def representable_range(q: Quantization, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Float range [S*(qmin - Z), S*(qmax - Z)] per channel (arrays of length num_channels)."""
    lo, hi = int_limits(dtype)
    s = np.asarray(q.scales, np.float64)
    z = np.asarray(q.zero_points, np.float64)
    return s * (lo - z), s * (hi - z)


def tensor_range(tensor: Tensor) -> tuple[float, float] | None:
    """Overall representable float range of a quantized tensor (union over channels)."""
    if tensor.quantization is None or tensor.quantization.blockwise is not None or tensor.dtype not in INT_LIMITS:
        return None  # blockwise: the scales live in another tensor (quantmath.blockwise)
    lo, hi = representable_range(tensor.quantization, tensor.dtype)
    return float(lo.min()), float(hi.max())
