"""The comparison of the open pair: runs it, holds its result, its task metrics and a baseline.

One per window (`CompareFeature.compare`). `run()` runs `core.compare.compare_models` (then `requantize.blame`) in the worker
process (`core.runtime.worker`) from a `Worker` thread, so a LiteRT crash becomes a `failed` message
and the GUI stays up. Which tensors keep values for the activation view: `viewdata.activations.keep_plan`
(all layers when the model is small enough, else the selected tensor; `collect_values(t)` re-runs
to fetch another). `run_single_sample(k)` re-runs sample k alone (`core.single_sample`).

    compare.set_baseline(result, "before: int8")   # e.g. the requantize panel
    compare.run()                                  # after swapping model B
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from inspector.core.compare.comparison import CompareOptions
from inspector.core.compare.result import ComparisonResult
from inspector.core.compare.task import TaskResult
from inspector.core.progress import TaskState
from inspector.core.runtime.worker import run_isolated
from inspector.core.viewdata.activations import keep_plan
from inspector.core.viewdata.layer_figures import warm
from inspector.core.viewdata.task_figures import first_task
from inspector.gui.protocols import ModelsController
from inspector.gui.relay import on_event, relay
from inspector.gui.workers import Worker, guarded


@dataclass(frozen=True)
class SampleRun:
    """The layerwise comparison of one sample of the current result."""

    index: int
    result: ComparisonResult

    @property
    def label(self) -> str:
        return f"sample #{self.index}"


def _compare_job(float_path: str, quant_path: str, options: CompareOptions, index: int | None, task: TaskState) -> ComparisonResult:
    """Worker-thread side: the comparison (or one sample of it) in the worker process."""
    from inspector.core.compare.single_sample import compare_one_sample
    from inspector.core.requantize.blame import compare_and_blame

    fn: Callable[..., ComparisonResult]
    args: tuple[Any, ...]
    if index is None:  # the comparison, then the root causes' blame (needs the isolated errors)
        fn, args, step = compare_and_blame, (float_path, quant_path, options, options.isolated), "comparing, then measuring blame"
    else:
        fn, args, step = compare_one_sample, (float_path, quant_path, options, index), f"re-running sample #{index}"
    prefix = "Comparing: " if index is None else f"Sample #{index}: "
    result = run_isolated(fn, *args, task=task.span(0.0, 1.0, prefix), step=step, models=(float_path, quant_path))
    warm(result)  # its per-layer figures, here off the GUI thread (`core.viewdata.layer_figures`)
    return result


class CompareController(QObject):
    started = Signal()
    progress = Signal(float, str)  # fraction (-1: busy), text
    result_changed = Signal(object)  # ComparisonResult | None
    sample_changed = Signal(object)  # SampleRun | None
    baseline_changed = Signal(object)  # ComparisonResult | None
    options_changed = Signal(object)  # CompareOptions
    failed = Signal(str)
    cancelled = Signal()
    finished = Signal()  # after any run ends (result, failure or cancel)

    def __init__(self, controller: ModelsController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.state = state = controller.state  # options, result, run options, baseline live there
        self._task: TaskResult | None = None
        self.sample: SampleRun | None = None
        self.worker: Worker | None = None
        self._running_paths: tuple[str, str] | None = None
        self.task_error = ""
        relay(state.options_changed, self.options_changed, self)
        on_event(state.comparison_changed, self, self._comparison_changed)
        relay(state.baseline_changed, self.baseline_changed, self)

    # ------------------------------------------------------------------ state
    @property
    def options(self) -> CompareOptions:
        return self.state.options

    @property
    def run_options(self) -> CompareOptions | None:
        """The options of the current result."""
        return self.state.run_options

    @property
    def baseline_label(self) -> str:
        return self.state.baseline_label

    @property
    def _result(self) -> ComparisonResult | None:
        return self.state.comparison

    @property
    def result(self) -> ComparisonResult | None:
        return self.state.comparison

    @property
    def task(self) -> TaskResult | None:
        return self._task

    @property
    def baseline(self) -> ComparisonResult | None:
        return self.state.baseline

    @property
    def running(self) -> bool:
        return self.worker is not None and not self.worker.is_done

    @property
    def running_paths(self) -> tuple[str, str] | None:
        """(A, B) of the comparison running now (None: none runs); another pair's when the pair
        changed under it."""
        return self._running_paths if self.running else None

    def set_options(self, options: CompareOptions) -> None:
        self.state.set_options(options)

    def option(self, name: str) -> object:
        """One option by name (`AppState.option`): what bound widgets show."""
        return self.state.option(name)

    def set_option(self, name: str, value: object) -> None:
        """One option (`AppState.set_option`): what a bound widget's edit calls."""
        self.state.set_option(name, value)

    def set_result(self, result: ComparisonResult | None, run_options: CompareOptions | None = None) -> None:
        """Show a result (a finished run, or one restored from a session)."""
        self.state.set_comparison(result, run_options if run_options is not None else self.state.run_options)

    def _comparison_changed(self, result: ComparisonResult | None) -> None:
        self._task, self.task_error = first_task(result) if result is not None else (None, "")  # made by `warm`
        self.sample = None
        self.sample_changed.emit(None)
        self.result_changed.emit(result)

    def set_baseline(self, result: ComparisonResult | None, label: str = "baseline") -> None:
        """A second series in the layer error plot (e.g. before a requantization)."""
        self.state.set_baseline(result, label)

    def clear_baseline(self) -> None:
        self.set_baseline(None)

    # ------------------------------------------------------------------ runs
    def paths(self) -> tuple[str, str] | None:
        return self.state.paths()

    def run(self, options: CompareOptions | None = None, *, paths: tuple[str, str] | None = None) -> Worker | None:
        """Compare models A and B (or `paths`) over the samples `options` (default: the panel's) describe."""
        if options is not None:
            self.set_options(options)
        paths = paths or self.paths()
        if paths is None:
            self.failed.emit("Open a float model (A) and a quantized model (B) to compare them.")
            return None
        opts = self.options
        qm = self.controller.models["B"]
        if qm is not None:
            keep = keep_plan(qm, self.controller.selection.tensor("B"))
            opts = dataclasses.replace(opts, keep_values=frozenset(opts.keep_values) | keep)
        return self._start(paths, opts, None)

    def run_single_sample(self, index: int) -> Worker | None:
        """Re-run sample `index` of the current result alone; its layerwise error -> sample_changed."""
        if self._result is None or self.run_options is None:
            self.failed.emit("Run a comparison first.")
            return None
        paths = (self._result.float_path, self._result.quant_path)
        return self._start(paths, self.run_options, index)

    def collect_values(self, quant_tensor: int) -> Worker | None:
        """Re-run the comparison keeping the values of `quant_tensor` too (large models)."""
        if self._result is None or self.run_options is None:
            return None
        opts = dataclasses.replace(self.run_options, keep_values=self.run_options.keep_values | {quant_tensor})
        return self._start((self._result.float_path, self._result.quant_path), opts, None)

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel()

    def _start(self, paths: tuple[str, str], opts: CompareOptions, index: int | None) -> Worker:
        self.cancel()
        w = Worker(_compare_job, paths[0], paths[1], opts, index, wants_progress=True)
        self.worker = w
        self._running_paths = (paths[0], paths[1])
        w.progress.connect(guarded(self, lambda f, t: self._progress(w, f, t)))
        w.finished.connect(guarded(self, lambda r: self._finished(w, opts, index, r)))
        w.failed.connect(guarded(self, lambda msg: self._failed(w, msg)))
        w.cancelled.connect(guarded(self, lambda: self._cancelled(w)))
        w.done.connect(guarded(self, lambda: self._done(w)))
        what = f"Re-running sample #{index}" if index is not None else f"Comparing {Path(paths[1]).name}"
        self.controller.run_task(w, what)
        self.started.emit()
        return w

    def _progress(self, w: Worker, fraction: float, text: str) -> None:
        if w is self.worker:
            self.progress.emit(fraction, text)

    def _finished(self, w: Worker, opts: CompareOptions, index: int | None, result: ComparisonResult) -> None:
        if w is not self.worker:
            return
        if index is None:
            self.set_result(result, opts)
        else:
            self.sample = SampleRun(index, result)
            self.sample_changed.emit(self.sample)

    def _failed(self, w: Worker, msg: str) -> None:
        if w is self.worker:
            self.failed.emit(msg)

    def _cancelled(self, w: Worker) -> None:
        if w is self.worker:
            self.cancelled.emit()

    def _done(self, w: Worker) -> None:
        if w is self.worker:
            self.worker = None
            self.finished.emit()
