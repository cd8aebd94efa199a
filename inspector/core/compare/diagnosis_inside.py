"""The two causes that live inside a tensor (issue 25), for `diagnosis`:

- `mixed_ranges`: a CONCATENATION / PACK whose inputs' float ranges differ more than
  `mixed_ratio` under B's one output scale, with the smallest slice far below good: the evidence
  names the slice, its producer, its range and the steps it uses. Fix: `keep_float` of the
  concatenation (and the shape-only ops between it and its inputs) where its result is B's final
  float output (only read by a DEQUANTIZE that is a graph output), else `a16w8` where LiteRT has
  the 16x8 kernel for the op, else none;
- `channel_imbalance` (never on an op whose output grid the kernel fixes: SOFTMAX, LOGISTIC, TANH;
  an op whose input is already imbalanced points at that producer): a per-tensor activation whose channel ranges differ more than
  `imbalance_ratio` (largest / median) with most channels under `imbalance_steps` steps. Fix:
  `equalize` of its producer P with its one consumer C when both are CONV_2D / DEPTHWISE_CONV_2D /
  FULLY_CONNECTED and P's fused activation is NONE or RELU (positively homogeneous), else `a16w8`.

`point_at_inside_causes` then lets the layers damaged by those causes point at them: a consumer
of an imbalanced tensor (its weights for the small channels round to nothing, a mean error per
channel follows: it read as bias_shift), and the shape-only layers on a slice's way into a mixed
concatenation (they read as a resolution problem of their own).
"""

from __future__ import annotations

import math
from typing import Protocol

from inspector.core.compare.diagnosis_types import Diagnosis, Fix
from inspector.core.compare.median import median
from inspector.core.compare.result import LayerResult
from inspector.core.quantmath.opmath import fixed_output_params
from inspector.core.text.numbers import db
from inspector.core.tflite.equalize_pair import HOMOGENEOUS
from inspector.core.tflite.model import Model
from inspector.core.tflite.op_facts import A16W8_OPS, CONCAT_OPS, EQUALIZE_OPS, SLICE_PATH_OPS


class Thresholds(Protocol):
    """The thresholds these causes read (`diagnosis.Thresholds` has them all; it imports this module)."""

    @property
    def good_db(self) -> float: ...
    @property
    def mixed_ratio(self) -> float: ...
    @property
    def imbalance_ratio(self) -> float: ...
    @property
    def imbalance_steps(self) -> float: ...
    @property
    def imbalance_share(self) -> float: ...


def _final_float(qm: Model, op: int) -> bool:
    """The op's result is B's final float output: its only reader is a DEQUANTIZE whose output
    is a graph output."""
    sg = qm.main
    out = sg.ops[op].outputs[0]
    readers = sg.consumers().get(out, [])
    return (out not in sg.outputs and len(readers) == 1 and readers[0].type == "DEQUANTIZE"
            and readers[0].outputs[0] in sg.outputs)


def slice_path_ops(qm: Model, layer: LayerResult, below_db: float = math.inf) -> list[int]:
    """The ops between the producer of each slice reading SQNR under `below_db` and the
    concatenation (requantizations, reshapes)."""
    sg = qm.main
    producers = sg.producers()
    out: list[int] = []
    for s in layer.slices or ():
        if not s.sqnr_db < below_db:
            continue
        p = producers.get(s.tensor)
        while p is not None and p.index != s.producer_op and p.type in SLICE_PATH_OPS:
            out.append(p.index)
            p = producers.get(p.inputs[0]) if p.inputs and p.inputs[0] >= 0 else None
    return sorted(set(out))


def mixed_ranges(qm: Model, layer: LayerResult, t: Thresholds) -> Diagnosis | None:
    if layer.op_type not in CONCAT_OPS or not layer.slices or layer.scale is None or len(layer.scale) != 1:
        return None
    parts = [s for s in layer.slices if s.steps_used is not None and math.isfinite(s.float_max - s.float_min)]
    if len(parts) < 2:
        return None
    big = max(parts, key=lambda s: s.float_max - s.float_min)
    worst = min(parts, key=lambda s: s.sqnr_db)
    small = min(parts, key=lambda s: s.float_max - s.float_min)
    r_big, r_small = big.float_max - big.float_min, small.float_max - small.float_min
    ratio = math.inf if r_small <= 0 else r_big / r_small
    if not (r_big > 0 and ratio > t.mixed_ratio and worst.sqnr_db < t.good_db):
        return None
    src = "" if worst.producer_op is None else f" (from op {worst.producer_op} {worst.producer_type})"
    bsrc = "" if big.producer_op is None else f" (op {big.producer_op} {big.producer_type})"
    ev = (f"slice {worst.label}{src} spans {worst.float_min:.3g}..{worst.float_max:.3g}, {worst.steps_used:.1f} steps "
          f"of the one output scale {layer.scale[0]:.3g} set by slice {big.label}{bsrc} spanning "
          f"{big.float_min:.3g}..{big.float_max:.3g} ({ratio:.0f}x the range): SQNR {db(worst.sqnr_db)} dB where "
          f"the tensor reads {db(layer.metrics.sqnr_db)} dB")
    ops = (layer.op_index, *(k for k in slice_path_ops(qm, layer, t.good_db) if qm.main.ops[k].type != "QUANTIZE"))
    if _final_float(qm, layer.op_index):
        fix = Fix("keep_float", tuple(sorted(ops)))
    elif layer.op_type in A16W8_OPS:
        fix = Fix("a16w8", (layer.op_index,))
    else:
        fix = None
        ev += f"; LiteRT has no 16x8 {layer.op_type} the edit can use, and the result is not B's final float output"
    return Diagnosis("mixed_ranges", ev, fix)


def _imbalanced(layer: LayerResult, t: Thresholds) -> tuple[float, float] | None:
    """(range ratio, share of channels under imbalance_steps) when the layer's channels are imbalanced."""
    c = layer.channels
    if c is None or c.count < 2 or c.scales is None or layer.scale is None or len(layer.scale) != 1:
        return None
    steps = c.steps_used()
    if steps is None:
        return None
    ratio = c.range_ratio
    share = float((steps < t.imbalance_steps).mean())
    if ratio > t.imbalance_ratio and share > t.imbalance_share:
        return ratio, share
    return None


def equalize_pair(qm: Model, op: int) -> tuple[int, int] | None:
    """(P, C) when op P and its one consumer C allow equalization, else None."""
    sg = qm.main
    p = sg.ops[op]
    if p.type not in EQUALIZE_OPS or p.options.get("fused_activation_function", "NONE") not in HOMOGENEOUS:
        return None
    readers = sg.consumers().get(p.outputs[0], [])
    if p.outputs[0] in sg.outputs or len(readers) != 1 or readers[0].type not in EQUALIZE_OPS:
        return None
    c = readers[0]
    if not c.inputs or c.inputs[0] != p.outputs[0]:
        return None  # the activation input, not the weights
    return p.index, c.index


def channel_imbalance(qm: Model, layer: LayerResult, t: Thresholds) -> Diagnosis | None:
    if fixed_output_params(qm.main.ops[layer.op_index], qm.main) is not None:
        return None  # SOFTMAX, LOGISTIC, TANH: the kernel fixes the output grid, nothing to calibrate or equalize
    found = _imbalanced(layer, t)
    if found is None:
        return None
    ratio, share = found
    c = layer.channels
    assert c is not None
    steps = c.steps_used()
    assert steps is not None and layer.scale is not None  # steps: B's tensor has scales
    big = int(c.ranges().argmax())
    ev = (f"channel {big} spans {c.float_min[big]:.3g}..{c.float_max[big]:.3g} and sets the one scale "
          f"{layer.scale[0]:.3g}: channel ranges differ {ratio:.0f}x (largest / median), {100 * share:.0f}% of the "
          f"{c.count} channels keep under {t.imbalance_steps:g} steps (median {median(steps):.1f}); worst "
          f"channel {c.worst} reads SQNR {db(c.sqnr_db[c.worst])} dB, the tensor {db(layer.metrics.sqnr_db)} dB")
    pair = equalize_pair(qm, layer.op_index)
    if pair is not None:
        fix = Fix("equalize", pair)
    elif layer.op_type in A16W8_OPS:
        fix = Fix("a16w8", (layer.op_index,))
    else:
        fix = None
    return Diagnosis("channel_imbalance", ev, fix)


def point_at_inside_causes(qm: Model, by_op: dict[int, LayerResult], found: dict[int, Diagnosis], t: Thresholds) -> dict[int, Diagnosis]:
    """Layers damaged by a channel imbalance upstream or on a slice's way into a mixed
    concatenation point at that cause (its fix, `source_op`)."""
    sg = qm.main
    out = dict(found)
    consumers, producers = sg.consumers(), sg.producers()
    for op, d in found.items():  # an imbalance passed through (MEAN, pooling after the producer): the producer's
        src = producers.get(sg.ops[op].inputs[0]) if d.cause == "channel_imbalance" and sg.ops[op].inputs else None
        if src is not None and d.source_op is None and found.get(src.index) is not None and found[src.index].cause == "channel_imbalance":
            out[op] = found[op] = Diagnosis("channel_imbalance", f"its input from op {src.index} ({src.type}) is imbalanced "
                                                                 f"already: the error comes from op {src.index}", found[src.index].fix, src.index)
    for op, d in found.items():
        if d.cause == "mixed_ranges" and d.source_op is None:
            for k in slice_path_ops(qm, by_op[op], t.good_db):
                if k in by_op and found.get(k) is not None and found[k].cause in ("resolution", "clipping", "input_range", "none", "inherited"):
                    out[k] = Diagnosis("mixed_ranges", f"its values enter op {op} {by_op[op].op_type}'s one scale; "
                                                       f"the error comes from op {op}: {d.evidence}", d.fix, op)
        if d.cause == "channel_imbalance" and d.source_op is None:
            for c in consumers.get(sg.ops[op].outputs[0], []):
                lay = by_op.get(c.index)
                cd = found.get(c.index)
                if lay is None or cd is None or cd.cause in ("kernel", "clipping", "input_range", "channel_imbalance", "mixed_ranges"):
                    continue
                own = lay.isolated if lay.isolated is not None else lay.metrics
                if cd.cause == "none" and min(own.sqnr_db, lay.metrics.sqnr_db) >= t.good_db:
                    continue
                out[c.index] = Diagnosis(
                    "channel_imbalance",
                    f"its input from op {op} ({by_op[op].op_type}) is imbalanced: the error comes from op {op}, not "
                    f"a {cd.cause.replace('_', ' ')} of its own (SQNR {db(lay.metrics.sqnr_db)} dB); {d.evidence}",
                    d.fix, op)
    return out
