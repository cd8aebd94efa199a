"""The one progress / cancel protocol of long work (in the spirit of Orange's `TaskState`).

Long functions take `task: TaskState | None = None` and call `task.report(fraction, message)`
(fraction in [0, 1], or None for "busy") and `task.check()` (raises `Cancelled` once the
caller cancelled); `task.cancelled` reads the flag without raising. `NO_TASK` is the no-op
default. `task.span(lo, hi)` hands a stage its own 0..1 mapped onto [lo, hi] of the whole.
The worker process (`runtime/worker.py`) forwards reports over its pipe and the cancel flag
back; the GUI adapts it once (`gui/workers.py`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from inspector.core.errors import Cancelled

ReportFn = Callable[[float | None, str], None]


class TaskState:
    """Progress sink and cancel flag. Subclass or pass `on_report` / `is_cancelled`."""

    def __init__(self, on_report: ReportFn | None = None, is_cancelled: Callable[[], bool] | None = None) -> None:
        self._on_report = on_report
        self._is_cancelled = is_cancelled
        self._cancel = threading.Event()

    def report(self, fraction: float | None, message: str = "") -> None:
        """Progress so far; also a cancellation point."""
        self.check()
        if self._on_report is not None:
            self._on_report(None if fraction is None else max(0.0, min(1.0, float(fraction))), message)

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set() or (self._is_cancelled is not None and self._is_cancelled())

    def check(self) -> None:
        if self.cancelled:
            raise Cancelled()

    def span(self, lo: float, hi: float, prefix: str = "") -> TaskState:
        """A stage covering [lo, hi] of this task: its fractions 0..1 are mapped there (and
        its messages prefixed with `prefix`)."""
        return _Span(self, lo, hi, prefix)


class _Span(TaskState):
    def __init__(self, parent: TaskState, lo: float, hi: float, prefix: str) -> None:
        super().__init__()
        self._parent, self._lo, self._hi, self._prefix = parent, lo, hi, prefix

    def report(self, fraction: float | None, message: str = "") -> None:
        f = None if fraction is None else self._lo + (self._hi - self._lo) * max(0.0, min(1.0, fraction))
        self._parent.report(f, self._prefix + message)

    def cancel(self) -> None:
        self._parent.cancel()

    @property
    def cancelled(self) -> bool:
        return self._parent.cancelled


class _NoTask(TaskState):
    def report(self, fraction: float | None, message: str = "") -> None:
        pass

    def cancel(self) -> None:  # the shared default is never cancelled
        pass

    @property
    def cancelled(self) -> bool:
        return False


NO_TASK: TaskState = _NoTask()


def as_task(task: TaskState | None) -> TaskState:
    return NO_TASK if task is None else task
