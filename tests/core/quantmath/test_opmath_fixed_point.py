"""QuantizeMultiplier bit for bit against an exact-rational reference implementation."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from inspector.core.quantmath.fixed_point import (
    fixed_to_real,
    multiply_by_quantized_multiplier,
    quantize_multiplier,
)


def reference_quantize_multiplier(m: float) -> tuple[int, int]:
    """TFLite's QuantizeMultiplier written with exact rationals instead of frexp and doubles."""
    if m == 0:
        return 0, 0
    x = Fraction(m)
    sign = 1 if x > 0 else -1
    a = abs(x)
    # exponent e with 2^(e-1) <= a < 2^e, found by integer arithmetic on the exact ratio
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while a >= Fraction(2) ** e:
        e += 1
    while a < Fraction(2) ** (e - 1):
        e -= 1
    scaled = a / Fraction(2) ** e * (1 << 31)  # in [2^30, 2^31)
    q = math.floor(scaled + Fraction(1, 2))  # half away from zero on the magnitude
    if q == 1 << 31:
        q //= 2
        e += 1
    if e < -31:
        return 0, 0
    return sign * q, e


def _multipliers() -> list[float]:
    rng = np.random.default_rng(1234)
    vals: list[float] = []
    vals += list(10.0 ** rng.uniform(-12, 3, 3000))  # log-uniform, tiny to large
    vals += list(rng.uniform(0.999, 1.0, 300)) + list(rng.uniform(1.0, 1.001, 300))  # near 1
    vals += [2.0**k for k in range(-40, 12)]  # exact powers of two
    # just below / above powers of two: these round up to q_fixed == 2^31 (the edge case)
    for k in range(-35, 8):
        p = 2.0**k
        vals += [np.nextafter(p, 0), p * (1 - 2**-33), p * (1 - 2**-32), p * (1 - 2**-31), p * (1 + 2**-32)]
    # values whose q * 2^31 lands exactly on .5 (ties: away from zero)
    vals += [(2**30 + i + 0.5) / 2**31 * 2.0**s for i in (0, 1, 12345, 2**29) for s in (-7, 0, 3)]
    vals += [2**-31, 2**-32, 2**-31 * 0.75, 2**-32 * 0.9999, 1e-300, 5e-324]  # flush-to-zero border
    vals += [-0.37, -1.5, -(2.0**-5)]  # negative multipliers (SUB's input2 multiplier is negated)
    return [float(v) for v in vals]


def test_quantize_multiplier_matches_reference_bit_for_bit():
    vals = _multipliers()
    assert len(vals) > 3500
    mismatches = [(m, quantize_multiplier(m), reference_quantize_multiplier(m)) for m in vals
                  if quantize_multiplier(m) != reference_quantize_multiplier(m)]  # fmt: skip
    assert mismatches == []


def test_edge_cases_known_values():
    assert quantize_multiplier(0.0) == (0, 0)
    assert quantize_multiplier(0.5) == (1 << 30, 0)
    assert quantize_multiplier(1.0) == (1 << 30, 1)
    assert quantize_multiplier(0.75) == (3 << 29, 0)
    # just below 1: q * 2^31 rounds to 2^31 -> halved, shift + 1
    m0, shift = quantize_multiplier(np.nextafter(1.0, 0))
    assert (m0, shift) == (1 << 30, 1)
    assert quantize_multiplier(2.0**-31) == (1 << 30, -30)
    assert quantize_multiplier(2.0**-32) == (1 << 30, -31)
    assert quantize_multiplier(2.0**-33) == (0, 0)  # shift -32 < -31: flushed
    assert quantize_multiplier(1e10, single_rounding=True) == ((1 << 31) - 1, 30)
    assert quantize_multiplier(1e10)[1] == 34  # the default build keeps large shifts
    with pytest.raises(ValueError):
        quantize_multiplier(float("nan"))


def test_m0_in_q31_range_and_reconstruction():
    for m in _multipliers():
        if m <= 0:
            continue
        m0, shift = quantize_multiplier(m)
        if m0 == 0:
            assert m < 2.0**-31
            continue
        assert (1 << 30) <= m0 < (1 << 31)  # M0 in [0.5, 1) as Q0.31
        rel = abs(fixed_to_real(m0, shift) - m) / m
        assert rel <= 2.0**-31, (m, m0, shift, rel)


def test_integer_rescale_matches_exact_rounding_within_one():
    rng = np.random.default_rng(7)
    acc = rng.integers(-(2**24), 2**24, 5000)
    for m in (0.0123, 0.3, 0.000731, 0.99999, 3.7, 17.25):
        m0, shift = quantize_multiplier(m)
        got = multiply_by_quantized_multiplier(acc, m0, shift)
        exact = [math.floor(abs(Fraction(int(a)) * Fraction(fixed_to_real(m0, shift))) + Fraction(1, 2))
                 * (1 if a >= 0 else -1) for a in acc[:500]]  # fmt: skip
        assert np.max(np.abs(got[:500] - np.asarray(exact))) <= 1
        assert np.max(np.abs(got - acc * m)) <= 1 + abs(m) * 2**-20 * 2**24


def test_single_rounding_rescale_is_one_rounding_half_up():
    rng = np.random.default_rng(3)
    acc = rng.integers(-(2**22), 2**22, 2000)
    for m in (0.0123, 0.4999, 0.000731):
        m0, shift = quantize_multiplier(m, single_rounding=True)
        got = multiply_by_quantized_multiplier(acc, m0, shift, single_rounding=True)
        exact = [math.floor(Fraction(int(a)) * m0 / Fraction(2) ** (31 - shift) + Fraction(1, 2)) for a in acc]
        assert got.tolist() == exact
