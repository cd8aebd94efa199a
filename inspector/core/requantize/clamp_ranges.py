"""Widen calibration ranges that are too narrow for the integer kernels.

litert-quantizer turns a range that never left 0 on the calibration samples into the scale
1e-9 / 255 (its floor). Such a scale breaks the kernels around the tensor:
- an op with a bounded activation (fused RELU6 / RELU_N1_TO_1, or such an op on its own)
  computes its clamp as round(6 / S_out) in int32 at prepare time (LiteRT `kernel_util.cc`:
  "no_integer_overflow_from_quantization was not true"): a dead depthwise + ReLU6, as in
  MobileNetV2-like models with extreme (or random) weights, is refused;
- the multipliers of its neighbours leave their representable range: XNNPACK refuses the model
  ("failed to create XNNPACK runtime"), the reference kernels abort on a multiplier check (a
  random-weight MobileNetV2's activations shrink to ~1e-11).

A degenerate tensor (span below MIN_SPAN) takes the range of the first tensor downstream of it
that has a real range (any scale represents its zeros exactly, and the one its consumers see
keeps their multipliers ordinary); when there is none (a whole tail of the model is degenerate)
it is widened to MIN_SPAN, the floor the TF converter's int8 models show (scale 2e-6 / 255).
On the int16 grid even that overflows a ReLU6 clamp; such an output gets the clamp range.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np
from ai_edge_litert import schema_py_generated as schema

from inspector.core.tflite import edit as fe
from inspector.core.tflite.op_facts import OP_CLAMPS

_AF = schema.ActivationFunctionType
FUSED_CLAMPS = {_AF.RELU6: (0.0, 6.0), _AF.RELU_N1_TO_1: (-1.0, 1.0)}
_LIMIT = 2.0**30  # clamp / S must stay well inside int32
MIN_SPAN = 2e-6  # narrowest calibrated range kept (the TF converter's floor, seen in its models)
_SEARCH_DEPTH = 16  # ops to look downstream for a real range


@dataclass(frozen=True)
class WidenedRange:
    tensor: str
    op: str  # producing op type and its activation, e.g. "DEPTHWISE_CONV_2D + RELU6"
    observed: tuple[float, float]
    new: tuple[float, float]
    how: str  # "downstream" (range of a tensor below it), "floor" (MIN_SPAN) or "clamp"


def notes_for(widened: list[WidenedRange]) -> list[str]:
    """One note per kind of repair, naming the first few tensors."""
    out = []
    narrow = [w for w in widened if w.how != "clamp"]
    if narrow:
        names = ", ".join(f"'{w.tensor}'" for w in narrow[:3]) + (" ..." if len(narrow) > 3 else "")
        borrowed = sum(w.how == "downstream" for w in narrow)
        out.append(
            f"repaired: {len(narrow)} activation tensor(s) spanned less than {MIN_SPAN:g} on the "
            f"calibration samples ({names}); the quantizer's near-zero scale for them breaks "
            "the kernels (ReLU6 clamp overflow, multipliers XNNPACK refuses), so "
            f"{borrowed} took the range of the first tensor downstream with a real range and "
            f"{len(narrow) - borrowed} were widened to {MIN_SPAN:g}, as the TF converter does"
        )
    for w in (w for w in widened if w.how == "clamp"):
        out.append(
            f"repaired: '{w.tensor}' ({w.op}) stayed within {w.observed[0]:.3g}..{w.observed[1]:.3g} "
            "on the calibration samples; its scale would overflow the int32 clamp of the activation "
            "(no_integer_overflow_from_quantization), so its range was set to the activation's "
            f"{w.new[0]:g}..{w.new[1]:g}"
        )
    return out


def _clamp_of(model: Any, op: Any) -> tuple[tuple[float, float], str] | None:
    kind = fe.op_name(model, op)
    if kind in OP_CLAMPS:
        return OP_CLAMPS[kind], kind
    fused = getattr(op.builtinOptions, "fusedActivationFunction", None)
    if fused in FUSED_CLAMPS:
        name = next(k for k, v in vars(_AF).items() if v == fused and not k.startswith("_"))
        return FUSED_CLAMPS[fused], f"{kind} + {name}"
    return None


def _span(stats: dict[str, Any]) -> tuple[float, float]:
    """The observed range with 0 included (the quantizer includes it too)."""
    return min(float(np.min(stats["min"])), 0.0), max(float(np.max(stats["max"])), 0.0)


def _has_range(stats: Any) -> bool:
    if not stats or "min" not in stats or "max" not in stats:
        return False
    lo, hi = _span(stats)
    return hi - lo >= MIN_SPAN


def _downstream_range(
    name: str, consumers: dict[str, list[Any]], outputs_of: Any, qsvs: dict[str, Any]
) -> tuple[float, float] | None:
    """The range of the nearest tensor below `name` (breadth first) that has a real range."""
    seen, todo = {name}, deque([(name, 0)])
    while todo:
        t, depth = todo.popleft()
        if depth >= _SEARCH_DEPTH:
            continue
        for op in consumers.get(t, []):
            for out in outputs_of(op):
                if out in seen:
                    continue
                seen.add(out)
                if _has_range(qsvs.get(out)):
                    return _span(qsvs[out])
                todo.append((out, depth + 1))
    return None


def widen_clamped_ranges(
    model: Any,
    qsvs: dict[str, Any],
    activation_bits: int = 8,
    keep: set[str] | frozenset[str] = frozenset(),
) -> list[WidenedRange]:
    """Widen, in place, the statistics of tensors whose range is too narrow to quantize.

    `activation_bits` is the widest activation type the recipe uses (16 for a16w8 somewhere):
    the clamp check assumes its grid, the finer one. Tensors in `keep` (ranges taken from the
    user's quantized model, which its runtime already accepts) are left as they are.
    """
    original = {k: v for k, v in qsvs.items() if isinstance(v, dict) and "min" in v and "max" in v}
    widened = []
    for sg in model.subgraphs:
        names = [fe.tensor_name(t) for t in sg.tensors]
        consumers: dict[str, list[Any]] = {}
        for op in sg.operators:
            for i in op.inputs:
                if i >= 0:
                    consumers.setdefault(names[i], []).append(op)

        def outputs_of(op: Any, names: list[str] = names) -> list[str]:
            return [names[i] for i in op.outputs if i >= 0]

        for op in sg.operators:
            found = _clamp_of(model, op)
            for name in outputs_of(op):
                stats = original.get(name)
                if stats is None or name in keep:
                    continue
                lo, hi = _span(stats)
                new, how = (lo, hi), ""
                if hi - lo < MIN_SPAN:
                    below = _downstream_range(name, consumers, outputs_of, original)
                    if below is not None:
                        new, how = below, "downstream"
                    else:
                        pad = (MIN_SPAN - (hi - lo)) / 2
                        new, how = (lo - pad, hi + pad), "floor"
                if found is not None:
                    clamp = found[0]
                    if activation_bits > 8:
                        step = max(abs(new[0]), abs(new[1])) / 32767
                    else:
                        step = (new[1] - new[0]) / 255
                    if max(abs(clamp[0]), abs(clamp[1])) / step >= _LIMIT:
                        new, how = clamp, "clamp"
                if not how:
                    continue
                qsvs[name] = {
                    **stats,
                    "min": np.full(np.shape(stats["min"]), new[0], dtype=np.float64),
                    "max": np.full(np.shape(stats["max"]), new[1], dtype=np.float64),
                }
                label = found[1] if found is not None else fe.op_name(model, op)
                observed = (float(np.min(stats["min"])), float(np.max(stats["max"])))
                widened.append(WidenedRange(name, label, observed, new, how))
    return widened
