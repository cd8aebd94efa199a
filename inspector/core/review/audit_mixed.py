"""Audit rule `mixed-ranges` (issue 25): a quantized CONCATENATION / PACK whose inputs' float ranges
differ more than MIXED_RATIO under its one output scale. The small input keeps a few steps of the
grid the large one sets (a detector head's sigmoid scores beside pixel boxes: under one step).

An input's float range is what the comparison observed for its slice when there is one, else the
representable range of the input's own grid: the tensor before the QUANTIZE that requantized it
into the concatenation's scale (a LOGISTIC's fixed 1/256), or the input itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspector.core.compare.concat_layout import op_layout
from inspector.core.compare.result import ComparisonResult
from inspector.core.tflite.dtypes import INT_LIMITS
from inspector.core.tflite.model import Op, Subgraph, Tensor
from inspector.core.tflite.op_facts import CONCAT_OPS, REQUANTIZE_PATH_OPS

MIXED_RATIO = 16.0  # the diagnosis' `mixed_ratio` too


def _per_tensor(t: Tensor) -> float | None:
    q = t.quantization
    if q is None or q.blockwise is not None or len(q.scales) != 1 or t.dtype not in INT_LIMITS:
        return None
    return float(q.scales[0])


def _own_range(sg: Subgraph, producers: Mapping[int, Op], t: int) -> tuple[float, float] | None:
    """(low, high) representable by the input's own grid (through requantization and reshapes)."""
    seen = 0
    cur = t
    p = producers.get(cur)
    while p is not None and p.type in REQUANTIZE_PATH_OPS and p.inputs and p.inputs[0] >= 0 and seen < 8:
        if _per_tensor(sg.tensors[p.inputs[0]]) is None:
            break
        cur = p.inputs[0]
        p = producers.get(cur)
        seen += 1
    tensor = sg.tensors[cur]
    s, q = _per_tensor(tensor), tensor.quantization
    if s is None or q is None:  # a per-tensor scale: q is set
        return None
    lo, hi = INT_LIMITS[tensor.dtype]
    z = int(q.zero_points[0])
    return s * (lo - z), s * (hi - z)


def check_mixed_ranges(sg: Subgraph, comparison: ComparisonResult | None = None) -> list[dict[str, Any]]:
    """Findings (dicts of `audit_rules._f`'s keys) for the concatenations of `sg`."""
    out: list[dict[str, Any]] = []
    producers = sg.producers()
    for op in sg.ops:
        if op.type not in CONCAT_OPS or not op.outputs or op.outputs[0] < 0:
            continue
        ot = sg.tensors[op.outputs[0]]
        scale = _per_tensor(ot)
        lay = op_layout(sg, op, producers) if scale is not None else None
        if lay is None or scale is None:  # a layout only with a scale
            continue
        parts = []  # (input, producer text, low, high, observed?)
        measured = None if comparison is None else comparison.layer_for_op(op.index)
        seen = {s.input: s for s in (measured.slices if measured is not None else None) or ()}
        for s in lay.slices:
            src = f"op {s.producer_op} {s.producer_type}" if s.producer_op is not None else f"tensor {s.tensor}"
            o = seen.get(s.input)
            if o is not None and o.float_max >= o.float_min:
                parts.append((s.input, src, o.float_min, o.float_max, True))
                continue
            r = _own_range(sg, producers, s.tensor)
            if r is not None:
                parts.append((s.input, src, r[0], r[1], False))
        spans = [p[3] - p[2] for p in parts]
        if len(parts) < 2 or not max(spans) > 0:
            continue
        small = min(spans)
        ratio = float("inf") if small <= 0 else max(spans) / small
        if ratio <= MIXED_RATIO:
            continue
        text = "; ".join(f"input {i} ({src}) {'spans' if obs else 'can span'} {lo:.3g}..{hi:.3g}, {(hi - lo) / scale:.1f} steps"
                         for i, src, lo, hi, obs in parts)
        out.append({
            "severity": "warning", "rule": "mixed-ranges", "op_index": op.index, "op_type": op.type,
            "tensor_index": ot.index, "tensor_name": ot.name,
            "message": (f"The inputs of this {op.type} share one output scale ({scale:.3g} per step) but their float "
                        f"ranges differ {ratio:.0f}x: {text}. The small input keeps a few steps (a detector's scores "
                        "beside pixel boxes read 0 or 1). Keep the concatenation float where it is the model's float "
                        "output, else use 16-bit activations, or concatenate after dequantizing."),
            "observed": round(ratio, 3) if ratio != float("inf") else None, "expected": f"<= {MIXED_RATIO:g}x",
        })
    return out
