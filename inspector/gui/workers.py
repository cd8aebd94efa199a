"""Run a callable off the GUI thread: progress, cancel, result or a user-facing error.

With `wants_progress=True` the callable receives `task=` a `core.progress.TaskState` (the one
progress protocol; this module is the GUI's one adapter of it): `task.report(fraction, text)`
(fraction in [0, 1], or None for "busy") emits `progress`, and is also a cancellation point
that raises `Cancelled` once `Worker.cancel()` was called; `task.cancelled` reads the flag.
Passed on to `run_isolated(..., task=task)`, reports of the worker process arrive here too. `InspectorError`s become `failed(message)`; any other
exception becomes `failed("internal error: ...")` with the traceback logged, never a crash.

    w = Worker(load_model, path)
    w.finished.connect(guarded(self, on_model)); w.failed.connect(guarded(self, show_error))
    w.start()
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal
from shiboken6 import isValid

from inspector.core.errors import Cancelled, InspectorError
from inspector.core.progress import TaskState

log = logging.getLogger(__name__)


def guarded(owner: QObject, handler: Callable[..., Any]) -> Callable[..., None]:
    """`handler`, called only while `owner`'s Qt object exists. Connect a worker's signals
    through it: a lambda is never disconnected when its owner is deleted (a window closed while
    its work still runs), and a handler touching a deleted object raises in the event loop."""

    def call(*args: Any) -> None:
        if isValid(owner):
            handler(*args)

    return call


def _released(*_args: Any, **_kwargs: Any) -> None:
    """A released Worker's function (it ran; it is not run again)."""


class WorkerTask(TaskState):
    """The TaskState handed to the work function: reports become the Worker's `progress` signal."""

    def __init__(self, worker: Worker) -> None:
        super().__init__(self._emit, lambda: worker.is_cancelled)
        self._worker = worker

    def _emit(self, fraction: float | None, text: str) -> None:
        try:
            self._worker.progress.emit(-1.0 if fraction is None else float(fraction), text)
        except RuntimeError:  # the worker's Qt object is gone (shutting down): stop the work
            raise Cancelled() from None

    def cancel(self) -> None:
        self._worker.cancel()


class _Runnable(QRunnable):
    def __init__(self, worker: Worker) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._worker = worker

    def run(self) -> None:
        self._worker._run()


class Worker(QObject):
    """One unit of background work. Signals arrive on the GUI thread (queued connections)."""

    progress = Signal(float, str)  # fraction in [0, 1] or -1 for busy, text
    finished = Signal(object)  # the callable's return value
    failed = Signal(str)  # a message fit for the user (names the file and the problem)
    cancelled = Signal()
    done = Signal()  # after exactly one of finished / failed / cancelled

    _alive: set[Worker] = set()  # keeps running workers referenced until they are done

    def __init__(self, fn: Callable[..., Any], *args: Any, wants_progress: bool = False, **kwargs: Any) -> None:
        super().__init__()
        self._fn, self._args, self._kwargs = fn, args, kwargs
        self._wants_progress = wants_progress
        self._cancel = threading.Event()
        self._finished_event = threading.Event()
        self.result: Any = None
        self.error: str | None = None

    @property
    def is_cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def is_done(self) -> bool:
        return self._finished_event.is_set()

    def cancel(self) -> None:
        """Ask the work to stop at its next progress call (its result is then discarded)."""
        self._cancel.set()

    def start(self, pool: QThreadPool | None = None) -> Worker:
        """Queue the work; it starts when the event loop next runs, so callers can still
        connect to its signals after start() returns without missing any."""
        Worker._alive.add(self)
        self.done.connect(self._ended)
        target = pool or QThreadPool.globalInstance()
        QTimer.singleShot(0, lambda: target.start(_Runnable(self)))
        return self

    def _ended(self) -> None:
        Worker._alive.discard(self)
        QTimer.singleShot(0, self._release)  # once every handler of `done` has run (they come after this one)

    def _release(self, keep_result: bool = False) -> None:
        """Drop the work's function, arguments and result, and every connection to its signals.
        A handler that names its worker (most do: `lambda r: self._finished(w, r)`) makes a cycle
        through Qt's connection, which Python's collector cannot see: every finished Worker kept
        its arguments, its result and what its handlers named, for good (a 1,500-op model per
        version opened, a graph and its 7,500 node styles per restyle: 55,000 objects more per
        Apply fix, and a full collection 48 -> 201 ms after four). `error` stays (handlers of
        `done` read it; `keep_result`: `run_here`'s caller may read the result)."""
        self._fn, self._args, self._kwargs = _released, (), {}
        if not keep_result:
            self.result = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a signal nobody connected to
            for signal in (self.progress, self.finished, self.failed, self.cancelled, self.done):
                try:
                    signal.disconnect()
                except (RuntimeError, TypeError):
                    pass

    @classmethod
    def shutdown(cls, timeout_ms: int = 5000) -> bool:
        """The app is closing: cancel every running worker and wait (up to `timeout_ms`) for the
        threads to end, before the interpreter's exit closes the worker process under them.
        True when they all ended."""
        for w in list(cls._alive):
            w.cancel()
        return QThreadPool.globalInstance().waitForDone(timeout_ms)

    def run_here(self) -> Worker:
        """Run synchronously on the calling thread (small jobs, tests, self-test); its handlers
        have run when it returns, and it lets go of them (`_release`)."""
        self._run()
        self._release(keep_result=True)
        return self

    def _run(self) -> None:
        try:
            if self.is_cancelled:  # cancelled before it started
                raise Cancelled()
            if self._wants_progress:
                out = self._fn(*self._args, task=WorkerTask(self), **self._kwargs)
            else:
                out = self._fn(*self._args, **self._kwargs)
            if self.is_cancelled:
                raise Cancelled()
        except Cancelled:
            self._finished_event.set()
            self._emit(self.cancelled)
        except InspectorError as e:
            self.error = str(e)
            self._finished_event.set()
            self._emit(self.failed, self.error)
        except Exception as e:
            if self.is_cancelled:  # stopped under it (the app closing closed the worker process): cancelled
                log.debug("cancelled work ended with %s: %s", type(e).__name__, e)
                self._finished_event.set()
                self._emit(self.cancelled)
                self._emit(self.done)
                return
            # a bug, not bad input: report it, keep the app alive
            log.exception("background task failed")
            self.error = f"internal error: {type(e).__name__}: {e}"
            self._finished_event.set()
            self._emit(self.failed, self.error)
        else:
            self.result = out
            self._finished_event.set()
            self._emit(self.finished, out)
        self._emit(self.done)

    @staticmethod
    def _emit(signal, *args) -> None:
        """Emit unless the Qt side is gone (the app is shutting down: nobody is listening)."""
        try:
            signal.emit(*args)
        except RuntimeError:
            pass
