"""Blame by intervention: what removing one op's own quantization error does to the model output.

A rule on one layer's statistics says what a layer looks like; only an intervention says what it
costs. For a bounded set of candidates (`candidates`: the layers with a rule-based cause of their
own, the ops an `inherited` verdict names, the op holding the model input's range, the worst few
by own error; at most MAX_CANDIDATES) one edited model B is built per candidate and its outputs
are measured against model A on the held-out samples (`samples.holdout`; in-sample, and said so,
with too few samples):

- the op holding the model input's range (`diagnosis.holds_input_range`), or a layer whose cause
  is its range (clipping, resolution): its range re-calibrated on the calibration samples (the
  error the cause claims is the range's; keep float would quantize back to the same range);
- a layer whose output grid is the cause (channel_imbalance, mixed_ranges, at the producer): keep
  float of it and its readers, so the tensor between them stays float (16-bit activations of the
  op alone measured nothing on the planted imbalance: its readers still read the 8-bit grid);
- any other op: keep float (`keep_float`: the op computes in float with A's weights, its
  output quantized back to B's own scale), which removes its weights' and arithmetic's error;
- the op reading an integer model input whose real values clip (`input_clip`): the input widened
  (`input_range`, an interface change, said so);
- every per-tensor depthwise -> consumer pair whose depthwise channels spread (`imbalance.dfq_chain`):
  one intervention, equalize of all the pairs (the chain is one fix, one plan); where a producer
  ends in ReLU6 the chain's edit is `relu6_equalize` (DFQ: ReLU6 -> ReLU, then equalize; `relu6.py`),
  the float model's own change measured on the held-out samples (A with ReLU against A, and its
  accuracy when labelled) and stated in the root cause's note; refused with the reason (in the
  note) where the activation saturates or the float output changes too much.

All interventions share one `surgical.PreparedPair` (models parsed and paired once, A's float values
of every re-calibrated tensor measured in one run of A).

share = 1 − E_after / E_before and gain = 10·log10(E_before / E_after), E the output error energy
Σ(x − y)² / Σx² (mean over B's outputs; `Objective.relative_error`). Errors of independent ops add
roughly in energy; when the top shares sum far from 1 the note says the candidates interact.

The measured blame then corrects the rule-based verdicts (`rejudged`): `inherited from op X` stays
only where X's share is at least INHERIT_SHARE (else the measured ancestor that covers it is
named, else the layer reads `none`: no single op explains the error), and a layer whose rule names
a cause of its own but whose measured blame is below both NEGLIGIBLE_SHARE and MIN_GAIN_DB loses
that cause (pointing at the root cause upstream when one covers it); so does an unmeasured one below
an op that alone removes DOMINANT_SHARE of the output error (at most the rest can be its own). Each root cause's fix is
measured too (`fix_gain_db`, held out): the diagnosed edit, or the intervention itself when that is
an edit and gains clearly more (`CHEAP_SHARE`); no fix is proposed when no edit gains MIN_GAIN_DB (the note gives the figures).

A model whose held-out output already reads HEALTHY_DB needs HEALTHY_GAIN_DB of a cause (and of an
`inherited` source), and an unmeasured rule-based cause whose own error is smaller than that of a
measured layer with a negligible blame reads `none`: on healthy models blame gates the rules.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector.core.compare.diagnosis import holds_input_range
from inspector.core.compare.diagnosis_types import Blame, Diagnosis, Fix, RootCause
from inspector.core.compare.options import CompareOptions
from inspector.core.compare.pair_check import PairCheck
from inspector.core.compare.result import ComparisonResult, LayerResult
from inspector.core.errors import InputError, InspectorError
from inspector.core.progress import TaskState, as_task
from inspector.core.requantize.diagnosis_fix import fix_plan, has_own_cause, plan_kind
from inspector.core.requantize.imbalance import Chain, dfq_chain, refused
from inspector.core.requantize.input_clip import InputClip, input_clips
from inspector.core.requantize.objective import Objective
from inspector.core.requantize.relu6 import float_change, usable_chain
from inspector.core.requantize.suggest_surgical import applicable
from inspector.core.requantize.surgical import PreparedPair, apply_plan
from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan
from inspector.core.samples.holdout import split_samples
from inspector.core.samples.settings import SampleSettings
from inspector.core.samples.sources import open_source
from inspector.core.samples.spec import Sample
from inspector.core.tflite.litertlm import section_extent
from inspector.core.tflite.model import Model
from inspector.core.tflite.op_facts import SUGGEST_SKIP_OPS

if TYPE_CHECKING:
    from inspector.core.runtime.worker import WorkerProcess

# A plan as the measurements key it: (kind, ops, calibration) of each edit.
PlanKey = tuple[tuple[str, tuple[int, ...], str | None], ...]

MAX_CANDIDATES = 6  # interventions per comparison (each is one edited model run over the held-out samples)
BLAME_SAMPLES = 192  # blame calibrates on the first 128 and measures on the next 64 of the comparison's samples
# (the bundled example's 192): its cost stays bounded when a comparison runs over many samples (MobileNetV2 160
# x 512: blame +90 % of the comparison on all 512, +35 % on the first 192)
WORST_OWN = 2  # the worst layers by own error are candidates whatever their verdict
ROOT_SHARE = 0.1  # a root cause removes at least this share of the output error energy ...
MIN_GAIN_DB = 0.5  # ... and gains at least this much (a healthy model's layers gain less)
OWN_ERROR_GAIN_DB = 3.0  # a layer without a rule-based cause is a root cause only where it dominates (half the
# error or more): converter-built MobileNetV2 (per-channel and per-tensor) reads 1.3-1.5 dB for its SOFTMAX kept float
INHERIT_SHARE = 0.25  # "inherited from op X" needs X to carry at least this share
NEGLIGIBLE_SHARE = 0.05  # a rule-based cause whose blame is below this share and MIN_GAIN_DB is not the layer's own
DOMINANT_SHARE = 0.9  # an upstream op removing this share leaves an unmeasured layer at most the rest
CHEAP_SHARE = 0.9  # the diagnosed fix is kept when it gains this share of the best measured edit
HEALTHY_DB = 30.0  # a model whose output reads this SQNR (held out) or more is healthy: ...
HEALTHY_GAIN_DB = 3.0  # ... a cause there must halve the output error to be named (a 10-layer digits CNN at 33 dB read
# channel_imbalance at op 4 for +1.4 dB and 'inherited' on two layers)
RANGE_CAUSES = ("clipping", "resolution")
GRID_CAUSES = ("channel_imbalance", "mixed_ranges")  # the output's one 8-bit grid over parts of different ranges


@dataclass(frozen=True)
class Measured:
    op: int
    blame: Blame
    plan: SurgicalPlan  # the intervention


def candidates(result: ComparisonResult, qm: Model, has_float_op: Callable[[int], bool], first: Sequence[int] = (), skip: Sequence[int] = (),
               limit: int = MAX_CANDIDATES) -> list[int]:  # fmt: skip
    """B's ops to measure, in priority order (`first`: the ops reading a clipped integer model
    input; `skip`: ops measured otherwise, as an equalize chain), at most `limit`."""
    by_op: dict[int, LayerResult] = {}
    for lay in result.layers:
        by_op.setdefault(lay.op_index, lay)
    out: list[int] = []

    def add(op: int | None) -> None:
        if op is not None and op in by_op and op not in out and op not in skip and has_float_op(op):
            out.append(op)

    for op in first:
        add(op)

    for op, lay in by_op.items():  # the op holding the model input's range: the first quantizer
        if holds_input_range(qm, op) and lay.diagnosis is not None and lay.diagnosis.cause != "none":
            add(op)
    own = sorted((lay for lay in by_op.values() if has_own_cause(lay)), key=_own_db)
    for lay in own[:MAX_CANDIDATES]:
        add(lay.op_index)
    for lay in by_op.values():
        d = lay.diagnosis
        if d is not None and d.cause == "inherited":
            add(d.source_op)
    worst = sorted((lay for lay in by_op.values() if lay.isolated is not None and lay.op_type not in SUGGEST_SKIP_OPS
                    and math.isfinite(lay.isolated.sqnr_db)), key=lambda lay: lay.isolated.sqnr_db if lay.isolated is not None else math.inf)  # fmt: skip
    for lay in worst[:WORST_OWN]:
        add(lay.op_index)
    return out[:limit]


def _own_db(lay: LayerResult) -> float:
    own = lay.isolated.sqnr_db if lay.isolated is not None else lay.metrics.sqnr_db
    return lay.metrics.sqnr_db if math.isinf(own) else own


def intervention(qm: Model, lay: LayerResult, samples: SampleSettings, signature: str | None, clipped_input: bool = False) -> SurgicalPlan:
    """The edit that removes op `lay`'s own error (see the module docstring); `clipped_input`:
    the op reads an integer model input whose range clips, widened (`input_range`)."""
    op = lay.op_index
    if clipped_input:
        return SurgicalPlan((Edit("input_range", f"op:{op}", None, (op,)),), samples, signature=signature)
    d = lay.diagnosis
    ranged = holds_input_range(qm, op) or (d is not None and d.cause in RANGE_CAUSES)
    if ranged and applicable(qm, op, ("recalibrate",)):
        kind = "recalibrate"  # minmax on the calibration samples
    else:
        kind = "keep_float"
    if kind == "keep_float" and d is not None and d.fix is not None and d.fix.edit == "keep_float" and op in d.fix.ops:
        # the diagnosed keep float already names every op the float tensor needs (a concatenation of
        # mixed ranges: its inputs' requantizing readers too, whose shared scale is the damage)
        return SurgicalPlan((Edit("keep_float", f"op:{op}", None, tuple(sorted(d.fix.ops))),), samples, signature=signature)
    if kind == "keep_float" and d is not None and d.cause in GRID_CAUSES and d.source_op is None:
        # keep float quantizes back to the same grid: its readers compute in float too, so the tensor stays float
        readers = [c.index for c in qm.main.consumers().get(qm.main.ops[op].outputs[0], []) if c.type not in SUGGEST_SKIP_OPS]
        return SurgicalPlan((Edit("keep_float", f"op:{op}", None, tuple(sorted({op, *readers}))),), samples, signature=signature)
    return SurgicalPlan((Edit(kind, f"op:{op}", None, (op,)),), samples, signature=signature)


def _label(plan: SurgicalPlan) -> str:
    e = plan.edits[0]
    what = {"recalibrate": "re-calibrate", "keep_float": "keep float", "input_range": "widen the model input read by"}.get(
        e.kind, e.kind.replace("_", " "))
    return f"{what} op {', '.join(map(str, plan.edited_ops()))}"


def blame_of(before: float, after: float, how: str = "") -> Blame:
    """Share and gain from the output error energy before and after an intervention."""
    if before <= 0:
        return Blame(0.0, 0.0, how)
    share = 1.0 - after / before
    gain = math.inf if after <= 0 else 10 * math.log10(before / after)
    return Blame(share, gain, how)


class Measurer:
    """Edited models of B measured on the evaluation samples against A's values (computed once)."""

    def __init__(self, float_path: str, quant_path: str, options: CompareOptions, task: TaskState | None = None) -> None:
        self.float_path, self.quant_path, self.options = float_path, quant_path, options
        sig = options.signature
        self.prepared = PreparedPair.of(float_path, quant_path, sig, options.runtime)  # parsed, paired once
        self.fm, self.qm, self.pairing = self.prepared.fm, self.prepared.qm, self.prepared.pairing
        every = list(open_source(self.fm, self.qm, options.samples))[options.samples_from:]
        self.samples: list[Sample] = every[:BLAME_SAMPLES]
        self.split = split_samples(len(self.samples))
        self.subset = (f" (blame uses the first {len(self.samples)} of the {len(every)} samples)"
                       if len(every) > len(self.samples) else "")
        self.objective = Objective(self.fm, self.qm, self.pairing, list(self.qm.main.outputs),
                                   self.split.evaluation_of(self.samples), options.runtime, sig)  # fmt: skip
        self.base = self.objective.relative_error(self.prepared.b_bytes)
        evaluation = self.split.evaluation_of(self.samples)
        labels = [s.label for s in evaluation]
        ref = [r[0] for r in self.objective.ref] if self.objective.ref and self.objective.ref[0] else []
        classes = bool(ref) and ref[0].ndim >= 1 and ref[0].shape[-1] > 1 and ref[0].size == ref[0].shape[-1]
        self.labels = labels if classes and labels and all(v is not None for v in labels) else None
        self.float_top1 = [int(r.argmax()) for r in ref] if self.labels is not None else []
        self.base_top1 = list(self.objective.top1)
        self.task = as_task(task)
        self.cache: dict[PlanKey, tuple[float, list[int]] | None] = {}
        self.interface: dict[PlanKey, dict[str, Any] | None] = {}  # per plan: the model interface it changes (`input_range`)
        self.clips = input_clips(self.qm, self.samples)
        healthy = self.base > 0 and -10 * math.log10(self.base) >= HEALTHY_DB
        self.root_gain = HEALTHY_GAIN_DB if healthy else MIN_GAIN_DB  # what a root cause must gain
        chain = dfq_chain(self.fm, self.qm, self.pairing, relu6=True)  # per-tensor depthwise pairs over spread channels
        skip = chain.relu6 if chain is not None else ()
        self.notes: list[str] = refused(self.fm, self.qm, self.pairing, skip)  # ... and those equalize cannot take, and why
        # ... without the ReLU6 producers that saturate (DFQ's recipe does not hold there; said in the note)
        self.chain, left_out = usable_chain(chain, self.fm, self.qm, self.pairing, self.split.calibration(self.samples), options.runtime)
        self.notes += left_out

    def float_change(self, chain: Chain) -> str:
        """The float model's own change on the evaluation samples when the chain's ReLU6s become
        ReLU (relu6_equalize), in words ('' for a chain without ReLU6)."""
        if not chain.relu6:
            return ""
        try:
            ch = float_change(self.fm, self.qm, self.pairing, chain.relu6, self.split.evaluation_of(self.samples), self.options.runtime)
        except InspectorError as e:
            return f"the float model's change with ReLU not measured ({e.message})"
        text = "relu6_equalize " + ch.statement(f"the {len(ch.top1_a)} held-out samples")
        acc_a, acc_r = self.accuracy(list(ch.top1_a)), self.accuracy(list(ch.top1_relu))
        if acc_a is not None and acc_r is not None:
            text += f"; float accuracy {acc_a:.1f} -> {acc_r:.1f}% with ReLU"
        return text

    def accuracy(self, top1: list[int]) -> float | None:
        """Held-out top-1 accuracy (percent) of the decisions `top1`, when the samples are labelled."""
        if self.labels is None or len(top1) != len(self.labels):
            return None
        return 100.0 * sum(int(a == b) for a, b in zip(top1, self.labels, strict=True)) / len(self.labels)

    def accuracies(self, plan: SurgicalPlan) -> tuple[float, float, float] | None:
        """(float, B, B edited by `plan`) held-out accuracy, when labelled and measured."""
        self.error(plan)
        got = self.cache.get(self._key(plan))
        if got is None or self.labels is None:
            return None
        f, b, e = self.accuracy(self.float_top1), self.accuracy(self.base_top1), self.accuracy(got[1])
        return None if f is None or b is None or e is None else (f, b, e)

    @staticmethod
    def _key(plan: SurgicalPlan) -> PlanKey:
        return tuple((e.kind, e.ops, e.calibration) for e in plan.edits)

    def error(self, plan: SurgicalPlan) -> float | None:
        """The output error energy of B edited by `plan` (None: the edit does not apply)."""
        key = self._key(plan)
        if key not in self.cache:
            self.task.check()
            try:
                res = apply_plan(self.float_path, self.quant_path, plan, self.samples, runtime=self.options.runtime,
                                 prepared=self.prepared)
                self.cache[key] = (self.objective.relative_error(res.model_bytes), list(self.objective.top1))
                self.interface[key] = res.interface_change
            except InspectorError as e:
                self.notes.append(f"{_label(plan)}: not measured ({e.message})")
                self.cache[key] = None
        got = self.cache[key]
        return None if got is None else got[0]

    def prefetch(self, plans: Sequence[SurgicalPlan]) -> None:
        """A's float values of every tensor the re-calibrations among `plans` measure, in one run of A."""
        outs = [self.qm.main.ops[op].outputs[0] for p in plans for e in p.edits if e.kind == "recalibrate" for op in e.ops]
        if outs:
            try:
                self.prepared.float_values(outs, self.split.calibration(self.samples))
            except InputError:
                pass  # measured (and refused) one by one

    def blame(self, plan: SurgicalPlan) -> Blame | None:
        err = self.error(plan)
        return None if err is None else blame_of(self.base, err, _label(plan))


def measure_blame(float_path: str, quant_path: str, result: ComparisonResult, options: CompareOptions | None = None,
                  task: TaskState | None = None) -> ComparisonResult:  # fmt: skip
    """The comparison with measured blame: each candidate layer's `diagnosis.blame`, the verdicts
    rejudged by it, and `root_causes` (largest share first, each with its fix's measured gain)."""
    opts = options or CompareOptions()
    task = as_task(task)
    if not result.outputs or not result.layers:
        return replace(result, blame_note="blame not measured: no compared outputs or layers")
    if any(section_extent(p) is not None for p in (float_path, quant_path)):
        return replace(result, blame_note="blame not measured: the surgical edits read .tflite files, not a .litertlm section")
    try:
        m = Measurer(float_path, quant_path, opts, task)
    except InspectorError as e:
        return replace(result, blame_note=f"blame not measured: {e.message}")
    if m.base <= 0:
        return replace(result, blame_note="blame not measured: the model outputs carry no error")
    by_op: dict[int, LayerResult] = {}
    for lay in result.layers:
        by_op.setdefault(lay.op_index, lay)
    chain_blame = None
    if m.chain is not None:  # every equalizable depthwise pair over spread channels: one intervention, one fix
        task.report(0.0, f"blame: equalizing {len(m.chain.pairs)} depthwise pair(s)")
        chain_blame = m.blame(fix_plan(Fix(m.chain.edit, m.chain.ops), opts.samples, opts.signature))
    chain = m.chain if chain_blame is not None else None  # the chain measured as one intervention
    chain_ops = chain.ops if chain is not None else ()
    ops = candidates(result, m.qm, lambda op: m.pairing.float_op_for(op) is not None, list(m.clips), chain_ops,
                     MAX_CANDIDATES - (1 if chain_ops else 0))  # fmt: skip
    measured: dict[int, Measured] = {}
    plans = [intervention(m.qm, by_op[op], opts.samples, opts.signature, op in m.clips) for op in ops]
    m.prefetch(plans)
    for k, (op, plan) in enumerate(zip(ops, plans, strict=True)):
        task.report(k / max(len(ops), 1), f"blame: intervention {k + 1} of {len(ops)} (op {op})")
        b = m.blame(plan)
        if b is None and plan.edits[0].kind != "keep_float":  # a range that cannot be re-calibrated: keep float
            plan = SurgicalPlan((Edit("keep_float", f"op:{op}", None, (op,)),), opts.samples, signature=opts.signature)
            b = m.blame(plan)
        if b is not None:
            measured[op] = Measured(op, b, plan)
    blames = {op: x.blame for op, x in measured.items()}
    if chain is not None and chain_blame is not None:
        blames.update({p.producer: chain_blame for p in chain.pairs})
    layers = rejudged(m.qm, result.layers, blames, m.clips, chain, m.root_gain)
    roots = root_causes(m, layers, measured, task)
    if chain is not None and chain_blame is not None and chain_blame.share >= ROOT_SHARE and chain_blame.gain_db >= m.root_gain:
        p0 = chain.pairs[0].producer
        fix = Fix(chain.edit, chain.ops)
        acc = m.accuracies(fix_plan(fix, opts.samples, opts.signature))
        chain_note = "; ".join(n for n in (chain.evidence(), m.float_change(chain)) if n)
        chain_note += "" if chain_blame.gain_db >= 0 else "; the fix lowers the output SQNR: not worth applying"
        roots = sorted([*roots, RootCause(p0, m.qm.main.ops[p0].type, "channel_imbalance", chain_blame.share, chain_blame.gain_db,
                                          fix, chain_blame.gain_db, chain_blame.intervention, chain_note, acc)],
                       key=lambda r: -r.share)  # fmt: skip
    done = [x.blame.intervention for x in measured.values()] + ([chain_blame.intervention] if chain_blame is not None and chain_ops else [])
    note = [f"blame: {len(done)} intervention(s) ({', '.join(done)}); "
            f"output error measured {m.split.note}{m.subset}"]  # fmt: skip
    top = [r.share for r in roots[:3]]
    if roots and (sum(top) > 1.25 or (len(top) > 1 and sum(top) < 0.5)):
        note.append(f"the top shares sum to {100 * sum(top):.0f}% of the output error: the candidates interact "
                    "(their errors do not add independently), so the ranking is approximate")
    task.report(1.0, "blame measured")
    return replace(result, layers=layers, root_causes=tuple(roots), blame_note="; ".join(note + m.notes))


def rejudged(qm: Model, layers: Sequence[LayerResult], blame: dict[int, Blame],
             clips: dict[int, InputClip] | None = None, chain: Chain | None = None,
             root_gain: float = MIN_GAIN_DB) -> tuple[LayerResult, ...]:  # fmt: skip
    """The layers with their measured blame, and the verdicts it does not bear out changed; an op
    reading an integer model input whose clipping carries ROOT_SHARE reads `input_range`; the
    producers of an equalize chain that carries it read `channel_imbalance` (fix: the chain), their
    consumers inherit from them."""
    clips = clips or {}
    in_chain = {} if chain is None else {p.producer: p for p in chain.pairs}
    consumer_of_chain = {} if chain is None else {p.consumer: p for p in chain.pairs}
    sg = qm.main
    producers = sg.producers()

    def ancestors(op: int) -> set[int]:
        seen: set[int] = set()
        stack = [op]
        while stack:
            for i in sg.ops[stack.pop()].inputs:
                p = producers.get(i) if i >= 0 else None
                if p is not None and p.index not in seen:
                    seen.add(p.index)
                    stack.append(p.index)
        return seen

    first: dict[int, LayerResult] = {}
    for lay in layers:
        first.setdefault(lay.op_index, lay)

    def covering(op: int) -> int | None:
        """The measured ancestor of `op` with the largest share, when it covers INHERIT_SHARE."""
        up = [(blame[a].share, a) for a in ancestors(op) if a in blame and supports(blame[a])]
        return max(up)[1] if up else None

    healthy = root_gain > MIN_GAIN_DB

    def supports(b: Blame) -> bool:
        """Does `b` bear out an `inherited` verdict pointing at its op?"""
        return b.share >= INHERIT_SHARE and (not healthy or b.gain_db >= root_gain)

    def negligible(b: Blame) -> bool:
        return b.gain_db < root_gain if healthy else (b.share < NEGLIGIBLE_SHARE and b.gain_db < MIN_GAIN_DB)

    measured_own = [(_own_db(lay), blame[lay.op_index]) for lay in first.values() if has_own_cause(lay) and lay.op_index in blame]
    quiet = [db for db, b in measured_own if negligible(b)]
    floor = max(quiet) if quiet else math.inf  # an unmeasured own cause with a smaller own error is negligible too

    def pointing(op: int, src: int, why: str) -> Diagnosis:
        s = first[src]
        sd = s.diagnosis
        b = blame[src]
        cause = sd.cause if sd is not None and sd.cause not in ("none", "inherited") else "own error"
        return Diagnosis("inherited", f"{why}the error comes from op {src} ({s.op_type}, {cause}): removing its own error "
                                      f"removes {100 * b.share:.0f}% of the output error ({b.gain_db:+.1f} dB)",
                         None if sd is None else sd.fix, src)  # fmt: skip

    out = []
    for lay in layers:
        d = lay.diagnosis
        op = lay.op_index
        if d is None:
            out.append(lay)
            continue
        b = blame.get(op)
        rooted = b is not None and b.share >= ROOT_SHARE and b.gain_db >= root_gain
        if op in clips and rooted:
            d = Diagnosis("input_range", clips[op].evidence(), Fix("input_range", (op,)))
        elif op in in_chain and chain is not None and rooted:
            d = Diagnosis("channel_imbalance", in_chain[op].evidence(), Fix(chain.edit, chain.ops))
        elif op in consumer_of_chain and chain is not None and (pb := blame.get(consumer_of_chain[op].producer)) is not None \
                and pb.share >= ROOT_SHARE and pb.gain_db >= root_gain:
            producer = consumer_of_chain[op].producer
            d = Diagnosis("inherited", f"the error comes from op {producer} (DEPTHWISE_CONV_2D, channel imbalance): equalizing the "
                                       f"chain removes {100 * pb.share:.0f}% of the output error ({pb.gain_db:+.1f} dB)",
                          Fix(chain.edit, chain.ops), producer)  # fmt: skip
        elif d.cause == "inherited" and d.source_op is not None and not (d.source_op in blame and supports(blame[d.source_op])):
            src = covering(op)
            was = (f"op {d.source_op} measured {100 * blame[d.source_op].share:.0f}% of the output error"
                   if d.source_op in blame else f"op {d.source_op} not measured")
            if src is not None:
                d = pointing(op, src, f"{was}; ")
            else:
                d = Diagnosis("none", f"{d.evidence.split(':')[0]}: accumulated error from upstream, but no measured op "
                                      f"carries {100 * INHERIT_SHARE:.0f}% of the output error ({was})")  # fmt: skip
        elif has_own_cause(lay) and b is None and d.source_op is None and (src := covering(op)) is not None and blame[src].share >= DOMINANT_SHARE:
            d = pointing(op, src, f"reads as {d.cause.replace('_', ' ')} ({d.evidence}), not measured, but ")
        elif has_own_cause(lay) and b is None and d.source_op is None and math.isfinite(floor) and _own_db(lay) >= floor:
            d = Diagnosis("none", f"reads as {d.cause.replace('_', ' ')} ({d.evidence}), not measured, but its own error is "
                                  f"smaller than that of layers whose measured blame is negligible: not a cause worth an edit")  # fmt: skip
        elif has_own_cause(lay) and b is not None and negligible(b):
            src = covering(op)
            why = (f"reads as {d.cause.replace('_', ' ')} ({d.evidence}), but {b.intervention} gains only "
                   f"{b.gain_db:+.2f} dB ({100 * b.share:.1f}% of the output error); ")  # fmt: skip
            d = pointing(op, src, why) if src is not None else Diagnosis("none", why + "not a cause worth an edit")
        out.append(replace(lay, diagnosis=replace(d, blame=b)))
    return tuple(out)


def root_causes(m: Measurer, layers: Sequence[LayerResult], measured: dict[int, Measured], task: TaskState) -> list[RootCause]:
    """The measured candidates that carry the output error, largest share first, each with its fix
    measured on the held-out samples."""
    first: dict[int, LayerResult] = {}
    for lay in layers:
        first.setdefault(lay.op_index, lay)
    rows = []
    # one root cause per intervention: ops measured by the same edit (a concatenation and its
    # inputs' readers) are one cause, named at the op the others point at
    owner: dict[PlanKey, int] = {}
    for op in sorted(measured, key=lambda o: (getattr(first[o].diagnosis, 'source_op', None) is not None, o)):
        owner.setdefault(m._key(measured[op].plan), op)
    for op, x in measured.items():
        b = x.blame
        if not (b.share >= ROOT_SHARE and b.gain_db >= m.root_gain) or owner[m._key(x.plan)] != op:
            continue
        lay = first[op]
        d = lay.diagnosis
        cause = d.cause if d is not None and d.cause not in ("none", "inherited") else "own_error"
        if cause == "own_error" and b.gain_db < OWN_ERROR_GAIN_DB:
            continue
        if x.plan.edits[0].kind == "input_range":  # (the op holding a QUANTIZE'd input's range reads input_range already)
            cause = "input_range"
        task.report(0.95, f"blame: measuring the fix of op {op}")
        fix, gain, note = best_fix(m, op, d.fix if d is not None and has_own_cause(lay) else None, x)
        fplan = None if fix is None else fix_plan(fix, m.options.samples, m.options.signature)
        acc = None if fplan is None else m.accuracies(fplan)
        interface = None if fplan is None else m.interface.get(m._key(fplan))
        if op in m.clips:
            note = "; ".join(n for n in (m.clips[op].evidence(), note) if n)
        if interface is not None:
            note = "; ".join(n for n in (note, interface["statement"]) if n)
        rows.append(RootCause(op, lay.op_type, cause, b.share, b.gain_db, fix, gain, b.intervention, note, acc, interface))
    return sorted(rows, key=lambda r: -r.share)


def best_fix(m: Measurer, op: int, diagnosed: Fix | None, x: Measured) -> tuple[Fix | None, float | None, str]:
    """(fix, its measured gain, note): the diagnosed fix, or the intervention (an edit too) when it
    gains clearly more or the diagnosed one gains < MIN_GAIN_DB; none when no edit gains MIN_GAIN_DB
    (said in the note, with the figures)."""
    tries: list[tuple[Fix, float]] = []
    if diagnosed is not None and all(plan_kind(diagnosed.edit) in applicable(m.qm, k, (plan_kind(diagnosed.edit),))
                                     for k in diagnosed.ops[:1]):  # fmt: skip
        err = m.error(fix_plan(diagnosed, m.options.samples, m.options.signature))
        if err is not None:
            tries.append((diagnosed, blame_of(m.base, err).gain_db))
    e = x.plan.edits[0]
    own = Fix(e.kind, e.ops)
    if own != diagnosed:
        tries.append((own, x.blame.gain_db))
    if not tries:
        return None, None, ""
    best = max(tries, key=lambda t: t[1])
    fix, gain = tries[0] if tries[0][1] >= CHEAP_SHARE * best[1] or tries[0][1] >= best[1] - MIN_GAIN_DB else best
    if gain < MIN_GAIN_DB <= best[1]:
        fix, gain = best
    if gain < MIN_GAIN_DB:  # no edit worth proposing: none is
        what = ", ".join(f"{f.edit} {g:+.2f} dB" for f, g in tries)
        return None, None, f"no edit measured gains {MIN_GAIN_DB} dB ({what}): no fix proposed"
    note = ""
    if fix != diagnosed and diagnosed is not None:
        note = f"{diagnosed.edit} measured {tries[0][1]:+.2f} dB; {fix.edit} gains more"
    return fix, gain, note


def compare_and_blame(float_path: str, quant_path: str, options: CompareOptions | None = None, blame: bool = True,
                      task: TaskState | None = None, **kwargs: Any) -> ComparisonResult:  # fmt: skip
    """`compare_models`, then (unless `blame` is False) `measure_blame`: the job the command line
    and the GUI run in the worker process."""
    from inspector.core.compare.comparison import compare_models

    task = as_task(task)
    result = compare_models(float_path, quant_path, options, task=task.span(0.0, 0.75 if blame else 1.0, ""), **kwargs)
    if not blame:
        return result
    return measure_blame(float_path, quant_path, result, options, task.span(0.75, 1.0, ""))


def compare_blame_in_worker(float_path: str | Path, quant_path: str | Path, options: CompareOptions | None = None, *,
                            blame: bool = True, task: TaskState | None = None, timeout: float | None = None,
                            worker: WorkerProcess | None = None, pair_check: PairCheck | None = None,
                            check: bool = True) -> ComparisonResult:  # fmt: skip
    """`compare_and_blame` in the worker process (like `compare.in_worker.compare_in_worker`)."""
    from inspector.core.runtime.worker import run_isolated

    return run_isolated(
        compare_and_blame, str(float_path), str(quant_path), options,
        kwargs={"blame": blame, "pair_check": pair_check, "check": check}, task=task, timeout=timeout,
        step="comparing (running both models over the samples), then measuring blame",
        models=(str(float_path), str(quant_path)), worker=worker,
    )  # fmt: skip
