"""Suggest surgical edits of B that bring an objective tensor's SQNR to a target.

Greedy and verified. Candidates are B's ops with a diagnosed cause of their own first, then worst
isolated SQNR first (accumulated where an op has no isolated figure, e.g. the op reading the
model input). An op whose diagnosis proposes an edit that applies is a candidate whatever its
type: a shape op that clips the model input is fixed by re-calibrating its range, which keep
float cannot do. Each step tries, on every remaining candidate, the diagnosis' edit and keep float
(the strongest edit, a proxy for how much the op can give), and takes the try that helps most;
when that is keep float it then tries the cheaper edits on that op (re-calibration of its output,
bias correction, per-channel weights, 16-bit activations; the diagnosis' edit first): the first
that reaches the target or keeps CHEAP_SHARE of keep float's gain wins; else keep float. When no single op
gives SINGLE_OP_MIN_GAIN_DB (error spread over many layers), one edit kind is applied to the
k worst layers, cheapest kind first, with the smallest k found by binary search. Every try is a real edited model,
validated in LiteRT, whose objective SQNR is measured against model A (A's values computed once)
on the held-out samples: edits calibrate on the first 2/3, gains are measured on the rest
(`samples.holdout`; in-sample, and said so, with fewer than 24 samples). Each chosen step reports its size and XNNPACK latency. The final model's
first output's SQNR is measured on the same held-out samples.

The plan offered is the one whose figures are printed: the cheapest plan found that meets the
target, else the best plan evaluated (highest objective SQNR, then smallest), even when the
group search found it short of the target (`_offer_best`).

The objective is the worst SQNR over B's graph outputs, or over the outputs of the ops a
pattern selects (e.g. the logits before a softmax, whose output is flat for random weights); a
concatenated output counts by its worst slice (`objective.Objective`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.core.codec.json_record import JsonRecord, json_field
from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.pairing import Pairing, pair_models
from inspector.core.compare.result import LayerResult
from inspector.core.errors import InputError, InspectorError
from inspector.core.progress import TaskState, as_task
from inspector.core.quantmath.opmath import fixed_output_params
from inspector.core.requantize.choices import edit_label
from inspector.core.requantize.diagnosis_fix import (
    diagnosed_first,
    fix_plan,
    has_own_cause,
    plan_kind,
)
from inspector.core.requantize.objective import Objective, latency_ms
from inspector.core.requantize.recalibrate import integer_inputs
from inspector.core.requantize.suggest_options import (
    SurgicalSuggestOptions as SurgicalSuggestOptions,  # re-exported: callers import it with suggest_surgical
)
from inspector.core.requantize.surgical import (
    PreparedPair,
    SurgicalResult,
    apply_plan,
    plan_samples,
)
from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan, match_ops
from inspector.core.requantize.tradeoff import TradeoffPoint
from inspector.core.samples.holdout import split_samples
from inspector.core.samples.spec import Sample
from inspector.core.tflite.equalize_pair import RELU6, activation, refusal
from inspector.core.tflite.model import Model, load_model
from inspector.core.tflite.op_facts import A16W8_OPS, SUGGEST_SKIP_OPS, SURGICAL_WEIGHT_OPS
from inspector.core.tflite.signatures import select_signature
from inspector.core.writing import json_float

CHEAP_SHARE = 0.9
SINGLE_OP_MIN_GAIN_DB = 0.5
# Edits of a group of layers, cheapest first (size and latency).
GROUP_EDITS = ("recalibrate", "bias_correct", "per_channel", "a16w8", "keep_float")
CHEAP_EDITS = ("recalibrate", "bias_correct", "per_channel", "a16w8")


@dataclass(frozen=True)
class Step(JsonRecord):
    ops: tuple[int, ...]
    type: str
    tensor: str
    edit: str
    gain_db: float
    objective_sqnr_db: float
    size_bytes: int
    latency_ms: float


@dataclass
class SurgicalSuggestResult(JsonRecord):
    target_sqnr_db: float | None
    objective: tuple[str, ...]  # B tensor names
    met: bool
    baseline_sqnr_db: float
    best_sqnr_db: float
    baseline_size_bytes: int
    baseline_latency_ms: float
    steps: list[Step]
    plan: SurgicalPlan | None
    output_sqnr_db_before: float | None = None
    output_sqnr_db_after: float | None = None
    # every evaluated plan (the given model is not one)
    points: list[TradeoffPoint] = json_field(default_factory=list, encode=lambda ps: [p.surgical_json() for p in ps])
    notes: list[str] = field(default_factory=list)
    best: SurgicalResult | None = json_field(default=None, skip=True)
    evaluations: int = 0
    calibration: dict[str, Any] | None = None  # `SampleSplit.to_json`: where the gains were measured
    candidates: list[dict[str, Any]] = field(default_factory=list)  # B's op, type, tensor, isolated dB; worst first
    ranked: int = 0  # B's layers ranked; single-op steps try `candidates`, group edits the ranked ones

    JSON_EXTRA = {"route": lambda r: "surgical",
                  "evaluation": lambda r: None if r.calibration is None else r.calibration["evaluation"]}  # fmt: skip
    JSON_KEYS = ("route", "target_sqnr_db", "objective", "met", "baseline_sqnr_db", "best_sqnr_db", "baseline_size_bytes",
                 "baseline_latency_ms", "output_sqnr_db_before", "output_sqnr_db_after", "steps", "plan", "points",
                 "evaluations", "calibration", "evaluation", "notes", "candidates", "ranked")  # fmt: skip


def applicable(qm: Model, op_index: int, edits: Sequence[str]) -> list[str]:
    op = qm.main.ops[op_index]
    out: list[str] = []
    for e in edits:
        if e == "keep_float":
            out.append(e)
        elif e in ("per_channel", "bias_correct", "weight_mse") and op.type in SURGICAL_WEIGHT_OPS:
            # per_channel also re-derives weights that are per-channel already: a damaged weight
            # scale (or a bad rounding) is repaired from A's weights at no size or speed cost.
            if qm.main.tensors[op.inputs[1]].dtype == "int8" and qm.main.tensors[op.inputs[0]].dtype == "int8":
                out.append(e)
        elif e == "a16w8" and op.type in A16W8_OPS and qm.main.tensors[op.outputs[0]].dtype == "int8":
            out.append(e)
        elif e == "recalibrate" and qm.main.tensors[op.outputs[0]].dtype == "int8" and fixed_output_params(op, qm.main) is None:
            out.append(e)
        elif e == "equalize" and refusal(qm, op_index) is None:
            out.append(e)
        elif e == "relu6_equalize" and activation(qm, op_index) == RELU6 and refusal(qm, op_index, relu6=True) is None:
            out.append(e)
        elif e == "input_range" and integer_inputs(qm, op_index):
            out.append(e)
    return out


def suggest_surgical(
    float_path: str,
    quant_path: str,
    target_sqnr_db: float | None,
    options: SurgicalSuggestOptions | None = None,
    task: TaskState | None = None,
) -> SurgicalSuggestResult:
    opts = options or SurgicalSuggestOptions()
    task = as_task(task)
    report = task.report
    if target_sqnr_db is None and opts.max_steps is None:
        raise InputError("give a target SQNR or a maximum number of edits")
    budget = 8 if opts.max_steps is None else opts.max_steps
    sig = opts.signature
    fm, qm = select_signature(load_model(float_path), sig), select_signature(load_model(quant_path), sig)
    pairing = pair_models(fm, qm)
    samples = plan_samples(SurgicalPlan((), opts.samples, signature=sig), fm, qm)
    # Edits calibrate on the first part of the samples (apply_plan); every gain is measured on the rest.
    split = split_samples(len(samples))
    held_out = split.evaluation_of(samples)
    if opts.objective is None:
        tensors = list(qm.main.outputs)
    else:
        tensors = [qm.main.ops[i].outputs[0] for i in match_ops(qm, opts.objective, "objective")]
    report(0.0, "comparing the quantized model (isolated errors)")
    base_cmp = compare_models(float_path, quant_path, CompareOptions(samples=opts.samples, isolated=True, runtime=opts.runtime, signature=sig))
    objective = Objective(fm, qm, pairing, tensors, held_out, opts.runtime, sig)
    outputs = Objective(fm, qm, pairing, list(qm.main.outputs[:1]), held_out, opts.runtime, sig)
    q_bytes = open(quant_path, "rb").read()
    baseline = objective.sqnr(q_bytes)
    # Layers the diagnosis gives a cause of their own come first (worst isolated SQNR first within each group).
    ranked = sorted(
        (lay for lay in base_cmp.layers if pairing.float_op_for(lay.op_index) is not None
         and (diagnosed_edits(qm, lay, opts.edits) or _ordinary_candidate(lay))),
        key=lambda lay: (not has_own_cause(lay), _own_db(lay)),
    )
    ranked_all: list[int] = []
    for lay in ranked:
        if lay.op_index not in ranked_all:
            ranked_all.append(lay.op_index)
    candidates = ranked_all[: opts.candidates]
    notes: list[str] = []
    first = {}
    for lay in ranked:
        if lay.op_index in candidates and lay.op_index not in first:
            first[lay.op_index] = {"op": lay.op_index, "type": lay.op_type, "tensor": lay.tensor_name,
                                   "isolated_sqnr_db": None if lay.isolated is None else json_float(lay.isolated.sqnr_db),
                                   **({"accumulated_sqnr_db": json_float(lay.metrics.sqnr_db),
                                       "isolated": "not measured" if lay.isolated is None else "exact"}
                                      if _by_accumulated(lay) else {}),
                                   "cause": lay.diagnosis.cause if lay.diagnosis is not None and has_own_cause(lay) else None}  # fmt: skip
    result = SurgicalSuggestResult(
        target_sqnr_db, objective.names, False, baseline, baseline, len(q_bytes), latency_ms(q_bytes, qm, samples[0], signature=sig), [], None,
        output_sqnr_db_before=outputs.sqnr(q_bytes) if qm.main.outputs else None, notes=notes,
        candidates=[first[op] for op in candidates], ranked=len(ranked_all),
    )  # fmt: skip
    result.calibration = split.to_json()
    notes.append(f"gains: {split.note}")
    if objective.has_slices:
        notes.append("the objective is read by its worst part: a concatenated output's slices are measured apart "
                     "(the whole tensor's SQNR hides a collapsed slice beside large values)")
    chosen: list[Edit] = []
    current = baseline
    best_tried: list[tuple[float, SurgicalResult]] = []  # the best evaluated plan: (objective SQNR, result)
    prepared = PreparedPair.of(float_path, quant_path, sig, opts.runtime)  # parsed, paired, A measured once

    def met(v: float) -> bool:
        return target_sqnr_db is not None and v >= target_sqnr_db

    def evaluate(edits: tuple[Edit, ...]) -> tuple[SurgicalResult, float] | None:
        task.check()
        if result.evaluations >= opts.max_evaluations:
            return None
        result.evaluations += 1
        plan = SurgicalPlan((*chosen, *edits), opts.samples, signature=sig)
        try:
            res = apply_plan(float_path, quant_path, plan, samples, runtime=opts.runtime, prepared=prepared)
            v = objective.sqnr(res.model_bytes)  # an int16 run may swallow the objective's int8 tensor
        except InspectorError as e:
            notes.append(f"{edits[0].kind} on {len(edits)} op(s) not possible: {e.message}")
            return None
        if not best_tried or (v, -res.size_bytes) > (best_tried[0][0], -best_tried[0][1].size_bytes):
            best_tried[:] = [(v, res)]
        names = tuple(f"{e.kind} op:{e.ops[0]}" for e in plan.edits)
        result.points.append(TradeoffPoint(_point_label(names), tuple(op for e in plan.edits for op in e.ops), res.size_bytes, v, names))
        return res, v

    # Whole-model edits first: every per-tensor depthwise pair over spread channels equalized as one chain (DFQ),
    # each clipped integer model input widened; each kept only when it gains SINGLE_OP_MIN_GAIN_DB (held out).
    for label, edits in _model_edits(fm, qm, pairing, samples, opts.edits, notes):
        if met(current):
            break
        got = evaluate(edits)
        if got is None:
            continue
        res, v = got
        if v - current < SINGLE_OP_MIN_GAIN_DB:
            notes.append(f"{label}: measured {v - current:+.2f} dB on the held-out samples, not kept")
            continue
        chosen.extend(edits)
        notes.extend(f"{label}: {c.statement()}" for c in res.float_changes)  # relu6_equalize: the float function changed
        ops = tuple(o for e in edits for o in e.ops)
        q = qm.main.ops[ops[0]]
        result.steps.append(Step(ops, q.type, label, edits[0].kind, v - current, v, res.size_bytes,
                                 latency_ms(res.model_bytes, qm, samples[0], signature=sig)))  # fmt: skip
        if res.interface_change is not None:
            notes.append(res.interface_change["statement"])
        result.best = res
        current = v
    # Single-op steps use at most half the evaluations; the group search keeps the rest.
    while not met(current) and len(result.steps) < budget and result.evaluations < opts.max_evaluations // 2:
        done = {o for e in chosen for o in e.ops}
        report(min(0.95, result.evaluations / max(opts.max_evaluations, 1)), f"step {len(result.steps) + 1}: trying keep float on "
                                                                             f"{len(candidates) - len(done)} candidate(s)")
        trials = []
        for op in candidates:
            if op in done:
                continue
            for edits in _step_tries(qm, base_cmp.layer_for_op(op), opts.edits):
                got = evaluate(edits)
                if got is not None:
                    trials.append((got[1], op, edits, got[0]))
        if not trials:
            break
        best_v, op, edits, res = max(trials, key=lambda t: (t[0], -t[3].size_bytes))
        if best_v - current < SINGLE_OP_MIN_GAIN_DB:
            notes.append(f"after {len(result.steps)} step(s), no remaining candidate gives {SINGLE_OP_MIN_GAIN_DB} dB more: "
                         "the rest of the error is spread over many layers" if result.steps else
                         f"no single candidate gives {SINGLE_OP_MIN_GAIN_DB} dB: the error is spread over many layers")  # fmt: skip
            break
        if edits[0].kind == "keep_float":  # the proxy won: a cheaper edit keeping most of its gain is preferred
            measured = base_cmp.layer_for_op(op)
            kinds = [k for k in CHEAP_EDITS if k in applicable(qm, op, opts.edits)]
            tried = {t[2]: (t[3], t[0]) for t in trials if t[1] == op}  # this step's tries on op: not run twice
            for cheap in diagnosed_first(kinds, None if measured is None else measured.diagnosis):
                one = (Edit(cheap, f"op:{op}", ops=(op,)),)
                got = tried.get(one) or evaluate(one)
                if got is not None and (met(got[1]) or got[1] - current >= CHEAP_SHARE * (best_v - current)):
                    best_v, edits, res = got[1], one, got[0]
                    break
        chosen.extend(edits)
        q = qm.main.ops[op]
        ops = tuple(o for e in edits for o in e.ops)
        what = qm.main.tensors[q.outputs[0]].name if len(ops) == 1 else f"ops {', '.join(map(str, ops))} (the diagnosed fix of op {op})"
        result.steps.append(Step(ops, q.type, what,
                                 edits[0].kind, best_v - current, best_v, res.size_bytes,
                                 latency_ms(res.model_bytes, qm, samples[0], signature=sig)))
        result.best = res
        current = best_v
    if not met(current) and target_sqnr_db is not None and len(result.steps) < budget:
        current = _prefix_search(qm, ranked_all, chosen, current, met, evaluate, opts, result, samples, report)
    if target_sqnr_db is not None and not met(current) and best_tried and best_tried[0][0] > current:
        current = _offer_best(qm, chosen, best_tried[0], result, baseline, samples[0], sig)
    result.best_sqnr_db = current
    result.met = target_sqnr_db is None or met(current)
    if result.best is not None:
        result.plan = result.best.plan
        report(0.97, "re-measuring the suggested model's output")
        result.output_sqnr_db_after = outputs.sqnr(result.best.model_bytes) if qm.main.outputs else None
    if result.best is not None and current < baseline:
        notes.append(f"the plan offered measures {current - baseline:+.2f} dB against the unedited model (held out): it "
                     "lowers the objective, not worth applying")  # fmt: skip
    if target_sqnr_db is not None and not result.met:
        layers = sum(len(st.ops) for st in result.steps)
        notes.append(f"target {target_sqnr_db:.1f} dB not reached: best {current:.2f} dB with {len(result.steps)} step(s) "
                     f"on {layers} layer(s), the plan offered")  # fmt: skip
    report(1.0, "done")
    return result


def _model_edits(fm: Model, qm: Model, pairing: Pairing, samples: Sequence[Sample], kinds: Sequence[str],
                 notes: list[str] | None = None) -> list[tuple[str, tuple[Edit, ...]]]:  # fmt: skip
    """(label, edits) of the whole-model edits that apply: the DFQ equalize chain (with its ReLU6
    producers, `relu6_equalize`, when allowed), the widening of each integer model input whose real
    values clip. A ReLU6 producer that saturates is left out of the chain (said in `notes`)."""
    from inspector.core.requantize.imbalance import dfq_chain
    from inspector.core.requantize.input_clip import input_clips
    from inspector.core.requantize.relu6 import usable_chain

    out: list[tuple[str, tuple[Edit, ...]]] = []
    chain = dfq_chain(fm, qm, pairing, relu6="relu6_equalize" in kinds) if "equalize" in kinds else None
    chain, left_out = usable_chain(chain, fm, qm, pairing, split_samples(len(samples)).calibration(samples))
    if notes is not None:
        notes += left_out
    if chain is not None:
        six = (f", ReLU6 -> ReLU at op(s) {', '.join(map(str, chain.relu6))} (changes the float function, measured)"
               if chain.relu6 else "")
        out.append((f"equalize {len(chain.pairs)} depthwise pair(s) ({', '.join(f'{p.producer}->{p.consumer}' for p in chain.pairs)}){six}",
                    tuple(Edit(chain.edit, f"op:{p.producer}", None, (p.producer, p.consumer)) for p in chain.pairs)))
    if "input_range" in kinds:
        for op, clip in input_clips(qm, samples).items():
            out.append((f"widen model input '{clip.name}' ({100 * clip.share:.1f}% of its real values clipped)",
                        (Edit("input_range", f"op:{op}", None, (op,)),)))
    return out


def _offer_best(qm: Model, chosen: list[Edit], tried: tuple[float, SurgicalResult], result: SurgicalSuggestResult,
                baseline: float, sample: Sample, sig: str | None) -> float:  # fmt: skip
    """Make the best evaluated plan the one offered (target not met): keep the steps it shares
    with the greedy choice, describe the rest as one step, and return its objective SQNR."""
    v, res = tried
    edits = list(res.plan.edits)
    kept, i = [], 0
    for st in result.steps:
        n = len(st.ops)
        if [(e.kind, e.ops) for e in edits[i : i + n]] != [(e.kind, e.ops) for e in chosen[i : i + n]]:
            break
        kept.append(st)
        i += n
    rest = edits[i:]
    before = kept[-1].objective_sqnr_db if kept else baseline
    if rest:
        kinds = {e.kind for e in rest}
        ops = tuple(e.ops[0] for e in rest)
        if len(rest) == 1:
            q = qm.main.ops[ops[0]]
            what, tensor = q.type, qm.main.tensors[q.outputs[0]].name
        else:
            what, tensor = "group", f"the {len(rest)} layers " + ", ".join(str(op) for op in ops)
        kind = rest[0].kind if len(kinds) == 1 else "+".join(sorted(kinds))
        kept.append(Step(ops, what, tensor, kind, v - before, v, res.size_bytes, latency_ms(res.model_bytes, qm, sample, signature=sig)))
    result.steps[:] = kept
    chosen[:] = edits
    result.best = res
    return v


def _by_accumulated(layer: LayerResult) -> bool:
    """Is the layer ranked by its accumulated SQNR? Where there is no isolated figure, or where the
    isolated one is exact and the diagnosis still finds a cause of its own: the op that reads the
    model input is exact on B's quantized input, and its error (the input's range) is all its own,
    as the diagnosis measures it."""
    iso = layer.isolated.sqnr_db if layer.isolated is not None else None
    return iso is None or (math.isinf(iso) and has_own_cause(layer))


def _own_db(layer: LayerResult) -> float:
    """What a candidate is ranked by: its own (isolated) SQNR, or its accumulated one (`_by_accumulated`)."""
    iso = layer.isolated
    return layer.metrics.sqnr_db if iso is None or _by_accumulated(layer) else iso.sqnr_db


def _ordinary_candidate(layer: LayerResult) -> bool:
    """A candidate without a diagnosed edit: measured on its own, and not a boundary or shape op."""
    return layer.isolated is not None and layer.op_type not in SUGGEST_SKIP_OPS


def diagnosed_edits(qm: Model, layer: LayerResult | None, edits: Sequence[str]) -> tuple[Edit, ...]:
    """The diagnosis' fix as a plan step (`diagnosis_fix.fix_plan`: every op it names, an equalize
    fix its producer and consumer as one edit), offered at the first op it names, when the layer
    has a cause of its own and the edit is allowed and applies to each of the ops."""
    d = getattr(layer, "diagnosis", None)
    if layer is None or d is None or d.fix is None or not has_own_cause(layer) or tuple(d.fix.ops)[:1] != (layer.op_index,):
        return ()
    kind = plan_kind(d.fix.edit)
    ops = d.fix.ops[:1] if kind in ("equalize", "relu6_equalize") else d.fix.ops
    if not all(kind in applicable(qm, op, edits) for op in ops):
        return ()
    return fix_plan(d.fix).edits


def _step_tries(qm: Model, layer: LayerResult | None, edits: Sequence[str]) -> list[tuple[Edit, ...]]:
    """What one greedy step tries on a candidate: the diagnosis' edit, and keep float (or the first
    edit that applies) on an ordinary candidate or one without a diagnosed edit."""
    if layer is None:
        return []
    op = layer.op_index
    tries = [fixed] if (fixed := diagnosed_edits(qm, layer, edits)) else []
    if _ordinary_candidate(layer) or not tries:
        kinds = applicable(qm, op, edits)
        first = "keep_float" if "keep_float" in kinds else (kinds[0] if kinds else None)
        if first is not None and not (tries and tries[0][0].kind == first):
            tries.append((Edit(first, f"op:{op}", ops=(op,)),))
    return tries


def _point_label(edits: tuple[str, ...]) -> str:
    """('keep_float op:11', 'bias_correct op:4') -> 'bias-correct 4 (+1)': the edit this point added."""
    if not edits:
        return "none"
    kind, _, op = edits[-1].partition(" op:")
    more = f" (+{len(edits) - 1})" if len(edits) > 1 else ""
    return f"{kind.replace('_', '-')} {op}{more}"


def _prefix_search(
    qm: Model, ranked: list[int], chosen: list[Edit], current: float, met: Callable[[float], bool],
    evaluate: Callable[[tuple[Edit, ...]], tuple[SurgicalResult, float] | None], opts: SurgicalSuggestOptions,
    result: SurgicalSuggestResult, samples: Sequence[Sample], report: Callable[[float, str], None],
) -> float:  # fmt: skip
    """The smallest k such that one edit kind on the k worst-ranked ops meets the target.

    Kinds are tried cheapest first; a kind is skipped when even all its applicable ops fall short
    (one evaluation). Then a binary search over k (assumes more edited layers never hurt).
    """
    done = {e.ops[0] for e in chosen}
    room = (8 if opts.max_steps is None else opts.max_steps) - len(chosen)  # the layer budget holds here too
    for kind in (k for k in GROUP_EDITS if k in opts.edits):
        ops = [op for op in ranked if op not in done and kind in applicable(qm, op, opts.edits)][: max(room, 0)]
        if not ops:
            continue
        report(min(0.95, result.evaluations / max(opts.max_evaluations, 1)), f"trying {kind} on the {len(ops)} worst layers")

        def group(k: int, kind: str = kind, ops: list[int] = ops) -> tuple[Edit, ...]:
            return tuple(Edit(kind, f"op:{op}", ops=(op,)) for op in ops[:k])

        if result.evaluations >= opts.max_evaluations:
            result.notes.append("stopped: evaluation budget used")
            break
        full = evaluate(group(len(ops)))
        if full is None or not met(full[1]):
            where = f"the {len(ops)} ranked layers it applies to (of {result.ranked})"
            if full is not None:
                result.notes.append(f"{edit_label(kind)} on {where} reaches {full[1]:.2f} dB, short of the target")
            elif result.evaluations >= opts.max_evaluations:
                result.notes.append("stopped: evaluation budget used")
                break
            continue
        lo, hi, best = 0, len(ops), full  # met at hi, not known at lo
        while hi - lo > 1:
            mid = (lo + hi) // 2
            got = evaluate(group(mid))
            if got is None:
                break
            if met(got[1]):
                hi, best = mid, got
            else:
                lo = mid
        res, v = best
        chosen.extend(group(hi))
        result.steps.append(Step(tuple(ops[:hi]), "group", f"the {hi} worst-ranked layers", kind, v - current, v,
                                 res.size_bytes, latency_ms(res.model_bytes, qm, samples[0], signature=opts.signature)))  # fmt: skip
        result.best = res
        return v
    return current
