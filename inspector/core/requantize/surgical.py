"""Apply a surgical plan to the user's quantized model B, validate it in LiteRT, return the bytes.

Order (fixed, so a plan reproduces the same bytes): activation re-calibration, cross-layer
equalization (`equalize.py`), per-channel / MSE weights, bias correction (measured on the model with the earlier edits), then the edits
that replace ops (keep float, a16w8). The data-dependent edits measure on the calibration part
of the plan's samples (`samples.holdout.split_samples`: the first 2/3 when at least 8 remain
held out for measuring the gain, else all of them, in-sample; `SurgicalResult.split` says which). The
edited model is invoked with the reference kernels and with XNNPACK before it is returned;
a refusal raises RuntimeFailure naming the op. Runs in the worker process (`jobs.surgical_job`).
"""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from inspector.core.codec.json_record import JsonRecord, json_field
from inspector.core.compare.pairing import Pairing, check_correspondence, pair_models
from inspector.core.errors import InputError, RuntimeFailure
from inspector.core.progress import TaskState, as_task
from inspector.core.requantize import measure
from inspector.core.requantize.a16w8 import to_a16w8
from inspector.core.requantize.bias_correction import correct_biases, note_corrections
from inspector.core.requantize.check import explain
from inspector.core.requantize.equalize import equalize
from inspector.core.requantize.keep_float import keep_float
from inspector.core.requantize.objective import TempModel
from inspector.core.requantize.recalibrate import interface_statement, recalibrate, widen_input
from inspector.core.requantize.relu6 import (
    FloatChange,
    float_ops,
    measure_change,
    relu6_producers,
    relu_float_model,
    set_relu,
)
from inspector.core.requantize.surgery import Surgery
from inspector.core.requantize.surgical_plan import SurgicalPlan, resolve, sha256
from inspector.core.requantize.weight_requant import requantize_weights
from inspector.core.samples.holdout import SampleSplit, split_samples
from inspector.core.samples.sources import open_source
from inspector.core.samples.spec import Sample, feed, signature_feed
from inspector.core.tflite import edit as fe
from inspector.core.tflite.model import Model, load_model
from inspector.core.tflite.signatures import select_signature

if TYPE_CHECKING:
    from inspector.core.requantize.held_out import HeldOutGain

# Bias correction measures every selected op at once; a second pass removes what remains once
# the corrections upstream have changed the inputs the op sees.
BIAS_PASSES = 2


@dataclass
class SurgicalResult(JsonRecord):
    float_path: str = json_field(key="float_model")
    quant_path: str = json_field(key="quant_model")
    plan: SurgicalPlan = json_field()  # resolved: every edit carries its op indices
    model_bytes: bytes = json_field(skip=True)  # written to --out, its size here
    edited_ops: tuple[int, ...] = json_field()  # B op indices that changed
    notes: list[str] = field(default_factory=list)
    # calibration vs held-out samples, when an edit measured samples
    split: SampleSplit | None = json_field(default=None, key="calibration")
    gain: HeldOutGain | None = None  # the output SQNR gain on the evaluation samples, when measured
    equalized: list[dict[str, Any]] = field(default_factory=list)  # per equalized pair: ops, s, ranges, scales
    interface_changes: list[dict[str, Any]] = field(default_factory=list)  # per widened model input (`input_range`)
    # relu6.FloatChange per relu6_equalize: the float function changed (the first written, "float_change")
    float_changes: list[FloatChange] = json_field(default_factory=list, skip=True)

    JSON_EXTRA = {"route": lambda r: "surgical", "size_bytes": lambda r: r.size_bytes,
                  "interface_change": lambda r: r.interface_change,
                  "float_change": lambda r: r.float_changes[0] if r.float_changes else None}  # fmt: skip
    JSON_KEYS = ("route", "float_model", "quant_model", "edited_ops", "size_bytes", "plan", "notes", "calibration", "gain",
                 "equalized", "interface_change", "float_change")  # fmt: skip

    @property
    def interface_change(self) -> dict[str, Any] | None:
        """The model inputs whose scale/zero point changed, and what the caller must do; None: same interface."""
        if not self.interface_changes:
            return None
        return {"inputs": self.interface_changes, "statement": "; ".join(interface_statement(c) for c in self.interface_changes)}

    @property
    def size_bytes(self) -> int:
        return len(self.model_bytes)



@dataclass
class PreparedPair:
    """What every edit of one pair shares, prepared once: both models parsed and paired, their
    checksums, A's object (read only: the edits deep-copy what they take from it), B's bytes, and
    A's float values of B's tensors on the calibration samples (memoized per tensor). Several plans
    on one pair (blame's interventions, Suggest's candidates) then parse, pair and run A once."""

    float_path: str
    quant_path: str
    signature: str | None
    runtime: str
    fm: Model
    qm: Model
    pairing: Pairing
    fsha: str
    qsha: str
    am: Any
    b_bytes: bytes
    observed: dict[tuple[int, tuple[int, ...]], measure.Observed] = field(default_factory=dict)
    _held: list[list[Sample]] = field(default_factory=list)  # the sample lists keyed by id stay alive
    _b_template: bytes | None = None  # B's object, pickled: a fresh copy per plan costs a quarter of a parse

    def fresh_b(self) -> Any:
        """A new object of B to edit in place."""
        if self._b_template is None:
            self._b_template = pickle.dumps(fe.read(self.b_bytes), protocol=pickle.HIGHEST_PROTOCOL)
        return pickle.loads(self._b_template)

    @classmethod
    def of(cls, float_path: str, quant_path: str, signature: str | None = None, runtime: str = "optimized") -> PreparedPair:
        fm = select_signature(load_model(float_path), signature)
        qm = select_signature(load_model(quant_path), signature)
        check_correspondence(fm, qm)
        b = Path(quant_path).read_bytes()
        return cls(str(float_path), str(quant_path), signature, runtime, fm, qm, pair_models(fm, qm),
                   sha256(float_path), sha256(quant_path), fe.read(Path(float_path).read_bytes()), b)  # fmt: skip

    def float_values(self, tensors: Sequence[int], calibration: Sequence[Sample]) -> dict[int, measure.Observed]:
        """`measure.float_values` of `tensors`, the missing ones measured in one run of A."""
        key = tuple(id(s) for s in calibration)
        missing = [t for t in dict.fromkeys(tensors) if (t, key) not in self.observed]
        if missing:
            self._held.append(list(calibration))
            got = measure.float_values(self.fm, self.qm, self.pairing, missing, calibration, self.runtime)
            self.observed.update({(t, key): v for t, v in got.items()})
        return {t: self.observed[(t, key)] for t in tensors}


def plan_samples(plan: SurgicalPlan, fm: Model, qm: Model, measuring: bool = True) -> list[Sample]:
    """The plan's samples; only the first when nothing is measured (validation needs one)."""
    source = open_source(fm, qm, plan.samples)
    if measuring:
        return list(source)
    return [next(iter(source))] if source.count else []


def apply_plan(
    float_path: str,
    quant_path: str,
    plan: SurgicalPlan,
    samples: Sequence[Sample] | None = None,
    task: TaskState | None = None,
    runtime: str = "optimized",
    prepared: PreparedPair | None = None,
) -> SurgicalResult:
    """Edit B (`quant_path`) by `plan` with A's (`float_path`) float weights; validated bytes.
    `prepared`: the pair already parsed (`PreparedPair.of` with the plan's signature and `runtime`)."""
    task = as_task(task)
    if prepared is not None and (prepared.signature != plan.signature or prepared.runtime != runtime):
        prepared = None
    if prepared is None:
        prepared = PreparedPair.of(float_path, quant_path, plan.signature, runtime)
    # The op indices address the plan's signature's subgraph (subgraph 0 without one).
    fm, qm, pairing = prepared.fm, prepared.qm, prepared.pairing
    fsha, qsha = prepared.fsha, prepared.qsha
    if plan.quant_sha256 not in (None, qsha) or plan.float_sha256 not in (None, fsha):
        raise InputError("the plan was made for a different float/quantized pair (checksums differ)", quant_path)
    plan = resolve(plan, qm)
    if not plan.edited_ops():
        raise InputError("the plan selects no op", quant_path)
    plan = dataclasses.replace(plan, float_sha256=fsha, quant_sha256=qsha)
    if samples is None:
        samples = plan_samples(plan, fm, qm, measuring=plan.needs_samples())
    if not samples:
        raise InputError("no samples to measure and validate with", plan.samples.source)
    split = split_samples(len(samples)) if plan.needs_samples() else None
    calibration = split.calibration(samples) if split is not None else samples
    s = Surgery(prepared.fresh_b(), prepared.am, fm, qm, pairing)

    def step(fraction: float, text: str) -> None:
        task.check()
        task.report(fraction, text)

    if plan.ops_for("input_range"):
        step(0.03, "widening the model input's range")
        s.interface_changes += widen_input(s, plan.ops_for("input_range"), calibration)
    for e in plan.edits:
        if e.kind == "recalibrate" and e.ops:
            step(0.05, "measuring float activations")
            outs = [qm.main.ops[i].outputs[0] for i in e.ops]
            observed = prepared.float_values(outs, calibration)
            recalibrate(s, e.ops, e.calibration or "minmax", observed)
    if plan.equalize_pairs():
        step(0.2, "equalizing: measuring the float channel ranges")
        relu6 = relu6_producers(qm, plan.relu6_producers())
        if relu6:  # DFQ: ReLU6 -> ReLU where the float model rarely reaches 6, measured; then equalize
            with relu_float_model(fm, float_ops(qm, pairing, relu6)) as relu:
                change = measure_change(fm, relu, qm, pairing, relu6, calibration, runtime)
                if (why := change.refusal()) is not None:
                    raise InputError(f"relu6_equalize refused: {why}", quant_path)
                set_relu(s, relu6)
                s.notes.append(f"relu6_equalize {change.statement()}")
                s.float_changes.append(change)
                equalize(s, plan.equalize_pairs(), calibration, runtime, relu, relu6)
        else:
            equalize(s, plan.equalize_pairs(), calibration, runtime)
    for kind, rounding in (("per_channel", "maxabs"), ("weight_mse", "mse")):
        if plan.ops_for(kind):
            step(0.3, "requantizing weights")
            requantize_weights(s, plan.ops_for(kind), rounding)
    if plan.ops_for("bias_correct"):
        corrected: set[int] = set()
        for k in range(BIAS_PASSES):
            step(0.4 + 0.1 * k, f"measuring isolated errors for bias correction (pass {k + 1} of {BIAS_PASSES})")
            with TempModel(fe.write(s.bm)) as current:
                cm = select_signature(load_model(current), plan.signature)
                mean_err = measure.isolated_mean_error(fm, cm, pair_models(fm, cm), plan.ops_for("bias_correct"), calibration, runtime, significant=True)
            corrected |= correct_biases(s, mean_err)
        note_corrections(s, plan.ops_for("bias_correct"), corrected)
    if plan.ops_for("a16w8"):
        step(0.6, "measuring ranges for 16-bit activations")
        to_a16w8(s, plan.ops_for("a16w8"), calibration, runtime)
    if plan.ops_for("keep_float"):
        keep_float(s, plan.ops_for("keep_float"))
    s.rebuild_ops()
    data = fe.write(s.bm)
    step(0.8, "checking the edited model in LiteRT (reference kernels and XNNPACK)")
    validate(data, qm, samples[0], quant_path, plan.signature, _edited_model(data, plan.signature) if s.interface_changes else None)
    task.report(1.0, "done")
    if split is not None:
        s.notes.append(f"calibration: {split.note}")
    return SurgicalResult(str(float_path), str(quant_path), plan, data, plan.edited_ops(), s.notes, split,
                          equalized=s.equalized, interface_changes=s.interface_changes, float_changes=s.float_changes)  # fmt: skip


def _edited_model(data: bytes, signature: str | None) -> Model:
    with TempModel(data) as path:
        return select_signature(load_model(path), signature)


def validate(data: bytes, qm: Model, sample: Sample, path: str, signature: str | None = None, edited: Model | None = None) -> None:
    """Load and invoke once with the reference kernels, then with XNNPACK; RuntimeFailure if
    refused. With `signature`, that signature runs (by its input names) instead of subgraph 0."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    if edited is None:
        edited = qm
    values = feed(edited, sample)  # the graph inputs keep their indices and types (a widened input: its new scale)
    named = signature_feed(edited, sample, signature)
    for label, resolver in (
        ("reference kernels", OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES),
        ("default runtime (XNNPACK)", OpResolverType.AUTO),
    ):
        try:
            it = Interpreter(model_content=data, experimental_op_resolver_type=resolver, num_threads=1)
            if named is not None:
                outputs = it.get_signature_runner(signature)(**named)
            else:
                it.allocate_tensors()
                by_name = {d["name"]: d["index"] for d in it.get_input_details()}
                for t, v in values.items():
                    it.set_tensor(by_name[qm.main.tensors[t].name], v)
                it.invoke()
                outputs = {d["name"]: it.get_tensor(d["index"]) for d in it.get_output_details()}
            for name, out in outputs.items():
                if np.issubdtype(out.dtype, np.floating) and not np.all(np.isfinite(out)):
                    raise RuntimeError(f"output '{name}' is not finite")
        except Exception as e:
            problem = explain(str(e), data, label, qm.main.index)
            raise RuntimeFailure(f"the edited model does not run: {problem.message}", path) from None
