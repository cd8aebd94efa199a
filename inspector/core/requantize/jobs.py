"""Requantize, surgical edits and suggest as worker-process jobs (`runtime.worker.run_isolated`),
one job per operation for the GUI and the CLI, and the table of them the GUI loop runs (`PAIR_JOBS`).

In the GUI loop each job reads exactly the samples the comparison uses (`samples.sources.open_source`
with the comparison's options and the current quantized model, as `compare_models` does), calibrates
on their first part and measures the gain on the held-out rest (`samples.holdout`), writes the new
model atomically into the versions folder (never over an input), and returns its result with the
model bytes dropped: the file is the copy, and bytes need not cross the pipe twice. The CLI runs
the same jobs with its own sample settings and no output path, and writes the model itself.
Called as `fn(*args, task=task)` (a `core.progress.TaskState`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.result import ComparisonResult
from inspector.core.progress import TaskState
from inspector.core.requantize.delta import output_sqnr_db
from inspector.core.requantize.held_out import HeldOutGain
from inspector.core.requantize.plan import Plan
from inspector.core.requantize.quantizer_route import RequantizeResult, requantize, save_model
from inspector.core.requantize.suggest import SuggestOptions, SuggestResult, suggest
from inspector.core.requantize.suggest_surgical import (
    SurgicalSuggestOptions,
    SurgicalSuggestResult,
    suggest_surgical,
)
from inspector.core.requantize.surgical import SurgicalResult
from inspector.core.requantize.surgical_plan import SurgicalPlan
from inspector.core.runtime.worker import PairJob
from inspector.core.samples.holdout import split_samples
from inspector.core.samples.settings import SampleSettings
from inspector.core.samples.spec import Sample
from inspector.core.tflite.model import load_model
from inspector.core.tflite.signatures import select_signature


@dataclass
class VersionRun:
    """A requantized version written to `path`, and the comparison of the model it replaces
    when the caller had none (so the loop always has a 'before')."""

    result: RequantizeResult  # model_bytes emptied: read `path`
    path: str
    baseline: ComparisonResult | None = None


def calibration_samples(float_path: str, quant_path: str | None, options: CompareOptions) -> list[Sample]:
    """The comparison's samples (same source, count, seed, normalization, input ranges and signature)."""
    from inspector.core.samples.sources import open_source

    fm = select_signature(load_model(float_path), options.signature)
    qm = select_signature(load_model(quant_path), options.signature) if quant_path else None
    return list(open_source(fm, qm, options.samples))


def suggest_job(
    float_path: str,
    quant_path: str,
    target_sqnr_db: float | None,
    suggest_options: SuggestOptions,
    options: CompareOptions | None = None,
    out_path: str | None = None,
    protect: Sequence[str] = (),
    *,
    task: TaskState,
) -> SuggestResult:
    """`suggest` (layers to keep float or move to a16w8), for the GUI loop and the CLI. With the
    comparison's `options` (the GUI) the candidates calibrate on exactly its samples, else `suggest`
    reads them from `suggest_options.samples` (the CLI); with `out_path` the best model found is
    written there (never over `protect`) and its bytes dropped."""
    samples = None if options is None else calibration_samples(float_path, quant_path, options)
    result = suggest(float_path, quant_path, target_sqnr_db, suggest_options, samples, task=task)
    if out_path is not None and result.best is not None:
        result.best = _written(result.best, float_path, out_path, protect)
    return result


def requantize_cli_job(
    float_path: str,
    plan: Plan | None,
    samples: Any,
    recipe: list[dict[str, Any]] | None,
    sample_settings: SampleSettings,
    calibrate_from: str | None,
    task: TaskState,
    signature: str | None = None,
) -> RequantizeResult:
    """`requantize` for the CLI, in the worker process (a LiteRT crash while validating the
    produced model becomes a clean error, not a dead command)."""
    return requantize(float_path, plan, samples, recipe=recipe, sample_settings=sample_settings, task=task,
                      calibrate_from=calibrate_from, signature=signature)  # fmt: skip


# ---------------------------------------------------------------------- surgical edits of model B
@dataclass
class EditRun:
    """A surgically edited model: written to `path` (`result.model_bytes` emptied), or, without a
    path, in `result.model_bytes`; and the comparison of the model it replaces when asked for."""

    result: SurgicalResult  # its `gain`: the output SQNR gain on held-out samples, when an edit calibrated
    path: str | None = None
    baseline: ComparisonResult | None = None
    unchanged: bool = False  # the written model equals the edited one (`tflite.same_content`): not a new version


# A result carrying a model's bytes (`model_bytes`): the quantizer route's or a surgical edit's.
Written = TypeVar("Written", RequantizeResult, SurgicalResult)


def _written(result: Written, float_path: str, out_path: str, protect: Sequence[str]) -> Written:
    """`result`'s model (its `model_bytes`) written to `out_path` atomically, never over an input
    (the quantizer route's `save_model` rules); `result` returned with its bytes dropped."""
    save_model(RequantizeResult(result.model_bytes, [], [], None, float_path), out_path, protect=protect)
    return dataclasses.replace(result, model_bytes=b"")


def _baseline(float_path: str, quant_path: str, options: CompareOptions, task: TaskState) -> ComparisonResult:
    opts = dataclasses.replace(options, keep_values=frozenset())
    return compare_models(float_path, quant_path, opts, task=task.span(0.0, 0.3, "comparing the current model B: "))


def surgical_job(
    float_path: str,
    quant_path: str,
    plan: SurgicalPlan,
    options: CompareOptions | None = None,
    out_path: str | None = None,
    protect: Sequence[str] = (),
    with_baseline: bool = False,
    *,
    task: TaskState,
) -> EditRun:
    """[Compare the current model B,] edit B by `plan` (`surgical.apply_plan`), validated in LiteRT,
    with the output SQNR gain on the held-out samples when an edit calibrated (`held_out_gain`).
    The samples, signature and runtime are the comparison's `options` (the GUI: the ops shown),
    else the plan's (the CLI). With `out_path` the model is written there (never over `protect`),
    its bytes dropped and `unchanged` set (`tflite.same_content`); without, the caller writes it."""
    from inspector.core.requantize.held_out import held_out_gain
    from inspector.core.requantize.surgical import apply_plan

    if options is None:
        options = CompareOptions(samples=plan.samples, signature=plan.signature)
    baseline = _baseline(float_path, quant_path, options, task) if with_baseline else None
    plan = dataclasses.replace(plan, samples=options.samples, signature=options.signature)
    sub = task.span(0.3 if with_baseline else 0.0, 1.0, "editing model B: ")
    sub.report(0.0, "preparing the samples")
    samples = calibration_samples(float_path, quant_path, options) if plan.needs_samples() else None
    result = apply_plan(float_path, quant_path, plan, samples, task=sub, runtime=options.runtime)
    if result.split is not None and samples:
        sub.report(0.95, "measuring the gain on the held-out samples")
        result.gain = held_out_gain(float_path, quant_path, result.model_bytes, samples, options.runtime, options.signature)
    if out_path is None:
        return EditRun(result, None, baseline)
    result = _written(result, float_path, out_path, protect)
    from inspector.core.tflite.model import Model
    from inspector.core.tflite.same_content import same_content

    return EditRun(result, out_path, baseline, same_content(Model(quant_path), Model(out_path)))


@dataclass
class QuantizerRuns:
    """The quantizer route from the GUI: B re-calibrated with no changes (the baseline, with its
    comparison), then the plan's model, both seeded from B's ranges."""

    unchanged: VersionRun
    unchanged_comparison: ComparisonResult
    planned: VersionRun
    gain: HeldOutGain | None = None  # the plan's output SQNR gain over the unchanged model, on held-out samples


def quantizer_versions_job(
    float_path: str,
    quant_path: str,
    plan: Plan,
    options: CompareOptions,
    out_unchanged: str,
    out_path: str,
    protect: Sequence[str],
    task: TaskState,
) -> QuantizerRuns:
    """Regenerate from the float file twice with calibration seeded from B (`calibrate_from`):
    once with no changes (compared: the baseline that isolates the plan's effect) and once by `plan`."""
    every = calibration_samples(float_path, quant_path, options)
    split = split_samples(len(every))
    samples = split.calibration(every)  # the rest is held out to measure the gain
    unchanged_plan = Plan(base=plan.base, per_channel=plan.per_channel, algorithm=plan.algorithm, float_io=plan.float_io)
    first = requantize(float_path, unchanged_plan, samples, sample_settings=options.samples, calibrate_from=quant_path,
                       signature=options.signature,
                       task=task.span(0.0, 0.35, "re-calibrating with no changes: "))  # fmt: skip
    first = _written(first, float_path, out_unchanged, protect)
    cmp_opts = dataclasses.replace(options, keep_values=frozenset())
    compared = compare_models(float_path, out_unchanged, cmp_opts, task=task.span(0.35, 0.6, "comparing the re-calibrated model: "))
    second = requantize(float_path, plan, samples, sample_settings=options.samples, calibrate_from=quant_path,
                        signature=options.signature,
                        task=task.span(0.6, 1.0, "requantizing by the plan: "))  # fmt: skip
    second = _written(second, float_path, out_path, [*protect, out_unchanged])
    held = dataclasses.replace(cmp_opts, samples_from=split.evaluation_start, isolated=False)  # output SQNR only
    before = compared if split.evaluation_start == 0 else compare_models(float_path, out_unchanged, held)
    after = compare_models(float_path, out_path, held)
    db = [output_sqnr_db(r) for r in (before, after)]
    before_db, after_db = (math.nan if v is None else v for v in db)
    gain = HeldOutGain(split, "worst output", before_db, after_db)
    return QuantizerRuns(
        VersionRun(first, out_unchanged),
        compared,
        VersionRun(second, out_path),
        gain,
    )


def surgical_suggest_job(
    float_path: str,
    quant_path: str,
    target_sqnr_db: float | None,
    options: SurgicalSuggestOptions,
    out_path: str | None = None,
    protect: Sequence[str] = (),
    *,
    task: TaskState,
) -> SurgicalSuggestResult:
    """`suggest_surgical` (edits of B) on `options.samples`, for the GUI loop and the CLI; with
    `out_path` the best model is written there (never over `protect`) and its bytes dropped."""
    result = suggest_surgical(float_path, quant_path, target_sqnr_db, options, task=task)
    if out_path is not None and result.best is not None:
        result.best = _written(result.best, float_path, out_path, protect)
    return result


# The GUI's requantize loop: each job with the step a failure names (typed by the job's result).
SUGGEST: PairJob[SuggestResult] = PairJob(suggest_job, "suggesting layers (requantizing and comparing candidates)")
SURGICAL_EDIT: PairJob[EditRun] = PairJob(surgical_job, "editing model B (surgical edits, checked in LiteRT)")
QUANTIZER_RUN: PairJob[QuantizerRuns] = PairJob(quantizer_versions_job, "requantizing (calibrating and quantizing the float model)")
SURGICAL_SUGGEST: PairJob[SurgicalSuggestResult] = PairJob(
    surgical_suggest_job, "suggesting edits of model B (editing and comparing candidates)")  # fmt: skip
PAIR_JOBS = (SUGGEST, SURGICAL_EDIT, QUANTIZER_RUN, SURGICAL_SUGGEST)
