"""Suggest a few layers to keep float (or move to a16w8) so the model output meets a target.

Greedy and verified: rank the quantized model's layers by their own (isolated) error, take the
worst few as candidates, and at each step requantize the float model with every remaining
candidate added to the current set, compare each result with the float model, and keep the
candidate that raises the output SQNR most. Candidates calibrate on the first 2/3 of the samples
and are compared on the held-out rest (`samples.holdout`; all samples, in-sample, under 24). Stops at the target, at the layer budget, when no
candidate helps, or at the evaluation budget. Every evaluated model is a (size, SQNR) point
for the trade-off plot. Comparison goes through `inspector.core.compare.comparison.compare_models`.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.codec.json_record import JsonRecord, json_field
from inspector.core.compare.result import ComparisonResult
from inspector.core.errors import InputError
from inspector.core.progress import TaskState, as_task
from inspector.core.requantize.plan import Override, Plan, infer_base
from inspector.core.requantize.quantizer_route import RequantizeResult, requantize, save_model
from inspector.core.requantize.suggest_options import (
    SuggestOptions as SuggestOptions,  # re-exported: callers import it with suggest
)
from inspector.core.requantize.tradeoff import TradeoffPoint
from inspector.core.samples.holdout import SampleSplit, split_samples
from inspector.core.tflite.model import load_model
from inspector.core.tflite.op_facts import SUGGEST_SKIP_OPS
from inspector.core.writing import json_float


@dataclass
class SuggestResult(JsonRecord):
    target_sqnr_db: float | None
    max_layers: int | None
    treatment: str
    base: str
    met: bool
    layers: list[dict[str, Any]]  # chosen, in order: float op index, type, tensor name, gain, and B's op
    plan: Plan
    points: list[TradeoffPoint] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    best: RequantizeResult | None = json_field(default=None, skip=True)  # its recipe is written
    calibration: dict[str, Any] | None = None  # `SampleSplit.to_json`: where the gains were measured
    candidates: list[dict[str, Any]] = field(default_factory=list)  # rank_layers rows tried, worst first
    ranked: int = 0  # layers ranked (the candidates are the worst of them)
    evaluations: int = 0

    JSON_EXTRA = {"recipe": lambda r: r.best.recipe if r.best else None,
                  "evaluation": lambda r: None if r.calibration is None else r.calibration["evaluation"]}  # fmt: skip
    JSON_KEYS = ("target_sqnr_db", "max_layers", "treatment", "base", "met", "layers", "plan", "recipe", "points", "notes",
                 "calibration", "evaluation", "candidates", "ranked", "evaluations")  # fmt: skip


def output_sqnr(comparison: ComparisonResult) -> float:
    """Worst output SQNR of a `compare_models` result (identical outputs: +inf)."""
    values = [json_float(o.metrics.sqnr_db) for o in comparison.outputs]
    return min((math.inf if v is None else float(v)) for v in values) if values else math.nan


def _compare(float_path: str, quant_path: str, opts: SuggestOptions, samples_from: int = 0) -> ComparisonResult:
    """Compared on the samples from `samples_from` on: the held-out ones when calibration used the others."""
    from inspector.core.compare.comparison import CompareOptions, compare_models

    return compare_models(
        float_path,
        quant_path,
        CompareOptions(samples=opts.samples, isolated=True, samples_from=samples_from),
    )


def _calibration_split(fpath: str, qpath: str, opts: SuggestOptions, calibration: Any) -> tuple[Any, SampleSplit]:
    """The calibration samples (the first part of the comparison's samples: `calibration`, as the
    caller read them from `opts.samples`, else read here) and the split (`samples.holdout`)."""
    from inspector.core.samples.sources import open_source

    samples = list(calibration) if calibration is not None else list(open_source(load_model(fpath), load_model(qpath), opts.samples))
    split = split_samples(len(samples))
    if split.evaluation_start == 0:  # in-sample: calibrate exactly as before (the caller's samples, or requantize's own)
        return calibration, split
    return split.calibration(samples), split


def rank_layers(comparison: ComparisonResult, float_model: Any) -> list[dict[str, Any]]:
    """Layers worst first by isolated SQNR (accumulated when isolated is missing or not finite).

    "op", "type", "tensor": the float model's op (plans name it); "quant_op", "quant_type",
    "quant_tensor": B's op that was measured (the one the user sees as the layer)."""
    rows = []
    for layer in comparison.layers:
        fi = layer.float_op_index
        if fi is None or not 0 <= fi < len(float_model.main.ops) or layer.op_type in SUGGEST_SKIP_OPS:
            continue
        iso = None if layer.isolated is None else json_float(layer.isolated.sqnr_db)
        acc = json_float(layer.metrics.sqnr_db)
        score = iso if iso is not None else acc
        fop = float_model.main.ops[fi]
        name = (
            float_model.main.tensors[fop.outputs[0]].name if fop.outputs else layer.tensor_name
        )
        rows.append(
            {
                "op": fi,
                "type": fop.type,
                "tensor": name,
                "sqnr_db": math.inf if score is None else score,
                "quant_op": layer.op_index,
                "quant_type": layer.op_type,
                "quant_tensor": layer.tensor_name,
            }
        )
    seen, ranked = set(), []
    for r in sorted(rows, key=lambda r: r["sqnr_db"]):
        if r["op"] not in seen:
            seen.add(r["op"])
            ranked.append(r)
    return ranked


def suggest(
    float_path: str | os.PathLike[str],
    quant_path: str | os.PathLike[str],
    target_sqnr_db: float | None = None,
    options: SuggestOptions | None = None,
    calibration: Any = None,
    task: TaskState | None = None,
) -> SuggestResult:
    opts = options or SuggestOptions()
    fpath, qpath = str(float_path), str(quant_path)
    if target_sqnr_db is None and opts.max_layers is None:
        raise InputError("give a target output SQNR or a maximum number of layers")
    if opts.treatment not in ("keep_float", "a16w8"):
        raise InputError(f"suggest moves layers to keep_float or a16w8, not {opts.treatment!r}")
    task = as_task(task)
    report = task.report
    fm, qm = load_model(fpath), load_model(qpath)
    base = infer_base(qm)
    plan0 = Plan(base=base)
    budget = opts.max_layers if opts.max_layers is not None else 8
    notes = [f"base scheme inferred from {Path(qpath).name}: {base}"]
    calibration, split = _calibration_split(fpath, qpath, opts, calibration)
    notes.append(f"gains: {split.note}")
    report(0.0, "comparing the quantized model")
    given_cmp = _compare(fpath, qpath, opts, split.evaluation_start)
    points = [
        TradeoffPoint(
            f"{Path(qpath).name} (given)", (), os.path.getsize(qpath), output_sqnr(given_cmp)
        )
    ]
    ranked = rank_layers(given_cmp, fm)
    candidates = ranked[: opts.candidates]
    quant_op = {c["op"]: c["quant_op"] for c in candidates}

    evaluations = 0
    with tempfile.TemporaryDirectory(prefix="tqi-suggest-") as tmp:

        def evaluate(layers: tuple[int, ...]) -> tuple[RequantizeResult, float]:
            nonlocal evaluations
            task.check()
            evaluations += 1
            plan = plan0.with_overrides(*(Override(f"op:{i}", opts.treatment) for i in layers))
            res = requantize(fpath, plan, calibration, sample_settings=opts.samples)
            out = Path(tmp) / f"candidate_{evaluations}.tflite"
            save_model(res, out, protect=[qpath])
            sqnr = output_sqnr(_compare(fpath, str(out), opts, split.evaluation_start))
            points.append(
                TradeoffPoint(_label(layers, opts.treatment, quant_op), layers, res.size_bytes, sqnr)
            )
            return res, sqnr

        best, best_sqnr = evaluate(())
        chosen: list[dict[str, Any]] = []
        total = max(1, min(opts.max_evaluations, budget * len(candidates)))
        while not _met(best_sqnr, target_sqnr_db) and len(chosen) < budget:
            step = None
            for c in candidates:
                if any(c["op"] == x["op"] for x in chosen) or evaluations >= opts.max_evaluations:
                    continue
                report(min(evaluations / total, 0.99), f"trying op {c['quant_op']} ({c['quant_type']})")
                res, sqnr = evaluate(tuple(x["op"] for x in chosen) + (c["op"],))
                if (
                    step is None
                    or sqnr > step[2]
                    or (sqnr == step[2] and res.size_bytes < step[1].size_bytes)
                ):
                    step = (c, res, sqnr)
            if step is None or step[2] <= best_sqnr:
                if step is not None:
                    notes.append("stopped: no remaining candidate improves the output SQNR")
                elif evaluations >= opts.max_evaluations:
                    notes.append(f"stopped: evaluation budget used ({opts.max_evaluations})")
                else:
                    notes.append(f"stopped: all {len(candidates)} candidates are {opts.treatment}")
                break
            c, best, gain = step[0], step[1], step[2] - best_sqnr
            best_sqnr = step[2]
            chosen.append(
                {
                    "op": c["op"],
                    "type": c["type"],
                    "tensor": c["tensor"],
                    "gain_db": gain,
                    "output_sqnr_db": best_sqnr,
                    "quant_op": c["quant_op"],
                    "quant_type": c["quant_type"],
                    "quant_tensor": c["quant_tensor"],
                }
            )
    report(1.0, "done")
    plan = plan0.with_overrides(*(Override(f"op:{x['op']}", opts.treatment) for x in chosen))
    met = target_sqnr_db is None or _met(
        best_sqnr, target_sqnr_db
    )  # a layer budget alone is always met
    if target_sqnr_db is not None and not met:
        notes.append(
            f"target {target_sqnr_db:.1f} dB not reached: best {best_sqnr:.2f} dB with {len(chosen)} layer(s)"
        )
    return SuggestResult(
        target_sqnr_db, opts.max_layers, opts.treatment, base, met, chosen, plan, points, notes, best,
        calibration=split.to_json(), candidates=candidates, ranked=len(ranked), evaluations=evaluations,
    )  # fmt: skip


def _met(sqnr: float, target: float | None) -> bool:
    return target is not None and sqnr >= target


def _label(layers: tuple[int, ...], treatment: str, quant_op: dict[int, int]) -> str:
    """'keep_float: op 19, 21' naming B's ops (the float model's indices differ)."""
    if not layers:
        return "requantized, no overrides"
    return f"{treatment}: " + ", ".join(f"op {quant_op.get(i, i)}" for i in layers)
