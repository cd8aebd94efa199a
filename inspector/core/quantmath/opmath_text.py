"""Plain-language explanation of an op's integer math (the sentences the op math panel shows)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from inspector.core.text.numbers import number

if TYPE_CHECKING:
    from inspector.core.quantmath.opmath_types import ConvMath, HybridMath, RescaleMath, TensorQuant
    from inspector.core.tflite.model import Op


def _span(vals: Sequence[float]) -> str:
    lo, hi = min(vals), max(vals)
    return number(lo) if lo == hi else f"{number(lo)} … {number(hi)}"


def _ispan(vals: Sequence[int]) -> str:
    lo, hi = min(vals), max(vals)
    return str(lo) if lo == hi else f"{lo} … {hi}"


def _ranges(tensors: tuple[TensorQuant, ...]) -> list[str]:
    out = []
    for t in tensors:
        if t.range_lo is None or t.range_hi is None or t.is_constant and t.role == "bias":  # set together
            continue
        lo, hi = min(t.range_lo), max(t.range_hi)
        if t.block_size is not None:
            kind = f"blockwise, {t.num_blocks} blocks of {t.block_size}, S {_span(t.block_scale_range or ())}"
        elif t.scales and len(t.scales) > 1:
            kind = f"per-channel x{len(t.scales)}"
        else:
            kind = f"S={number(t.scales[0])} Z={t.zero_points[0]}"  # type: ignore[index]  # a tensor with a range is quantized: scales are set
        line = f"{t.role} '{t.name}' ({t.dtype}, {kind}) can represent [{number(lo)}, {number(hi)}]."
        obs = t.observed or {}
        if obs.get("range_use") is not None:
            line += f" Observed in the comparison run: range use {obs['range_use']:.1%}"
            if obs.get("clip_rate") is not None:
                line += f", clipped {obs['clip_rate']:.2%} of values"
            line += "."
        out.append(line)
    return out


def _conv(op: Op, c: ConvMath) -> list[str]:
    ch = f"[c] (per output channel, {len(c.weight_scales)} channels)" if c.per_channel else " (one scale for all channels)"
    acc_bits = "int64" if c.accumulator == "int64" else "int32"
    lines = [
        f"Integer kernel: acc{'[c]' if c.per_channel else ''} = Σ (q_in − Z1)·(q_w − Z2) + bias_q, accumulated in {acc_bits}.",
        f"S1 (input) = {number(c.input_scale)}, Z1 = {c.input_zero_point}; S2 (weights){ch} = {_span(c.weight_scales)}, "
        f"Z2 = {_ispan(c.weight_zero_points)}; S3 (output) = {number(c.output_scale)}, Z3 = {c.output_zero_point}.",
        "The accumulator is in units of S1·S2; the kernel rescales it to the output with the real multiplier "
        f"M = S1·S2/S3 = {_span(c.multipliers)}, stored as the fixed-point pair M0·2^(shift−31) with "
        f"M0 = {_ispan(c.m0)} (int32, Q0.31) and shift = {_ispan(c.shifts)} (computed as TFLite's QuantizeMultiplier does).",
        f"q_out = clamp(Z3 + round(acc·M), {c.clamp[0]}, {c.clamp[1]})"
        + (f" — the clamp is the fused "
           f"{op.options.get('fused_activation_function')}." if op.options.get("fused_activation_function", "NONE") != "NONE" else "."),
    ]
    if c.bias_dtype is None:
        lines.append("No bias input.")
    else:
        line = f"Bias is {c.bias_dtype}; its scale must be S1·S2 = {_span(c.bias_scale_expected)} with zero-point 0"
        if c.bias_scale_ratio is not None and c.bias_scale_actual is not None:  # set together
            line += f"; stored scale {_span(c.bias_scale_actual)} (ratio actual/expected {_span(c.bias_scale_ratio)})"
        lines.append(line + ".")
    return lines


def _stored(c: ConvMath, tensors: tuple[TensorQuant, ...]) -> list[str]:
    """What the file stores for this layer, and where a QAT layer's extra variables went."""
    w = next((t for t in tensors if t.role == "weights"), None)
    b = next((t for t in tensors if t.role == "bias"), None)
    if w is None:
        return []
    nch = len(c.weight_scales)
    parts = [f"{math.prod(w.shape):,} {w.dtype} weights + {nch} weight scale{'s' if nch > 1 else ''} and {nch} zero-point{'s' if nch > 1 else ''}"]
    if b is not None:
        parts.append(f"{math.prod(b.shape):,} {b.dtype} biases (+ {len(b.scales or ())} bias scales, derived, not free)")
    parts.append("1 output scale S3 and zero-point Z3 on the output tensor")
    return [
        "Stored in the file for this layer: " + "; ".join(parts) + ".",
        "If this layer came from quantization-aware training: a Keras QAT layer (tfmot's QuantizeWrapper) carries "
        "5 extra non-trainable variables next to kernel and bias — optimizer_step, kernel_min, kernel_max, "
        "post_activation_min, post_activation_max. None survives as such in the .tflite: kernel_min/max became S2 "
        "(symmetric, Z2 = 0), post_activation_min/max became S3/Z3 of the output, the input's S1/Z1 come from the "
        "previous layer's post_activation range (or the QuantizeLayer's), and optimizer_step reaches nothing: tfmot creates it "
        "at −1 and (0.8.1) never writes it, so it does not count training steps (`info MODEL.h5` reads its value).",
    ]


def _rescale(op: Op, r: RescaleMath, fixed: tuple[float, int] | None) -> list[str]:
    if r.kind == "quantize":
        return ["QUANTIZE: float input to integers, q = clamp(round(x / S) + Z). This is where the model enters the integer domain."]
    if r.kind == "dequantize":
        return ["DEQUANTIZE: integers back to float, x = S·(q − Z). This is where the model leaves the integer domain."]
    if r.kind == "add_sub_pot":
        return [f"16-bit {op.type} with power-of-two scales and zero-points 0: inputs are aligned by plain shifts "
                f"{r.pot_shifts}, no multipliers."]
    if r.kind == "add_sub":
        m1, m2, mo = r.multipliers
        return [
            f"{op.type} of two quantized tensors with different scales: both inputs are first shifted left by "
            f"{r.left_shift} bits (left_shift, {'16' if r.left_shift == 15 else '8'}-bit path) and rescaled to a common scale "
            f"twice_max_input_scale = 2·max(S_in1, S_in2) = {number(r.twice_max_input_scale)}.",
            f"input 1 multiplier = {number(m1.real)} (M0 {m1.m0}, shift {m1.shift}); input 2 multiplier = {number(m2.real)} "
            f"(M0 {m2.m0}, shift {m2.shift}); output multiplier = 2·max/(2^{r.left_shift}·S_out) = {number(mo.real)} "
            f"(M0 {mo.m0}, shift {mo.shift}).",
        ]
    if r.kind == "mul":
        m = r.multipliers[0]
        return [f"MUL: the product (q1 − Z1)·(q2 − Z2) has scale S1·S2; it is rescaled by M = S1·S2/S3 = {number(m.real)} "
                f"(M0 {m.m0}, shift {m.shift})."]
    if r.kind == "fixed_output":
        assert fixed is not None  # a fixed_output rescale is made where fixed_output_params found them
        s, z = fixed
        return [f"{op.type} has a fixed output quantization: the kernel requires scale {number(s)} and zero-point {z} "
                "(its output range is known in advance), whatever the calibration saw."]
    if r.kind == "same_scale":
        return [f"{op.type} moves or selects integers without arithmetic, so its output must keep the input's "
                "scale and zero-point; no multiplier is needed."]
    m = r.multipliers[0]
    return [f"{op.type} rescales from the input scale to the output scale: M = S_in/S_out = {number(m.real)} "
            f"(M0 {m.m0}, shift {m.shift})."]


def _blockwise(h: HybridMath) -> list[str]:
    b = h.blockwise
    if b is None:
        return [f"Blockwise {h.weight_dtype} weights (one scale per block of inputs); their scales were not read."]
    if b.problem is not None:
        return [f"Blockwise {h.weight_dtype} weights with block size {b.block_size}, but their parameters do not fit: "
                f"{b.problem}. The runtime would misread them; no dequantized values are shown."]
    return [
        f"Blockwise hybrid kernel: the weights are stored as {h.weight_dtype} with one scale per block of "
        f"B = {b.block_size} inputs along the input dimension ({b.input_channels} inputs → {b.blocks_per_row} blocks per "
        f"output channel, {b.num_blocks:,} blocks in all). Block scales {number(b.scale_min)} … {number(b.scale_max)} "
        f"(tensor '{b.scale_tensor}'); zero-point {b.zero_points}.",
        f"Dequantized: w[o, i] = S[o, i // {b.block_size}] · (q[o, i] − Z), so one weight step is its block's scale.",
        f"At run time LiteRT (its default XNNPACK path and its builtin kernels alike) quantizes each row of the "
        f"{h.input_dtype} input to int8 with its own scale and zero-point (asymmetric: from the row's min/max), sums the "
        "integer products of each block in int32 and scales each block sum by S_in(row)·S[o, block] in float: "
        "y[o] = Σ_blocks S_in·S[o, b]·acc[o, b] + bias.",
        f"So there is no output scale S3 and no M0/shift: the output stays {h.output_dtype}. Error comes from the "
        f"{h.weight_dtype} weights (each rounded to its block's grid) and from rounding each input row at run time.",
    ]


def _hybrid(op: Op, h: HybridMath) -> list[str]:
    if h.blockwise is not None or not h.weight_scales:
        lines = _blockwise(h)
        if op.type == "FULLY_CONNECTED" or len(lines) < 4:
            return lines
        # The run-time description (per-row int8 inputs, Σ over blocks) is FULLY_CONNECTED's.
        if op.type == "EMBEDDING_LOOKUP":
            return lines[:2] + ["EMBEDDING_LOOKUP copies the looked-up rows, dequantized per block: "
                                "out[k, i] = S[id_k, i // B]·(q[id_k, i] − Z); no integer arithmetic, no output scale."]
        return lines[:2] + [f"How {op.type} computes with blockwise weights at run time is not described here."]
    mode = ("asymmetric: from the min/max of each batch entry, with a zero-point" if h.asymmetric_quantize_inputs
            else "symmetric: S_in = max|x| / 127, zero-point 0")  # fmt: skip
    return [
        f"Hybrid (dynamic range) kernel: the weights are stored as {h.weight_dtype} (S2 = {_span(h.weight_scales)}"
        f"{', per channel' if h.per_channel else ''}) but the activations stay {h.input_dtype}.",
        f"At run time the kernel quantizes each batch entry of the float input to int8 with its own scale S_in(runtime) ({mode}), "
        "computes the integer dot product acc, and returns float directly: y = S_in(runtime)·S2·acc + bias (float).",
        "So there is no output scale S3 and no fixed-point multiplier M0/shift here: S_in is only known per invocation and the "
        f"output stays {h.output_dtype}. Error comes from the {h.weight_dtype} weights and from rounding each input at run time.",
    ] + ([XNNPACK_ASYMMETRIC] if op.type == "FULLY_CONNECTED" and not h.asymmetric_quantize_inputs else [])


# Measured (LiteRT 2.x, int8 / int4 / int2 weights): with asymmetric_quantize_inputs = false the builtin
# FULLY_CONNECTED kernel quantizes input rows symmetrically, the XNNPACK path asymmetrically.
XNNPACK_ASYMMETRIC = (
    "That is what the builtin kernels (the reference runtime) do. LiteRT's default XNNPACK path (the optimized runtime) "
    "quantizes each input row asymmetrically instead (scale and zero-point from the row's min/max), whatever "
    "asymmetric_quantize_inputs says, so the two runtimes give slightly different outputs for this op."
)


def explain(op: Op, path: str, tensors: tuple[TensorQuant, ...], conv: ConvMath | None, rescale: RescaleMath | None,
            hybrid: HybridMath | None, fixed: tuple[float, int] | None) -> list[str]:
    lines: list[str] = []
    if conv is not None:
        lines += _conv(op, conv)
        lines += _stored(conv, tensors)
    elif rescale is not None:
        lines += _rescale(op, rescale, fixed)
    elif hybrid is not None:
        lines += _hybrid(op, hybrid)
    elif path == "weight_only":
        lines.append("Weight-only quantization: DEQUANTIZE turns the stored int8/int4 weights into float32 and the op runs "
                     "its float kernel. The file is smaller, but the arithmetic (and the speed) is float; the only error is the weight rounding.")
    elif path == "float16_weights":
        lines.append("float16 weights: DEQUANTIZE widens them to float32 and the op runs its float kernel (GPU delegates may use "
                     "float16 directly). Rounding to float16 keeps ~3 significant digits, usually negligible error.")
    elif path == "float":
        lines.append("Float kernel: no quantization in this op; any error measured at its output is inherited from "
                     "quantized ops upstream.")
    elif path == "other":
        lines.append(f"{op.type} works on index/shape tensors (int32/bool); quantization plays no part.")
    elif path.startswith("full_integer"):
        lines.append("Integer kernel; the op's parameters are listed below.")
    lines += _ranges(tensors)
    return lines
