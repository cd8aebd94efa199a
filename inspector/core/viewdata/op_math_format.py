"""Text for the op math panel: an `OpMath` as labelled parameters, table rows and plain text (Qt-free).

Formatting only (no Qt, no arithmetic beyond picking min/max for a span): the numbers are the
ones `core.opmath` computed. Shared by the panel's HTML, its tables and "Copy as text".
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from typing import Any

from inspector.core.quantmath.opmath_types import OpMath, TensorQuant
from inspector.core.text.numbers import number, percent

_NUMBER = re.compile(r"^[−+-]?(\d|\.\d)[\d.,eE+−-]*%?$")


def is_number(text: str) -> bool:
    return bool(_NUMBER.match(text.strip()))


def g(v: float | None, digits: int = 6) -> str:
    return number(v, digits, symbols=True)


def pct(v: float | None, digits: int = 1) -> str:
    return percent(v, digits, none="—", space=False)


def span(vals: Iterable[float], digits: int = 6) -> str:
    vals = list(vals)
    if not vals:
        return "—"
    lo, hi = min(vals), max(vals)
    return g(lo, digits) if lo == hi else f"{g(lo, digits)} … {g(hi, digits)}"


def ispan(vals: Iterable[int]) -> str:
    vals = list(vals)
    lo, hi = min(vals), max(vals)
    return str(lo) if lo == hi else f"{lo} … {hi}"


# ------------------------------------------------------------------ key parameters
def params(m: OpMath) -> list[tuple[str, str, str]]:
    """(label, value, note) rows of the parameter grid (the kernel path is the panel's header)."""
    rows: list[tuple[str, str, str]] = []
    c, h, r = m.conv, m.hybrid, m.rescale
    if c is not None:
        n = len(c.weight_scales)
        per = f"per channel ×{n}" if c.per_channel else "per tensor"
        rows += [
            ("S1 (input scale)", g(c.input_scale), f"Z1 = {c.input_zero_point}"),
            ("S2 (weight scale)", span(c.weight_scales), f"{per}; Z2 = {ispan(c.weight_zero_points)}"),
            ("S3 (output scale)", g(c.output_scale), f"Z3 = {c.output_zero_point}"),
            ("M = S1·S2/S3", span(c.multipliers), "real multiplier" + (", per channel (table)" if c.per_channel else "")),
            ("M0 (int32, Q0.31)", ispan(c.m0), "M ≈ M0·2^(shift−31), as QuantizeMultiplier"),
            ("shift", ispan(c.shifts), "negative: right shift"),
            ("Accumulator", c.accumulator, "Σ (q_in − Z1)·(q_w − Z2) + bias"),
            ("Output clamp", f"[{c.clamp[0]}, {c.clamp[1]}]", "fused activation in quantized units"),
        ]
        if c.bias_dtype is None:
            rows.append(("Bias", "none", ""))
        else:
            rows.append(("Bias scale expected", span(c.bias_scale_expected), f"S1·S2, {c.bias_dtype}, zero-point 0"))
            if c.bias_scale_actual is not None:
                ratio = span(c.bias_scale_ratio or (), 8)
                rows.append(("Bias scale stored", span(c.bias_scale_actual), f"actual/expected = {ratio}"))
    elif h is not None and h.blockwise is not None:
        b = h.blockwise
        rows += [
            ("S1 (input scale)", "at run time", f"each {h.input_dtype} input row is quantized to int8 (asymmetric, per row)"),
            ("Block size B", str(b.block_size), f"inputs per scale, along the input dimension ({b.input_channels})"),
            ("Blocks", f"{b.num_blocks:,}", f"{b.blocks_per_row} per output channel"),
            ("S2 (block scales)", "—" if b.problem else span((b.scale_min, b.scale_max)), b.problem or f"{h.weight_dtype}; Z2 = {b.zero_points}"),
            ("S3 (output scale)", "none", f"the output stays {h.output_dtype}: y = Σ_blocks S_in·S2[o, b]·acc[o, b] + bias"),
            ("M0 / shift", "none", "no output rescaling: S_in is only known per invocation"),
        ]
    elif h is not None:
        mode = "asymmetric (min/max per batch entry, with zero-point)" if h.asymmetric_quantize_inputs \
            else "symmetric (max|x|/127, zero-point 0)"
        rows += [
            ("S1 (input scale)", "at run time", f"the {h.input_dtype} input is quantized to int8 per batch entry, {mode}"
             + ("; the optimized (XNNPACK) runtime quantizes asymmetrically" if m.op_type == "FULLY_CONNECTED"
                and not h.asymmetric_quantize_inputs else "")),
            ("S2 (weight scale)", span(h.weight_scales),
             f"{'per channel ×' + str(len(h.weight_scales)) if h.per_channel else 'per tensor'}; Z2 = {ispan(h.weight_zero_points)}"),
            ("S3 (output scale)", "none", f"the output stays {h.output_dtype}: y = S_in(runtime)·S2·acc + bias"),
            ("M0 / shift", "none", "no output rescaling: S_in is only known per invocation"),
        ]
    elif r is not None:
        if r.left_shift is not None:
            rows.append(("left_shift", str(r.left_shift), "inputs shifted left before rescaling"))
        if r.twice_max_input_scale is not None:
            rows.append(("twice_max_input_scale", g(r.twice_max_input_scale), "2·max(S_in1, S_in2)"))
        for mult in r.multipliers:
            rows.append((f"M {mult.name}", g(mult.real), f"{mult.formula}; M0 = {mult.m0}, shift = {mult.shift}"))
        if r.pot_shifts is not None:
            rows.append(("input shifts", ", ".join(map(str, r.pot_shifts)), "power-of-two scales: plain shifts"))
        if r.clamp is not None:
            rows.append(("Output clamp", f"[{r.clamp[0]}, {r.clamp[1]}]", "fused activation in quantized units"))
    return rows


def summary_html(m: OpMath) -> str:
    # Value and its note share a cell (note below, smaller): the panel is narrow, and a third
    # column made Qt break numbers in the middle.
    cells = "".join(
        f"<tr><td nowrap style='padding-right:10px'><b>{html.escape(a)}</b></td>"
        f"<td><code>{html.escape(b).replace(' ', '&nbsp;')}</code>"
        + (f"<br><span style='color:gray; font-size:small'>{html.escape(c)}</span>" if c else "")
        + "</td></tr>"
        for a, b, c in params(m)
    )
    text = "".join(f"<p>{html.escape(line)}</p>" for line in m.explanation)
    callout = ""
    if m.hybrid is not None and m.hybrid.blockwise is not None:
        callout = ("<p style='background-color:#fff1e0; color:#5a3300; padding:6px'><b>Why is there no S3?</b> "
                   "This is a hybrid kernel with blockwise weights: each input row is quantized at run time, so there is "
                   "no output scale S3 and no M0/shift. The float output is computed directly, block by block: "
                   "<code>y = Σ_blocks S_in(row)·S_w[o, b]·acc[o, b] + bias</code>.</p>")
    elif m.hybrid is not None:
        callout = ("<p style='background-color:#fff1e0; color:#5a3300; padding:6px'><b>Why is there no S3?</b> "
                   "This is a hybrid (dynamic range) kernel: the input is quantized per batch at run time, so there is "
                   "no output scale S3 and no M0/shift. The float output is computed directly as "
                   "<code>y = S_in(runtime)·S_w·acc + bias</code>.</p>")
    return f"{callout}<table cellspacing='0' cellpadding='2'>{cells}</table><hr>{text}"


# ------------------------------------------------------------------ tables
TENSOR_HEADERS = ["Role", "Tensor", "dtype", "Shape", "Scale S", "Zero-point Z", "Representable range", "Range use", "Clipped"]
TENSOR_TIPS = ["", "", "", "", "", "", "[S·(qmin − Z), S·(qmax − Z)]; per-channel tensors: the union over channels",
               "observed float range / representable range (after a comparison run)",
               "share of float values outside the representable range (after a comparison run)"]


def _tensor_row(t: TensorQuant) -> list[str]:
    if t.block_size is not None:
        s = f"{t.num_blocks}×{t.block_size}: {span(t.block_scale_range or ())}"
        z = ispan(t.zero_points) if t.zero_points else "per block" if t.block_scale_range is not None else "—"
        rng = "—" if t.range_lo is None else f"[{g(min(t.range_lo), 5)}, {g(max(t.range_hi or (0,)), 5)}]"
    elif t.scales is None:
        s = z = rng = "—"
    else:
        many = len(t.scales) > 1
        s = f"×{len(t.scales)}: {span(t.scales)}" if many else g(t.scales[0])
        z = ispan(t.zero_points or (0,)) if many else str((t.zero_points or (0,))[0])
        rng = "—" if t.range_lo is None else f"[{g(min(t.range_lo), 5)}, {g(max(t.range_hi or (0,)), 5)}]"
    obs = t.observed or {}
    shape = "×".join(map(str, t.shape)) if t.shape else "scalar"
    name = t.name + (" (const)" if t.is_constant else "")
    return [t.role, name, t.dtype, shape, s, z, rng, pct(obs.get("range_use")), pct(obs.get("clip_rate"), 2)]


def tensor_rows(m: OpMath) -> tuple[list[str], list[list[str]], list[str]]:
    return TENSOR_HEADERS, [_tensor_row(t) for t in m.tensors], TENSOR_TIPS


def detail_rows(m: OpMath) -> tuple[str, list[str], list[list[str]], list[str]]:
    """(caption, headers, rows, header tips) of the per-channel / multiplier table."""
    c, h, r = m.conv, m.hybrid, m.rescale
    if c is not None:
        n = len(c.weight_scales)
        headers = ["c", "S2", "Z2", "M = S1·S2/S3", "M0", "shift", "bias scale expected", "bias scale stored", "ratio"]
        tips = ["output channel", "weight scale", "weight zero-point", "real multiplier (double)",
                "int32 fixed-point multiplier (Q0.31)", "power-of-two exponent: M ≈ M0·2^(shift−31)",
                "S1·S2[c]", "scale stored on the bias tensor", "stored / expected"]
        rows = []
        for i in range(n):
            def at(seq: Sequence[Any] | None, i: int = i) -> Any:
                return None if seq is None else seq[i] if len(seq) > i else seq[0]

            rows.append([str(i), g(c.weight_scales[i]), str(at(c.weight_zero_points)), g(at(c.multipliers)),
                         str(at(c.m0)), str(at(c.shifts)), g(at(c.bias_scale_expected)),
                         g(at(c.bias_scale_actual)), g(at(c.bias_scale_ratio), 7)])
        cap = "<b>Per output channel</b>" if c.per_channel else "<b>Per tensor</b> (one scale for all channels)"
        return cap + ": M = S1·S2[c]/S3 = M0·2^(shift−31)", headers, rows, tips
    if h is not None and h.blockwise is not None:
        b = h.blockwise
        rows = [[str(i), g(lo), g(hi), g(hi / lo) if lo > 0 else "—"]
                for i, (lo, hi) in enumerate(zip(b.row_scale_min, b.row_scale_max, strict=True))]
        return (f"<b>Block scales per output channel</b> ({b.blocks_per_row} blocks of {b.block_size} each) — "
                "no M, M0 or shift: a hybrid kernel has no output scale S3",
                ["o", "smallest block scale", "largest block scale", "largest / smallest"], rows,
                ["output channel", "min over its blocks of S2[o, b]", "max over its blocks of S2[o, b]", "spread of the block scales"])
    if h is not None:
        rows = [[str(i), g(s), str(h.weight_zero_points[i] if len(h.weight_zero_points) > i else h.weight_zero_points[0])]
                for i, s in enumerate(h.weight_scales)]
        return ("<b>Weights per channel</b> — no M, M0 or shift: a hybrid kernel has no output scale S3",
                ["c", "S2", "Z2"], rows, ["output channel", "weight scale", "weight zero-point"])
    if r is not None and r.multipliers:
        rows = [[mu.name, mu.formula, g(mu.real), str(mu.m0), str(mu.shift)] for mu in r.multipliers]
        return ("<b>Rescaling multipliers</b> (M ≈ M0·2^(shift−31))", ["multiplier", "formula", "real value", "M0", "shift"],
                rows, ["", "", "double", "int32 Q0.31", "power-of-two exponent"])
    if r is not None and r.pot_shifts is not None:
        rows = [[f"input {i + 1}", str(s)] for i, s in enumerate(r.pot_shifts)]
        return "<b>Input shifts</b> (power-of-two scales)", ["input", "shift"], rows, ["", ""]
    return "", [], [], []


def plot_series(m: OpMath) -> tuple[str, str, tuple[float, ...], str] | None:
    """(title, y label, values per channel, colour key) for the small plot; None: no plot."""
    if m.conv is not None and len(m.conv.multipliers) > 1:
        return "M = S1·S2/S3 per channel", "M", m.conv.multipliers, "B"
    if m.hybrid is not None and m.hybrid.blockwise is not None and len(m.hybrid.blockwise.row_scale_max) > 1:
        return "largest block S2 per channel", "S2", m.hybrid.blockwise.row_scale_max, "second"
    if m.hybrid is not None and len(m.hybrid.weight_scales) > 1:
        return "S2 per channel (hybrid: no M)", "S2", m.hybrid.weight_scales, "second"
    return None


# ------------------------------------------------------------------ plain text
def as_text(m: OpMath) -> str:
    lines = [f"op {m.op_index} {m.op_type} (subgraph {m.subgraph}) — kernel path: {m.kernel_label}", ""]
    width = max((len(a) for a, _, _ in params(m)), default=0)
    for a, b, c in params(m):
        lines.append(f"{a.ljust(width)}  {b}" + (f"    ({c})" if c else ""))
    headers, rows, _ = tensor_rows(m)
    lines += ["", "Tensors", "\t".join(headers)] + ["\t".join(r) for r in rows]
    cap, headers, rows, _ = detail_rows(m)
    if rows:
        lines += ["", re.sub(r"<[^>]+>", "", cap), "\t".join(headers)] + ["\t".join(r) for r in rows]
    lines += [""] + list(m.explanation)
    return "\n".join(lines) + "\n"
