"""Requantize a float model with a per-layer plan (litert-quantizer), checked before it is shown.

Flow: prepare a working copy (model_prep) -> resolve the plan to ops and a recipe (requant_plan)
-> run the float copy once (a model the runtime cannot run cannot be calibrated) -> calibrate and
quantize -> repair what the quantizer emits (requant_fixes) -> run the result under the reference
kernels and XNNPACK, fixing what can be fixed (requant_check) -> verify each selected op got its
treatment. Every change and finding is a note in the result. The input file is only read.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core import flatbuffer_edit as fe
from inspector.core.errors import Cancelled, InputError, InspectorError, RuntimeFailure
from inspector.core.model import load_model
from inspector.core.model_prep import PreparedModel, op_scope, prepare
from inspector.core.requant_check import OpCheck, check_selections, observed_treatments, run_check
from inspector.core.requant_fixes import (
    asymmetric_weight_ops,
    io_positions,
    normalize_op_codes,
    repoint_signatures,
    symmetrize_weights,
)
from inspector.core.requant_plan import OpRef, Plan, Selection, build_recipe, select
from inspector.core.requant_samples import InputSpec, Watched, random_feeds, to_feeds
from inspector.core.writing import atomic_write_bytes, atomic_write_text, to_json_text

Progress = Callable[[float, str], None]


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

    @property
    def size_bytes(self) -> int:
        return len(self.model_bytes)

    def to_json(self) -> dict[str, Any]:
        return {
            "float_model": self.float_path,
            "size_bytes": self.size_bytes,
            "plan": self.plan.to_json() if self.plan else None,
            "recipe": self.recipe,
            "notes": self.notes,
            "checks": [vars(c) for c in self.checks],
            "treatments": {str(k): v for k, v in self.treatments.items()},
            "calibration": {"samples": self.num_samples, "seed": self.seed},
        }


def requantize(
    float_path: str | os.PathLike[str],
    plan: Plan | None = None,
    samples: Any = None,
    *,
    recipe: list[dict[str, Any]] | None = None,
    num_samples: int = 8,
    seed: int = 0,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> RequantizeResult:
    """Quantize `float_path` by `plan` (or a saved quantizer `recipe`) on calibration `samples`."""
    path = str(float_path)
    report = progress or (lambda f, m: None)
    original = load_model(path)  # validates the file; ModelFormatError names it
    if any(
        t.is_quantized and t.dtype in ("int8", "uint8", "int16", "int4")
        for sg in original.subgraphs
        for t in sg.tensors
    ):
        raise InputError(
            "this model is already quantized; requantize starts from the float model", path
        )
    data = Path(path).read_bytes()
    report(0.02, "preparing a working copy")
    prep = prepare(data)
    notes = list(prep.notes)
    ops = _op_refs(original, prep)
    selections: dict[tuple[int, int], Selection] = {}
    if recipe is None:
        plan = plan or Plan()
        selections = select(plan, ops, path)
        recipe = build_recipe(plan, selections, prep.keep_float_scopes)
        notes += _algorithm_notes(selections)
    else:
        recipe = validate_recipe(recipe, ops, notes, path)
        plan = None

    prep_model = fe.read(prep.data)
    specs = _input_specs(prep_model)
    feeds = (
        _random_feeds(original, specs, num_samples, seed)
        if samples is None
        else to_feeds(samples, specs)
    )
    sig_key = (prep_model.signatureDefs[0].signatureKey or b"").decode()

    problem = run_check(prep.data, feeds[0], sig_key)
    if problem is not None:
        raise RuntimeFailure(f"the float model cannot be calibrated here: {problem.message}", path)
    if cancelled is not None and cancelled():
        raise Cancelled()

    quantized, calibrated = _quantize(prep, recipe, {sig_key: feeds}, path, report, cancelled)
    if calibrated and samples is None:
        notes.append(
            f"calibrated on {len(feeds)} random samples (seed {seed}); give real samples for a representative model"
        )
    report(0.85, "checking the produced model")
    model_bytes = _repair_and_check(quantized, prep_model, feeds[0], sig_key, notes, path)

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
        seed=seed if samples is None else None,
    )


def _algorithm_notes(selections: dict[tuple[int, int], Selection]) -> list[str]:
    """The quantizer silently falls back to the base rule where an algorithm has no kernel."""
    from litert_quantizer import algorithm_manager

    from inspector.core.requant_plan import ALGORITHMS

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


def _random_feeds(original: Any, specs: list[InputSpec], n: int, seed: int) -> list[dict]:
    """The app's random samples (same as the comparison uses), else a local generator."""
    try:
        from inspector.core.inputs import random_source
    except ImportError:
        return random_feeds(specs, n, seed)
    return to_feeds(list(random_source(original, None, n, seed)), specs)


def _op_refs(original: Any, prep: PreparedModel) -> list[OpRef]:
    """Ops of the user's model, each with its quantizer scope in the prepared copy."""
    model = fe.read(prep.data) if prep.rewritten else None
    scopes: dict[tuple[int, tuple[str, ...]], str] = {}
    if model is not None:
        for si, sg in enumerate(model.subgraphs):
            for op in sg.operators:
                outs = [fe.tensor_name(sg.tensors[i]) for i in op.outputs if i >= 0]
                ins = [fe.tensor_name(sg.tensors[i]) for i in op.inputs if i >= 0]
                key = tuple(prep.renamed.get(n, n) for n in outs)
                scopes[(si, key)] = op_scope(outs, ins)
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


def _input_specs(model: Any) -> list[InputSpec]:
    from inspector.core.dtypes import numpy_dtype_name

    sig = model.signatureDefs[0]
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
        specs.append(
            InputSpec((m.name or b"").decode(), fe.tensor_name(t), shape, numpy_dtype_name(t.type))
        )
    return specs


def _quantize(
    prep: PreparedModel,
    recipe: list[dict[str, Any]],
    feeds: dict[str, list],
    path: str,
    report: Progress,
    cancelled: Callable[[], bool] | None,
) -> tuple[bytes, bool]:
    """Quantized bytes, and whether calibration ran; quantizer errors become QuantizerFailure."""
    from litert_quantizer import Quantizer

    quiet = io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(quiet):
            warnings.simplefilter("ignore")
            q = Quantizer(bytearray(prep.data), recipe)
            qsvs = None
            if q.need_calibration:
                key, rows = next(iter(feeds.items()))
                qsvs = q.calibrate(
                    {key: Watched(rows, report, cancelled, (0.1, 0.75))}, num_threads=1
                )
                if not qsvs:  # calibration recorded nothing: only control flow / float ops left
                    why = "; ".join(n for n in prep.notes if n.startswith("kept float"))
                    raise QuantizerFailure(
                        f"nothing left to quantize ({why or 'every op is kept float'})", path
                    )
            report(0.78, "quantizing")
            result = q.quantize(qsvs, enable_progress_report=False)
    except (InspectorError, Cancelled):
        raise
    except Exception as e:  # the quantizer raises bare ValueError/RuntimeError/AttributeError
        msg = " ".join(str(e).split())[:400]
        raise QuantizerFailure(
            f"litert-quantizer failed on this model ({type(e).__name__}: {msg})", path
        ) from e
    return bytes(result.quantized_model), qsvs is not None


def _repair_and_check(
    data: bytes, prep_model: Any, feed: dict, sig_key: str, notes: list[str], path: str
) -> bytes:
    model = fe.read(data)
    notes += normalize_op_codes(model)
    notes += repoint_signatures(model, io_positions(prep_model))
    data = fe.write(model)
    problem = run_check(data, feed, sig_key)
    if problem is not None and problem.fix == "symmetric_weights":
        targets = asymmetric_weight_ops(model)
        if targets:
            notes.append(f"{problem.message} (op numbers of the produced model)")
            notes += symmetrize_weights(model, targets)
            data = fe.write(model)
            problem = run_check(data, feed, sig_key)
    if problem is not None:
        raise RuntimeFailure(f"the quantized model does not run: {problem.message}", path)
    return data


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
    for p in (result.float_path, *protect):
        if target.exists() and Path(p).exists() and os.path.samefile(target, p):
            raise InputError(
                "refusing to overwrite an input model; choose another output path", str(target)
            )
    atomic_write_bytes(target, result.model_bytes)


def save_recipe(
    result: RequantizeResult,
    path: str | os.PathLike[str],
    protect: Sequence[str | os.PathLike[str]] = (),
) -> None:
    target = Path(path)
    for p in (result.float_path, *protect):
        if target.exists() and Path(p).exists() and os.path.samefile(target, p):
            raise InputError("refusing to overwrite an input file with the recipe", str(target))
    atomic_write_text(target, to_json_text(result.recipe) + "\n")
