"""Why a layer is bad and which surgical edit addresses it, from figures the comparison has.

Each compared layer gets one cause, checked in this order (the first that holds wins):
- `kernel`: runtime parity (when run) shows this op's runtime departing from the spec's integer
  math, or first diverging between runtimes by several steps;
- `clipping`: float values beyond B's representable range (clip rate), an own error far above
  rounding, and clipping able to carry that error (clip rate x largest overshoot^2 >= own MSE)
  -> `recalibrate`; named `input_range` (same fix) on the op holding the model input's range
  (`holds_input_range`: the clipping is the input's, the name the root cause gives it too);
- `mixed_ranges` (`diagnosis_inside`): a CONCATENATION / PACK whose inputs' float ranges differ
  > 16x under one output scale, its smallest slice far below good -> `keep_float` where the result
  is B's final float output, else `a16w8` where LiteRT has the kernel;
- `resolution`: the float values use a small part of the range (few steps) and the own SQNR is
  below `good_db` (a transformer's layer-norm variance spans 8% of its range at 57 dB: no
  problem) -> `recalibrate`;
- `channel_imbalance` (`diagnosis_inside`): a per-tensor activation whose channel ranges differ
  > 16x with most channels under 16 steps -> `equalize` of its producer and consumer, else `a16w8`
  (a consumer damaged by it, and a slice's way into a mixed concatenation, point at these causes);
- `weight_channels`: per-tensor weights over channels whose float ranges differ (the gain
  per-channel weights would give, predicted from A's channel ranges) -> `per_channel`;
- `weight_rounding`: B's weights represent A's poorly (weight SQNR low) with an own error far
  above rounding and a sound output range -> `weight_rounding` (MSE-fitted weight scales);
- `bias_shift`: a statistically significant mean error per channel carries most of the own error
  -> `bias_correct` (checked after the weights: rounded weights over inputs of one sign also
  leave a mean error per channel, which new weights remove at its source);
- `weight_rounding` again for a weight op whose own error is far above rounding for no reason above;
- `inherited`: the own (isolated) error is fine, the accumulated error comes from upstream: the
  evidence names the upstream layer with the worst own error, and the fix is that layer's;
- `none`.
"Own" error is the isolated one when it was computed, else the accumulated one (and always the
accumulated one for a same-scale op reading the model input as B's QUANTIZE made it: its range is
the input's, the isolated run feeds it the already quantized input, so the input's clipping shows
only in its accumulated error, and re-calibrating it re-calibrates the input); without the
isolated error, bias_shift, the excess-only weight_rounding and inherited are not decided (the
accumulated error mixes in what comes from upstream), and `none` says so. Recalibration is
never a verdict on ops with fixed output parameters (SOFTMAX, LOGISTIC, TANH...): their output
grid is the kernel's, not a calibration range, so values past its last step are the grid's own
rounding (`none`, the evidence says so; the audit makes it an info). Every fix proposed is one
the surgical edits apply (`tests/core/requantize/test_diagnosis_fixes_apply.py`). All thresholds are in
`THRESHOLDS`, each measured in `tests/core/compare/test_diagnosis.py`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, overload

from inspector.core.compare.clip_threshold import CLIP_RATE
from inspector.core.compare.diagnosis_figures import (  # noqa: F401  (re-exported: one import for users)
    BIAS_SIGMAS,
    bias_share,
    clip_error_bound,
    weight_channel_gain_db,
    weight_sqnr_db,
)
from inspector.core.compare.diagnosis_inside import (
    channel_imbalance,
    mixed_ranges,
    point_at_inside_causes,
)
from inspector.core.compare.diagnosis_types import Diagnosis, Fix
from inspector.core.compare.equalized import annotated
from inspector.core.compare.parity_result import RuntimeParityResult
from inspector.core.compare.result import ComparisonResult, LayerResult
from inspector.core.quantmath.opmath import fixed_output_params
from inspector.core.stats.metrics import Metrics
from inspector.core.text.numbers import db, number, percent
from inspector.core.tflite.model import Model
from inspector.core.tflite.op_facts import SAME_SCALE_OPS, SURGICAL_WEIGHT_OPS

CAUSES = ("kernel", "input_range", "clipping", "mixed_ranges", "resolution", "channel_imbalance", "weight_channels", "bias_shift",
          "weight_rounding", "inherited", "none")
EDITS = ("keep_float", "a16w8", "per_channel", "weight_rounding", "bias_correct", "recalibrate", "equalize",
         "relu6_equalize", "input_range")


@dataclass(frozen=True)
class Thresholds:
    """One place for every threshold (measured: healthy twins vs planted causes, see the test)."""

    own_excess: float = 0.6  # own RMSE/scale: pure output rounding is 0.29; healthy twins <= 0.46
    clip_rate: float = CLIP_RATE  # share of float values that saturate, with own_excess
    clip_share: float = 0.5  # clipping's error power (bounded per channel: clip rate x largest
    # overshoot^2) / own MSE: clipping is the cause where it carries at least half the own error
    range_use: float = 0.25  # float range / representable range: < 1/4 = two bits lost; healthy >= 0.48
    weight_gain_db: float = 6.0  # predicted weight-noise gain of per-channel over per-tensor scales
    weight_sqnr_db: float = 30.0  # B's weights vs A's: 8-bit per-channel weights measure 38-45 dB
    bias_share: float = 0.5  # share of the own error power that significant channel means carry; healthy <= 0.27
    bias_sigmas: float = BIAS_SIGMAS  # a channel mean is significant beyond this many standard errors
    inherit_db: float = 6.0  # own SQNR this far above the accumulated one: the error is inherited
    good_db: float = 35.0  # at or above this: a coarse grid costs nothing worth an edit (resolution, own SQNR)
    # and nothing is worth pointing upstream for (inherited, accumulated SQNR)
    kernel_lsb: float = 2.0  # runtime vs spec (or first divergence) by at least this many steps
    # inside the tensor (issue 25; measured in tests/core/compare/test_inside_diagnosis.py)
    mixed_ratio: float = 16.0  # concatenated inputs' float ranges differ more than this (detector head: ~900x)
    imbalance_ratio: float = 16.0  # largest / median channel float range (planted outlier: 94x; healthy <= 6x)
    imbalance_steps: float = 16.0  # a channel under this many steps of the tensor's scale is starved
    imbalance_share: float = 0.5  # ... for more than this share of the channels ("most")


THRESHOLDS = Thresholds()




def _fixed(qm: Model, op: int) -> bool:
    return fixed_output_params(qm.main.ops[op], qm.main) is not None


def _range_fix(layer: LayerResult) -> Fix:
    return Fix("recalibrate", (layer.op_index,))


def _own(layer: LayerResult) -> tuple[Metrics, str]:
    return (layer.isolated, "isolated") if layer.isolated is not None else (layer.metrics, "accumulated")


def holds_input_range(qm: Model, op: int) -> bool:
    """A same-scale op (RESHAPE, PAD...) whose input is the model input quantized by B's QUANTIZE:
    its range is the input's, which no compared layer owns."""
    sg = qm.main
    o = sg.ops[op]
    if o.type not in SAME_SCALE_OPS or not o.inputs or o.inputs[0] < 0:
        return False
    src = sg.producers().get(o.inputs[0])
    return src is not None and src.type == "QUANTIZE" and bool(src.inputs) and src.inputs[0] in sg.inputs


def _own_in(qm: Model, layer: LayerResult) -> tuple[Metrics, str]:
    if layer.isolated is not None and holds_input_range(qm, layer.op_index):
        return layer.metrics, "accumulated (the model input's range)"
    return _own(layer)


def _rank_db(layer: LayerResult) -> float:
    """Own SQNR for ranking causes: a cause found on an op whose isolated SQNR is infinite (it only
    moves values) was found on its accumulated error (`holds_input_range`)."""
    own = _own(layer)[0].sqnr_db
    return layer.metrics.sqnr_db if math.isinf(own) else own


def _kernel(layer: LayerResult, parity: RuntimeParityResult | None, t: Thresholds) -> Diagnosis | None:
    if parity is None:
        return None
    lp = parity.layer_for_op(layer.op_index)
    if lp is None:
        return None
    for side, d in (lp.spec_mismatch or {}).items():
        if d.max_lsb is not None and d.max_lsb >= t.kernel_lsb:
            return Diagnosis("kernel", f"{side} departs from the spec's integer math by up to {d.max_lsb:g} LSB on "
                                       f"{100 * d.differ_share:.1f}% of the values; extract the op as a repro")
    if lp.first_divergence and lp.max_lsb is not None and lp.max_lsb >= t.kernel_lsb:
        return Diagnosis("kernel", f"the runtimes first diverge here, by up to {lp.max_lsb:g} LSB on "
                                   f"{100 * lp.differ_share:.1f}% of the values; extract the op as a repro")
    return None


def diagnose_layer(fm: Model, qm: Model, layer: LayerResult, parity: RuntimeParityResult | None = None,
                   t: Thresholds = THRESHOLDS) -> Diagnosis:
    """The cause of one layer's error (without `inherited`, which needs the other layers)."""
    k = _kernel(layer, parity, t)
    if k is not None:
        return k
    m = layer.metrics
    own, which = _own_in(qm, layer)
    excess = own.rmse_over_scale
    big = excess is not None and excess >= t.own_excess
    bound = clip_error_bound(layer)
    clips = bound is None or own.mse <= 0 or bound / own.mse >= t.clip_share
    fixed = _fixed(qm, layer.op_index)
    if m.clip_rate is not None and m.clip_rate >= t.clip_rate and big and clips and fixed:
        return Diagnosis("none", f"{100 * m.clip_rate:.2f}% of the float values lie past the last step of "
                                 f"{layer.op_type}'s fixed output grid (the kernel's, not a calibration range); "
                                 f"{which} RMSE {excess:.2f} steps, SQNR {db(own.sqnr_db)} dB")  # fmt: skip
    if m.clip_rate is not None and m.clip_rate >= t.clip_rate and big and clips and holds_input_range(qm, layer.op_index):
        return Diagnosis("input_range", f"{100 * m.clip_rate:.2f}% of the model input's float values lie beyond the range "
                                        f"B's input QUANTIZE gives them (this op holds that range); {which} RMSE "
                                        f"{excess:.2f} steps, SQNR {db(own.sqnr_db)} dB", _range_fix(layer))  # fmt: skip
    if m.clip_rate is not None and m.clip_rate >= t.clip_rate and big and clips:
        return Diagnosis("clipping", f"{100 * m.clip_rate:.2f}% of the float values lie beyond B's range; {which} RMSE "
                                     f"{excess:.2f} steps, SQNR {db(own.sqnr_db)} dB", _range_fix(layer))
    mixed = mixed_ranges(qm, layer, t)
    if mixed is not None:
        return mixed
    if m.range_use is not None and m.range_use < t.range_use and own.sqnr_db < t.good_db and not fixed:
        return Diagnosis("resolution", f"the float values use {100 * m.range_use:.1f}% of B's range (about "
                                       f"{255 * m.range_use:.0f} steps); SQNR {db(m.sqnr_db)} dB", _range_fix(layer))
    imbalance = channel_imbalance(qm, layer, t)
    if imbalance is not None:
        return imbalance
    weight_op = layer.op_type in SURGICAL_WEIGHT_OPS
    gain = weight_channel_gain_db(fm, qm, layer) if weight_op and big else None  # weights read only when needed
    if gain is not None and gain >= t.weight_gain_db and big:
        return Diagnosis("weight_channels", f"per-tensor weights over channels of different ranges: per-channel scales cut the weight noise by "
                                            f"{gain:.1f} dB; {which} RMSE {excess:.2f} steps, SQNR "
                                            f"{db(own.sqnr_db)} dB", Fix("per_channel", (layer.op_index,)))
    wsq = weight_sqnr_db(fm, qm, layer) if weight_op and big else None
    if wsq is not None and wsq < t.weight_sqnr_db and big:
        return Diagnosis("weight_rounding", f"B's weights are {wsq:.1f} dB from A's (8 bits: about 40); {which} RMSE {excess:.2f} steps with a sound range "
                                            f"(use {_pct(m.range_use)}, clip {_pct(m.clip_rate)}); SQNR "
                                            f"{db(own.sqnr_db)} dB", Fix("weight_rounding", (layer.op_index,)))
    if layer.isolated is None:  # the accumulated error mixes in what comes from upstream
        why = (f"no isolated error ({layer.isolated_note})" if layer.isolated_note else
               "the own (isolated) error, left out by --no-isolated, tells the layer's own error (bias, weights) from inherited error")  # fmt: skip
        return Diagnosis("none", f"accumulated SQNR {db(m.sqnr_db)} dB, RMSE {_opt(excess)} steps, range use "
                                 f"{_pct(m.range_use)}, clip {_pct(m.clip_rate)}; {why}")  # fmt: skip
    share = bias_share(own, t.bias_sigmas)
    if weight_op and share is not None and share >= t.bias_share and big:
        return Diagnosis("bias_shift", f"significant mean error per channel carries {100 * share:.0f}% of the {which} error power; "
                                       f"RMSE {excess:.2f} steps, SQNR {db(own.sqnr_db)} dB", Fix("bias_correct", (layer.op_index,)))
    if weight_op and big:
        return Diagnosis("weight_rounding", f"{which} RMSE {excess:.2f} steps (rounding alone: 0.29) with a sound range (use "
                                            f"{_pct(m.range_use)}, clip {_pct(m.clip_rate)}); SQNR "
                                            f"{db(own.sqnr_db)} dB", Fix("weight_rounding", (layer.op_index,)))
    return Diagnosis("none", f"{which} SQNR {db(own.sqnr_db)} dB, RMSE {_opt(excess)} steps, range use {_pct(m.range_use)}, clip {_pct(m.clip_rate)}")


_pct = partial(percent, none="-", space=False)  # "12.5%", "-"


_opt = partial(number, decimals=2, none="-")  # "0.25", "-"


def _parents(qm: Model) -> list[list[int]]:
    """Per op of B, the ops producing its inputs, in input order."""
    sg = qm.main
    producers = sg.producers()
    return [[producers[i].index for i in op.inputs if i >= 0 and i in producers] for op in sg.ops]


def _ancestors(qm: Model, op: int, parents: list[list[int]] | None = None) -> set[int]:
    parents = _parents(qm) if parents is None else parents  # made once per diagnosis (a 1,500-op model: 1,000 lookups)
    seen: set[int] = set()
    stack = [op]
    while stack:
        for p in parents[stack.pop()]:
            if p not in seen:
                seen.add(p)
                stack.append(p)
    return seen


def diagnose(fm: Model, qm: Model, layers: tuple[LayerResult, ...], parity: RuntimeParityResult | None = None,
             t: Thresholds = THRESHOLDS) -> dict[int, Diagnosis]:
    """{B op index: Diagnosis} for every layer (the first output of each op decides)."""
    own: dict[int, Diagnosis] = {}
    for layer in layers:
        own.setdefault(layer.op_index, diagnose_layer(fm, qm, layer, parity, t))
    out: dict[int, Diagnosis] = {}
    by_op: dict[int, LayerResult] = {}
    for layer in layers:
        by_op.setdefault(layer.op_index, layer)
    own = point_at_inside_causes(qm, by_op, own, t)
    parents: list[list[int]] | None = None
    rank: dict[int, tuple[bool, float]] = {}  # the source ranking of each layer (own causes first)
    for op, layer in by_op.items():
        d = own[op]
        if d.cause == "none" and layer.isolated is not None:
            acc, iso = layer.metrics.sqnr_db, layer.isolated.sqnr_db
            if acc < t.good_db and iso - acc >= t.inherit_db:
                if parents is None:
                    parents = _parents(qm)
                    rank = {o: (own[o].cause == "none", _own(lay)[0].sqnr_db) for o, lay in by_op.items()}
                up = [by_op[a] for a in _ancestors(qm, op, parents) if a in by_op]
                src = min(up, key=lambda lay: rank[lay.op_index], default=None)
                if src is not None:
                    sd = own[src.op_index]
                    d = Diagnosis(
                        "inherited",
                        f"own SQNR {db(iso)} dB, accumulated {db(acc)} dB: the error comes from op {src.op_index} "
                        f"({src.op_type}, {sd.cause}, own SQNR {db(_own(src)[0].sqnr_db)} dB)",
                        sd.fix,
                        src.op_index,
                    )
        out[op] = d
    return out


def with_diagnoses(fm: Model, qm: Model, layers: tuple[LayerResult, ...],
                   parity: RuntimeParityResult | None = None) -> tuple[LayerResult, ...]:
    """The layers with their `diagnosis` filled in."""
    found = diagnose(fm, qm, layers, parity)
    return annotated(qm, tuple(replace(lay, diagnosis=found.get(lay.op_index)) for lay in layers))  # equalized: the reference named


def cause_rows(layers: tuple[LayerResult, ...]) -> list[dict[str, Any]]:
    """Layers with a cause of their own (not none, not inherited), worst own SQNR first, as
    report rows: {op_index, op_type, tensor_name, cause, evidence, fix, inheriting}: `inheriting`
    lists the layers whose accumulated error the diagnosis traces back to this one."""
    inheriting: dict[int, list[int]] = {}
    for lay in layers:
        d = lay.diagnosis
        if d is not None and d.cause == "inherited" and d.source_op is not None:
            inheriting.setdefault(d.source_op, []).append(lay.op_index)
    seen: set[int] = set()
    rows = []
    for lay in sorted(layers, key=_rank_db):
        d = lay.diagnosis
        if d is None or d.cause in ("none", "inherited") or lay.op_index in seen:
            continue
        seen.add(lay.op_index)
        rows.append({"op_index": lay.op_index, "op_type": lay.op_type, "tensor_name": lay.tensor_name, "cause": d.cause,
                     "evidence": d.evidence, "fix": None if d.fix is None else d.fix.to_json(),
                     "inheriting": sorted(set(inheriting.get(lay.op_index, [])))})  # fmt: skip
    return rows


@overload
def with_parity(result: ComparisonResult, fm: Model, qm: Model, parity: RuntimeParityResult | None) -> ComparisonResult: ...
@overload
def with_parity(result: None, fm: Model, qm: Model, parity: RuntimeParityResult | None) -> None: ...
def with_parity(result: ComparisonResult | None, fm: Model, qm: Model,
                parity: RuntimeParityResult | None) -> ComparisonResult | None:
    """The comparison with its layers re-diagnosed using a runtime-parity result of the same
    model B (the `kernel` cause needs it; the caller checks that it is the same file). Parity
    of another signature's subgraph is not used: its op indices name other ops."""
    if parity is None or result is None or getattr(parity, "signature", None) != getattr(result, "signature", None):
        return result
    return replace(result, layers=with_diagnoses(fm, qm, result.layers, parity))
