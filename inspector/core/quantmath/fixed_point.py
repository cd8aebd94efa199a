"""Fixed-point multipliers exactly as the TFLite runtime computes them.

A real multiplier M (e.g. M = S1*S2/S3 for a conv) is stored by the kernels as an int32
significand M0 in Q0.31 and a power-of-two exponent: M ~= M0 * 2^(shift - 31).
`quantize_multiplier` reproduces `tflite::QuantizeMultiplier` from
tensorflow/lite/kernels/internal/quantization_util.cc bit for bit:

    q, shift = frexp(M)                    # M = q * 2^shift, q in [0.5, 1)
    q_fixed = TfLiteRound(q * 2^31)        # round half away from zero
    if q_fixed == 2^31: q_fixed /= 2; shift += 1
    if shift < -31: q_fixed = 0; shift = 0 # flush tiny multipliers to zero
    (TFLITE_SINGLE_ROUNDING builds also saturate shift > 30 to (2^31 - 1, 30))

`multiply_by_quantized_multiplier` is the matching integer rescale of the default
(double-rounding) build: SaturatingRoundingDoublingHighMul then RoundingDivideByPOT
(tensorflow/lite/kernels/internal/common.h), for showing what the kernel does to an accumulator.
"""

from __future__ import annotations

import math

import numpy as np

Q31 = 1 << 31
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


def _round_half_away(x: float) -> int:
    """TfLiteRound (std::round): halves go away from zero. x is exact here (q * 2^31)."""
    r = math.floor(abs(x) + 0.5)
    return int(r if x >= 0 else -r)


def quantize_multiplier(m: float, single_rounding: bool = False) -> tuple[int, int]:
    """(M0, shift) with M ~= M0 * 2^(shift - 31), as tflite::QuantizeMultiplier computes them.

    `single_rounding=True` mimics builds with TFLITE_SINGLE_ROUNDING (shift saturated at 30).
    """
    m = float(m)
    if not math.isfinite(m):
        raise ValueError(f"multiplier {m} is not finite")
    if m == 0.0:
        return 0, 0
    q, shift = math.frexp(m)
    q_fixed = _round_half_away(q * Q31)
    if q_fixed == Q31:
        q_fixed //= 2
        shift += 1
    if shift < -31:
        shift, q_fixed = 0, 0
    if single_rounding and shift > 30:
        shift, q_fixed = 30, Q31 - 1
    return int(q_fixed), int(shift)


def fixed_to_real(m0: int, shift: int) -> float:
    """The real multiplier a (M0, shift) pair stands for: M0 * 2^(shift - 31)."""
    return math.ldexp(float(m0), shift - 31)


def _srdhm(a: np.ndarray, b: int) -> np.ndarray:
    """gemmlowp SaturatingRoundingDoublingHighMul on int64 arrays holding int32 values."""
    a = a.astype(np.int64)
    overflow = (a == INT32_MIN) & (b == INT32_MIN)
    ab = a * np.int64(b)
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    # C++ integer division truncates toward zero; numpy // floors, so divide magnitudes.
    s = ab + nudge
    high = np.sign(s) * (np.abs(s) // (1 << 31))
    return np.where(overflow, INT32_MAX, high)


def _rounding_divide_by_pot(x: np.ndarray, exponent: int) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT: x / 2^exponent rounded half away from zero."""
    if exponent == 0:
        return x
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)


def multiply_by_quantized_multiplier(
    x: np.ndarray | int, m0: int, shift: int, single_rounding: bool = False
) -> np.ndarray:
    """Integer rescale of int32 accumulators x by (M0, shift) (tensorflow/lite/kernels/internal/common.h).

    Default: the double-rounding build (SRDHM, then RoundingDivideByPOT: halves away from zero,
    rounded twice). `single_rounding=True`: TFLITE_SINGLE_ROUNDING builds, one 64-bit product
    rounded once with halves toward +inf, which is what the ai-edge-litert wheels do.
    """
    a = np.asarray(x, np.int64)
    if single_rounding:
        total = 31 - shift
        return (a * np.int64(m0) + (np.int64(1) << (total - 1))) >> total
    left = max(shift, 0)
    right = max(-shift, 0)
    shifted = np.clip(a * (1 << left), INT32_MIN, INT32_MAX)
    return _rounding_divide_by_pot(_srdhm(shifted, int(m0)), right)
