"""Runtime parity of model B: runs `core.compare.runtime_parity.compare_runtimes` in the worker
process (from a `Worker` thread, with progress and Cancel) on the samples the inputs panel
describes; the result lives in the app state (`AppState.parity`, saved in sessions), which drops
it when another model B opens."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from inspector.core.compare.parity_result import ParityOptions, RuntimeParityResult
from inspector.core.progress import TaskState
from inspector.core.runtime.worker import run_isolated
from inspector.gui.protocols import ModelsController
from inspector.gui.relay import on_event
from inspector.gui.workers import Worker, guarded


def _parity_job(quant_path: str, options: ParityOptions, task: TaskState) -> RuntimeParityResult:
    from inspector.core.compare.runtime_parity import compare_runtimes

    return run_isolated(compare_runtimes, quant_path, options, task=task.span(0.0, 1.0, "Runtime parity: "),
                        step="running the model on both runtimes", models=(quant_path,))


class ParityController(QObject):
    started = Signal()
    progress = Signal(float, str)
    result_changed = Signal(object)  # RuntimeParityResult | None
    failed = Signal(str)
    cancelled = Signal()
    finished = Signal()

    def __init__(self, controller: ModelsController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.state = controller.state
        self.options: ParityOptions | None = None  # the options of the result (None: restored or none)
        self.worker: Worker | None = None
        on_event(self.state.parity_changed, self, self._state_changed)

    @property
    def result(self) -> RuntimeParityResult | None:
        return self.state.parity

    @property
    def running(self) -> bool:
        return self.worker is not None and not self.worker.is_done

    def parity_options(self, runtimes: tuple[str, str], threads: tuple[int, int]) -> ParityOptions:
        """Both sides on the samples of the inputs panel (the state's SampleSettings), on the
        chosen signature's subgraph (the one the comparison and the op indices address)."""
        st = self.controller.state
        return ParityOptions(runtimes=runtimes, threads=threads, samples=st.samples, signature=st.options.signature)

    def run(self, options: ParityOptions) -> Worker | None:
        model = self.controller.models["B"]
        if model is None:
            self.failed.emit("Open a quantized model (B) to compare runtimes on it.")
            return None
        if options.runtimes[0] == options.runtimes[1] and options.threads[0] == options.threads[1]:
            self.failed.emit("Both sides are the same: choose two runtimes or two thread counts.")
            return None
        self.cancel()
        w = Worker(_parity_job, model.path, options, wants_progress=True)
        self.worker = w
        w.progress.connect(guarded(self, lambda f, t: self.progress.emit(f, t) if w is self.worker else None))
        w.finished.connect(guarded(self, lambda r: self._finished(w, options, r)))
        w.failed.connect(guarded(self, lambda msg: self.failed.emit(msg) if w is self.worker else None))
        w.cancelled.connect(guarded(self, lambda: self.cancelled.emit() if w is self.worker else None))
        w.done.connect(guarded(self, lambda: self._done(w)))
        self.controller.run_task(w, f"Runtime parity of {Path(model.path).name}")
        self.started.emit()
        return w

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel()

    def _finished(self, w: Worker, options: ParityOptions, result: RuntimeParityResult) -> None:
        if w is self.worker:
            self.set_result(result, options)

    def _done(self, w: Worker) -> None:
        if w is self.worker:
            self.worker = None
            self.finished.emit()

    def set_result(self, result: RuntimeParityResult | None, options: ParityOptions | None = None) -> None:
        self.options = options if result is not None else None
        self.state.set_parity(result)

    def _state_changed(self, result: RuntimeParityResult | None) -> None:
        if result is None:
            self.options = None
        self.result_changed.emit(result)
