"""Requantize and suggest as worker-process jobs (`isolation.run_isolated`) for the GUI loop.

Each job calibrates on exactly the samples the comparison uses (`inputs.open_source` with the
comparison's options and the current quantized model, as `compare_models` does), writes the new
model atomically into the versions folder (never over an input), and returns its result with
the model bytes dropped: the file is the copy, and bytes need not cross the pipe twice.
Called as `fn(*args, progress=progress, cancel=cancel)`, where `progress(done, total, text)`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.core.compare import CompareOptions, compare_models
from inspector.core.compare_result import ComparisonResult
from inspector.core.model import load_model
from inspector.core.requant_plan import Plan
from inspector.core.requantize import RequantizeResult, requantize, save_model
from inspector.core.suggest import SuggestOptions, SuggestResult, suggest

WorkerProgress = Callable[..., None]


@dataclass
class VersionRun:
    """A requantized version written to `path`, and the comparison of the model it replaces
    when the caller had none (so the loop always has a 'before')."""

    result: RequantizeResult  # model_bytes emptied: read `path`
    path: str
    baseline: ComparisonResult | None = None


def calibration_samples(float_path: str, quant_path: str | None, options: CompareOptions) -> list[Any]:
    """The comparison's samples (same source, count, seed, normalization and input ranges)."""
    from inspector.core.inputs import open_source

    fm = load_model(float_path)
    qm = load_model(quant_path) if quant_path else None
    return list(open_source(fm, qm, options.inputs, options.samples, options.seed, options.normalization))


def _span(progress: WorkerProgress, lo: float, hi: float) -> Callable[[float, str], None]:
    """Map a stage's fraction (0..1) onto [lo, hi] of the job."""

    def report(fraction: float, text: str = "") -> None:
        progress(lo + (hi - lo) * max(0.0, min(1.0, fraction)), 1.0, text)

    return report


def requantize_job(
    float_path: str,
    quant_path: str,
    plan: Plan,
    options: CompareOptions,
    out_path: str,
    protect: Sequence[str],
    with_baseline: bool,
    progress: WorkerProgress,
    cancel: Callable[[], bool],
) -> VersionRun:
    """[compare the current model B,] requantize the float model by `plan`, write `out_path`."""
    baseline = None
    start = 0.0
    if with_baseline:
        stage = _span(progress, 0.0, 0.3)
        opts = dataclasses.replace(options, keep_values=frozenset())
        baseline = compare_models(
            float_path, quant_path, opts,
            progress=lambda done, total: stage(done / max(total, 1), f"comparing the current model B: sample {done} of {total}"),
            cancel=cancel,
        )  # fmt: skip
        start = 0.3
    stage = _span(progress, start, 1.0)
    stage(0.0, "preparing calibration samples")
    samples = calibration_samples(float_path, quant_path, options)
    result = requantize(float_path, plan, samples, seed=options.seed,
                        progress=lambda f, m: stage(f, f"requantizing: {m}"), cancelled=cancel)  # fmt: skip
    save_model(result, out_path, protect=protect)
    return VersionRun(dataclasses.replace(result, model_bytes=b""), out_path, baseline)


def suggest_job(
    float_path: str,
    quant_path: str,
    target_sqnr_db: float | None,
    suggest_options: SuggestOptions,
    options: CompareOptions,
    out_path: str,
    protect: Sequence[str],
    progress: WorkerProgress,
    cancel: Callable[[], bool],
) -> SuggestResult:
    """`suggest` on the comparison's samples; the best model found is written to `out_path`."""
    samples = calibration_samples(float_path, quant_path, options)
    result = suggest(float_path, quant_path, target_sqnr_db, suggest_options, samples,
                     progress=lambda f, m: progress(f, 1.0, m), cancelled=cancel)  # fmt: skip
    if result.best is not None:
        save_model(result.best, out_path, protect=protect)
        result.best = dataclasses.replace(result.best, model_bytes=b"")
    return result


def requantize_cli_job(
    float_path: str,
    plan: Plan | None,
    samples: Any,
    recipe: list[dict[str, Any]] | None,
    num_samples: int,
    seed: int,
    progress: WorkerProgress,
    cancel: Callable[[], bool],
) -> RequantizeResult:
    """`requantize` for the CLI, in the worker process (a LiteRT crash while validating the
    produced model becomes a clean error, not a dead command)."""
    return requantize(float_path, plan, samples, recipe=recipe, num_samples=num_samples, seed=seed, cancelled=cancel)


def suggest_cli_job(
    float_path: str,
    quant_path: str,
    target_sqnr_db: float | None,
    options: SuggestOptions,
    progress: WorkerProgress,
    cancel: Callable[[], bool],
) -> SuggestResult:
    """`suggest` for the CLI, in the worker process."""
    return suggest(float_path, quant_path, target_sqnr_db, options, cancelled=cancel)
