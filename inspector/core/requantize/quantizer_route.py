"""Requantize a float model with a per-layer plan (litert-quantizer), checked before it is shown.

Flow: prepare a working copy (model_prep) -> resolve the plan to ops and a recipe (plan) -> run
the float copy once (a model the runtime cannot run cannot be calibrated; one whose custom op
only XNNPACK provides is calibrated and checked with XNNPACK alone) -> calibrate, then put B's
ranges in for unchanged tensors when seeded from the user's quantized model (seeded_ranges) and
widen ranges too narrow for the kernels (clamp_ranges) -> quantize -> repair what the quantizer
emits (fixes) -> run the result under the reference kernels and XNNPACK (check); an op the
reference kernels still refuse is kept float and the model quantized again -> verify each
selected op got its treatment. Every change and finding is a note in the result. The input file
is only read.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector.core.errors import Cancelled, InputError, InspectorError, RuntimeFailure
from inspector.core.progress import TaskState, as_task
from inspector.core.requantize.calibration_feeds import Watched, to_feeds
from inspector.core.requantize.check import (
    BOTH_RUNTIMES,
    REFERENCE,
    XNNPACK,
    OpCheck,
    RuntimeProblem,
    check_selections,
    delegate_only_custom_ops,
    observed_treatments,
    run_check,
)
from inspector.core.requantize.clamp_ranges import WidenedRange, notes_for, widen_clamped_ranges
from inspector.core.requantize.fixes import (
    asymmetric_weight_ops,
    io_positions,
    normalize_op_codes,
    remap_metadata_buffer,
    repoint_signatures,
    symmetrize_weights,
)
from inspector.core.requantize.model_prep import PreparedModel, op_scope, prepare
from inspector.core.requantize.plan import (
    OpRef,
    Plan,
    Selection,
    build_recipe,
    rule,
    scope_regex,
    select,
)
from inspector.core.requantize.seeded_ranges import Seeds, apply_seeds, seeds_from
from inspector.core.samples.settings import SampleSettings
from inspector.core.samples.sources import random_source
from inspector.core.samples.spec import InputSpec
from inspector.core.tflite import edit as fe
from inspector.core.tflite.dtypes import QUANTIZED_STORAGE_DTYPES
from inspector.core.tflite.litertlm import read_model_bytes
from inspector.core.tflite.model import load_model
from inspector.core.tflite.signatures import select_signature
from inspector.core.writing import atomic_write_bytes, atomic_write_text, to_json_text

if TYPE_CHECKING:
    import numpy as np


class QuantizerFailure(InspectorError):
    """litert-quantizer could not quantize the model with this plan."""


@dataclass
class RequantizeResult:
    model_bytes: bytes
    recipe: list[dict[str, Any]]
    notes: list[str]
    plan: Plan | None
    float_path: str
    checks: list[OpCheck] = field(default_factory=list)
    treatments: dict[int, str] = field(default_factory=dict)  # main-subgraph op -> observed
    num_samples: int = 0
    seed: int | None = None
    seeded_from: str | None = None  # model B whose ranges seeded the calibration
    seeded_tensors: int = 0

    @property
    def size_bytes(self) -> int:
        return len(self.model_bytes)

    def to_json(self) -> dict[str, Any]:
        """Hand-written (not `codec.json_record`): the calibration fields grouped under "calibration"."""
        return {
            "float_model": self.float_path,
            "size_bytes": self.size_bytes,
            "plan": self.plan.to_json() if self.plan else None,
            "recipe": self.recipe,
            "notes": self.notes,
            "checks": [vars(c) for c in self.checks],
            "treatments": {str(k): v for k, v in self.treatments.items()},
            "calibration": {
                "samples": self.num_samples,
                "seed": self.seed,
                "seeded_from": self.seeded_from,
                "seeded_tensors": self.seeded_tensors,
            },
        }


def requantize(
    float_path: str | os.PathLike[str],
    plan: Plan | None = None,
    samples: Any = None,
    *,
    recipe: list[dict[str, Any]] | None = None,
    sample_settings: SampleSettings | None = None,
    task: TaskState | None = None,
    calibrate_from: str | os.PathLike[str] | None = None,
    signature: str | None = None,
) -> RequantizeResult:
    """Quantize `float_path` by `plan` (or a saved quantizer `recipe`) on calibration `samples`
    (random ones chosen by `sample_settings` when None).

    With `calibrate_from` (the user's quantized model B), every activation tensor paired with B
    takes B's range instead of the samples' (seeded_ranges), except the outputs of the ops the
    plan selects: a plan with no changes reproduces B's activation scales and zero points.

    `signature`: the signature the samples feed (calibrated); None: the model's first one.
    """
    path = str(float_path)
    settings = sample_settings or SampleSettings()
    task = as_task(task)
    report = task.report
    original = load_model(path)  # validates the file; ModelFormatError names it
    sig_model = select_signature(original, signature)  # an unknown key: InputError naming the keys
    if any(
        t.is_quantized and t.dtype in QUANTIZED_STORAGE_DTYPES
        for sg in original.subgraphs
        for t in sg.tensors
    ):
        raise InputError(
            "this model is already quantized; requantize starts from the float model", path
        )
    seeds = seeds_from(original, load_model(str(calibrate_from))) if calibrate_from else None
    data = bytes(read_model_bytes(path))
    report(0.02, "preparing a working copy")
    prep = prepare(data)
    notes = list(prep.notes)
    ops = _op_refs(original, prep)
    selections: dict[tuple[int, int], Selection] = {}
    if recipe is None:
        plan = plan or Plan()
        selections = select(plan, ops, path, subgraph=sig_model.main.index)  # op:INDEX in the signature's subgraph
        recipe = build_recipe(plan, selections, prep.keep_float_scopes)
        notes += _algorithm_notes(selections)
    else:
        recipe = validate_recipe(recipe, ops, notes, path)
        plan = None

    prep_model = fe.read(prep.data)
    sig_index = _signature_index(prep_model, signature)
    specs = _input_specs(prep_model, sig_index)
    feeds = (
        _random_feeds(sig_model, specs, settings)
        if samples is None
        else to_feeds(samples, specs)
    )
    sig_key = (prep_model.signatureDefs[sig_index].signatureKey or b"").decode()

    runtimes: tuple[str, ...] = BOTH_RUNTIMES
    problem = run_check(prep.data, feeds[0], sig_key)
    delegate_ops = (
        delegate_only_custom_ops(prep.data, feeds[0], sig_key, problem) if problem else None
    )
    if delegate_ops:
        runtimes, problem = (XNNPACK,), None
        notes.append(
            f"the model uses custom op(s) {', '.join(delegate_ops)} that only the XNNPACK delegate "
            "provides: calibrated and validated with XNNPACK (the reference kernels cannot run "
            "this model); the op(s) stay float"
        )
    if problem is not None:
        raise RuntimeFailure(f"the float model cannot be calibrated here: {problem.message}", path)
    task.check()

    all_feeds = {sig_key: feeds}
    # litert-quantizer needs ranges for every signature: the others get random samples.
    for k, sd in enumerate(prep_model.signatureDefs or []):
        other = (sd.signatureKey or b"").decode()
        if k == sig_index or other in all_feeds:
            continue
        other_specs = _input_specs(prep_model, k)
        try:
            view = original.for_signature(other)
        except KeyError:
            continue
        all_feeds[other] = _random_feeds(view, other_specs, settings)
        notes.append(f"signature '{other}' calibrated on {settings.random_count} random samples (seed {settings.seed})")
    seeding = _Seeding(seeds, _changed_outputs(selections)) if seeds is not None else None
    stats = _Stats(seeding)
    kept_float: list[str] = []
    for attempt in range(MAX_KEPT_FLOAT + 1):
        quantized = _quantize(prep, recipe, all_feeds, path, task, stats)
        report(0.85, "checking the produced model")
        fix_notes: list[str] = []
        model_bytes, problem = _repair_and_check(
            quantized, prep_model, feeds[0], sig_key, fix_notes, runtimes
        )
        if problem is None:
            break
        scope = _refused_scope(model_bytes, problem, prep_model)
        if scope is None or attempt == MAX_KEPT_FLOAT:
            raise RuntimeFailure(f"the quantized model does not run: {problem.message}", path)
        # The last resort for a quantized op the runtime refuses: that op alone stays float.
        recipe = [*recipe, rule(scope_regex(scope), "keep_float", True, "min_max")]
        kept_float.append(
            f"kept float: '{scope.rstrip(';')}', because {problem.message} (no repair known)"
        )
    resampled = stats.calibrated and (seeding is None or seeding.recalibrated_any)
    if seeding is not None:
        notes += seeding.notes(stats.calibrated)
    if resampled and samples is None:
        notes.append(
            f"calibrated on {len(feeds)} random samples (seed {settings.seed}); give real samples for a representative model"
        )
    notes += notes_for(stats.widened) + fix_notes + kept_float

    checks = check_selections(model_bytes, selections, _new_names(prep))
    for c in checks:
        if not c.ok:
            notes.append(
                f"{c.op}: asked for {c.requested}, got {c.observed} (the quantizer does not apply it to this op)"
            )
    treatments = _treatments(model_bytes, ops, prep)
    if not any(
        t.startswith(("int8", "a16w8", "dynamic", "weight_only")) for t in treatments.values()
    ):
        notes.append("no op of the main subgraph was quantized: the result computes in float")
    report(1.0, "done")
    return RequantizeResult(
        model_bytes=model_bytes,
        recipe=recipe,
        notes=notes,
        plan=plan,
        float_path=path,
        checks=checks,
        treatments=treatments,
        num_samples=len(feeds),
        seed=settings.seed if samples is None else None,
        seeded_from=seeds.quant_path if seeds is not None else None,
        seeded_tensors=len(seeding.seeded) if seeding is not None else 0,
    )


def _changed_outputs(selections: dict[tuple[int, int], Selection]) -> set[str]:
    """Tensors the plan re-calibrates on the samples: the outputs of the ops it selects, except
    ops kept float: their output stays float and the consumers quantize it back to B's range,
    as the surgical keep-float edit does (re-measuring it on other samples only moves what the
    consumers see)."""
    return {
        n
        for key, sel in selections.items()
        if key[0] == 0 and sel.treatment != "keep_float"
        for n in sel.op.output_names
    }


@dataclass
class _Seeding:
    """B's ranges to put into the quantizer's statistics, and what happened when they were."""

    seeds: Seeds
    recalibrate: set[str]
    seeded: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # calibrated tensors with no B range

    def apply(self, qsvs: dict[str, Any]) -> None:
        # Tensor names of the main subgraph are unchanged in the working copy (only later
        # duplicates are renamed), so A's names are the quantizer's keys.
        self.seeded, self.kept = apply_seeds(qsvs, self.seeds, self.recalibrate, {})
        known = set(self.seeds.ranges)
        self.missing = [n for n in self.seeds.unpaired if n in qsvs and n not in known]

    @property
    def recalibrated_any(self) -> bool:
        return bool(self.kept or self.missing)

    def notes(self, calibrated: bool) -> list[str]:
        name = Path(self.seeds.quant_path).name
        if not calibrated:
            return [f"--calibrate-from {name}: this plan needs no calibration; B's ranges were not used"]
        out = [
            f"calibration seeded from {name}: {len(self.seeded)} activation tensor(s) keep B's "
            f"scale and zero point; {len(self.kept)} re-calibrated on the samples (outputs of the "
            "ops the plan changes; a kept-float op's output keeps B's range)"
        ]
        if self.missing:
            shown = ", ".join(self.missing[:5]) + (" ..." if len(self.missing) > 5 else "")
            out.append(
                f"{len(self.missing)} activation tensor(s) have no quantized counterpart in {name} "
                f"and were calibrated on the samples: {shown}"
            )
        return out


def _algorithm_notes(selections: dict[tuple[int, int], Selection]) -> list[str]:
    """The quantizer silently falls back to the base rule where an algorithm has no kernel."""
    from litert_quantizer import algorithm_manager

    from inspector.core.requantize.plan import ALGORITHMS

    out = []
    for sel in selections.values():
        key = ALGORITHMS[sel.algorithm]
        if (
            sel.treatment != "keep_float"
            and sel.algorithm != "min_max"
            and not algorithm_manager.is_op_registered(key, sel.op.type)
        ):
            out.append(
                f"{sel.op.label}: the quantizer has no '{sel.algorithm}' rule for {sel.op.type}; the base rule applies"
            )
    return out


def _random_feeds(original: Any, specs: list[InputSpec], settings: SampleSettings) -> list[dict[str, np.ndarray]]:
    """The app's random samples, the same the comparison uses."""
    return to_feeds(list(random_source(original, None, settings.random_count, settings.seed)), specs)


def _op_refs(original: Any, prep: PreparedModel) -> list[OpRef]:
    """Ops of the user's model, each with its quantizer scope in the prepared copy."""
    model = fe.read(prep.data) if prep.rewritten else None
    scopes: dict[tuple[int, tuple[str, ...]], str] = {}
    if model is not None:
        for si, sg in enumerate(model.subgraphs):
            for op in sg.operators:
                b_outs = [fe.tensor_name(sg.tensors[i]) for i in op.outputs if i >= 0]
                b_ins = [fe.tensor_name(sg.tensors[i]) for i in op.inputs if i >= 0]
                key = tuple(prep.renamed.get(n, n) for n in b_outs)
                scopes[(si, key)] = op_scope(b_outs, b_ins)
    refs = []
    for sg in original.subgraphs:
        for op in sg.ops:
            outs = tuple(sg.tensors[i].name for i in op.outputs if i >= 0)
            ins = tuple(sg.tensors[i].name for i in op.inputs if i >= 0)
            scope = (
                scopes.get((sg.index, outs), "")
                if model is not None
                else op_scope(list(outs), list(ins))
            )
            refs.append(OpRef(sg.index, op.index, op.type, outs, ins, scope))
    return refs


def _signature_index(model: Any, key: str | None) -> int:
    """Position of signature `key` in the prepared model's table (0 when None)."""
    if key is None:
        return 0
    keys = [(s.signatureKey or b"").decode() for s in model.signatureDefs or []]
    return keys.index(key) if key in keys else 0


def _input_specs(model: Any, sig_index: int = 0) -> list[InputSpec]:
    from inspector.core.tflite.dtypes import numpy_dtype_name

    sig = model.signatureDefs[sig_index]
    sg = model.subgraphs[sig.subgraphIndex]
    order = [int(i) for i in sg.inputs]
    maps = sorted(
        sig.inputs or [],
        key=lambda m: order.index(int(m.tensorIndex)) if int(m.tensorIndex) in order else 1 << 30,
    )
    specs = []
    for m in maps:
        t = sg.tensors[int(m.tensorIndex)]
        sig_shape = (
            t.shapeSignature if t.shapeSignature is not None and len(t.shapeSignature) else t.shape
        )
        shape = tuple(
            1 if int(d) < 0 else int(d) for d in (sig_shape if sig_shape is not None else [])
        )
        sig_dims = tuple(int(d) for d in (sig_shape if sig_shape is not None else []))
        specs.append(
            InputSpec(fe.tensor_name(t), (m.name or b"").decode(), int(m.tensorIndex), shape, sig_dims,
                      numpy_dtype_name(t.type))  # fmt: skip
        )
    return specs


@dataclass
class _Stats:
    """Calibration statistics, measured once and reused when an op is kept float on a retry."""

    seeding: _Seeding | None
    qsvs: dict[str, Any] | None = None
    widened: list[WidenedRange] = field(default_factory=list)
    calibrated: bool = False


def _activation_bits(recipe: list[dict[str, Any]]) -> int:
    """The widest activation type any rule of the recipe asks for."""
    bits = [
        int((r.get("op_config") or {}).get("activation_tensor_config", {}).get("num_bits", 8))
        for r in recipe
        if isinstance(r.get("op_config"), dict)
        and isinstance(r["op_config"].get("activation_tensor_config"), dict)
    ]
    return max([8, *bits])


MAX_KEPT_FLOAT = 3  # ops the runtime refuses that may be kept float before giving up


def _quantize(
    prep: PreparedModel,
    recipe: list[dict[str, Any]],
    feeds: dict[str, list[dict[str, np.ndarray]]],
    path: str,
    task: TaskState,
    stats: _Stats,
) -> bytes:
    """Quantized bytes (calibrating into `stats` once); quantizer errors become QuantizerFailure."""
    from litert_quantizer import Quantizer

    quiet = io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(quiet):
            warnings.simplefilter("ignore")
            q = Quantizer(bytearray(prep.data), recipe)
            if q.need_calibration and stats.qsvs is None:
                qsvs = q.calibrate(
                    {key: Watched(rows, task.span(0.1, 0.75)) for key, rows in feeds.items()}, num_threads=1
                )
                if not qsvs:  # calibration recorded nothing: only control flow / float ops left
                    why = "; ".join(n for n in prep.notes if n.startswith("kept float"))
                    raise QuantizerFailure(
                        f"nothing left to quantize ({why or 'every op is kept float'})", path
                    )
                if stats.seeding is not None:
                    stats.seeding.apply(qsvs)
                stats.widened = widen_clamped_ranges(
                    fe.read(prep.data),
                    qsvs,
                    _activation_bits(recipe),
                    keep=set(stats.seeding.seeded) if stats.seeding is not None else set(),
                )
                stats.qsvs, stats.calibrated = qsvs, True
            task.report(0.78, "quantizing")
            qsvs_now = dict(stats.qsvs) if q.need_calibration and stats.qsvs else None
            result = q.quantize(qsvs_now, enable_progress_report=False)
    except (InspectorError, Cancelled):
        raise
    except Exception as e:  # the quantizer raises bare ValueError/RuntimeError/AttributeError
        msg = " ".join(str(e).split())[:400]
        raise QuantizerFailure(
            f"litert-quantizer failed on this model ({type(e).__name__}: {msg})", path
        ) from e
    return bytes(result.quantized_model)


def _repair_and_check(
    data: bytes,
    prep_model: Any,
    feed: dict[str, np.ndarray],
    sig_key: str,
    notes: list[str],
    runtimes: tuple[str, ...] = BOTH_RUNTIMES,
) -> tuple[bytes, RuntimeProblem | None]:
    """The repaired model and, when the runtime still refuses it, the problem."""
    model = fe.read(data)
    notes += normalize_op_codes(model)
    notes += repoint_signatures(model, io_positions(prep_model))
    notes += remap_metadata_buffer(prep_model, model) + fe.repair_references(model)
    data = fe.write(model)
    problem = run_check(data, feed, sig_key, runtimes)
    if problem is not None and problem.fix == "symmetric_weights":
        targets = asymmetric_weight_ops(model)
        if targets:
            notes.append(f"{problem.message} (op numbers of the produced model)")
            notes += symmetrize_weights(model, targets)
            data = fe.write(model)
            problem = run_check(data, feed, sig_key, runtimes)
    return data, problem


def _refused_scope(data: bytes, problem: RuntimeProblem, prep_model: Any) -> str | None:
    """The quantizer scope of the op the reference kernels refused, when that op exists in the
    float working copy (an inserted QUANTIZE/DEQUANTIZE has none)."""
    if problem.runtime != REFERENCE or problem.op_index is None:
        return None
    model = fe.read(data)
    si = problem.subgraph  # the signature run's subgraph (the quantizer keeps subgraph order)
    if si >= len(model.subgraphs) or si >= len(prep_model.subgraphs):
        return None
    ops = model.subgraphs[si].operators
    if problem.op_index >= len(ops):
        return None
    sg = model.subgraphs[si]
    op = ops[problem.op_index]
    outs = [fe.tensor_name(sg.tensors[i]) for i in op.outputs if i >= 0]
    ins = [fe.tensor_name(sg.tensors[i]) for i in op.inputs if i >= 0]
    scope = op_scope(outs, ins)
    psg = prep_model.subgraphs[si]
    known = {
        op_scope(
            [fe.tensor_name(psg.tensors[i]) for i in o.outputs if i >= 0],
            [fe.tensor_name(psg.tensors[i]) for i in o.inputs if i >= 0],
        )
        for o in psg.operators
    }
    return scope if scope in known else None


def _new_names(prep: PreparedModel) -> dict[str, str]:
    """Original tensor name -> its name in the working copy (only renamed duplicates differ)."""
    return {old: new for new, old in prep.renamed.items()}


def _treatments(data: bytes, ops: list[OpRef], prep: PreparedModel) -> dict[int, str]:
    observed = observed_treatments(data)
    back = _new_names(prep)
    out = {}
    for op in ops:
        if op.subgraph == 0 and op.output_names:
            got = observed.get(tuple(back.get(n, n) for n in op.output_names))
            if got is not None:
                out[op.index] = got
    return out


def validate_recipe(
    recipe: Any, ops: list[OpRef], notes: list[str], path: str | None = None
) -> list[dict[str, Any]]:
    """A saved recipe must be a list of rules with a regex, an operation and an algorithm key."""
    import re

    if not isinstance(recipe, list) or not recipe:
        raise InputError("a recipe must be a non-empty JSON list of quantizer rules", path)
    for i, r in enumerate(recipe):
        if not isinstance(r, dict) or not {"regex", "operation", "algorithm_key"} <= set(r):
            raise InputError(
                f"recipe rule {i} needs 'regex', 'operation' and 'algorithm_key'", path
            )
        if not isinstance(r["regex"], str):
            raise InputError(f"recipe rule {i}: 'regex' must be a string, not {type(r['regex']).__name__}", path)
        try:
            rx = re.compile(r["regex"])
        except re.error as e:
            raise InputError(f"recipe rule {i}: bad regex {r['regex']!r}: {e}", path) from None
        if r["operation"] not in ("INPUT", "OUTPUT") and not any(
            rx.search(o.scope) for o in ops if o.scope
        ):
            notes.append(f"recipe rule {i} (regex {r['regex']!r}) matches no op of this model")
    return recipe


def load_recipe(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    try:
        obj = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(f"cannot read the recipe: {e.strerror or e}", str(path)) from None
    except UnicodeDecodeError as e:  # found by the fuzz of issue 34 (a traceback before)
        raise InputError(f"the recipe is not UTF-8 text (byte {e.start})", str(path)) from None
    except json.JSONDecodeError as e:
        raise InputError(
            f"the recipe is not valid JSON ({e.msg} at line {e.lineno})", str(path)
        ) from None
    if isinstance(obj, dict) and "recipe" in obj:  # a result JSON also carries its recipe
        obj = obj["recipe"]
    return validate_recipe(obj, [], [], str(path))


def save_model(
    result: RequantizeResult,
    path: str | os.PathLike[str],
    protect: Sequence[str | os.PathLike[str]] = (),
) -> None:
    """Write the model atomically; never over the float model or any other `protect`ed input."""
    target = Path(path)
    if target.is_dir():
        raise InputError("the output path is a folder", str(target))
    refuse_over_inputs(target, (result.float_path, *protect), "an input model; choose another output path")
    atomic_write_bytes(target, result.model_bytes)


def save_recipe(
    result: RequantizeResult,
    path: str | os.PathLike[str],
    protect: Sequence[str | os.PathLike[str]] = (),
) -> None:
    target = Path(path)
    refuse_over_inputs(target, (result.float_path, *protect), "an input file with the recipe")
    atomic_write_text(target, to_json_text(result.recipe) + "\n")


def save_plan(plan: Any, path: str | os.PathLike[str], protect: Sequence[str | os.PathLike[str]] = ()) -> None:
    """Write a surgical plan's JSON atomically; never over a `protect`ed input."""
    target = Path(path)
    refuse_over_inputs(target, protect, "an input file with the plan")
    atomic_write_text(target, to_json_text(plan.to_json()) + "\n")


def refuse_over_inputs(target: Path, inputs: Sequence[str | os.PathLike[str]], what: str) -> None:
    """InputError when `target` is one of `inputs` (the same file, by any path)."""
    for p in inputs:
        if target.exists() and Path(p).exists() and os.path.samefile(target, p):
            raise InputError(f"refusing to overwrite {what}", str(target))
