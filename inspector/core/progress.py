"""The one progress / cancel protocol of long work (in the spirit of Orange's `TaskState`).

Long functions take `task: TaskState | None = None` and call `task.report(fraction, message)`
(fraction in [0, 1], or None for "busy") and `task.check()` (raises `Cancelled` once the
caller cancelled); `task.cancelled` reads the flag without raising. `NO_TASK` is the no-op
default. `task.span(lo, hi)` hands a stage its own 0..1 mapped onto [lo, hi] of the whole.
The worker process (`runtime/worker.py`) forwards reports over its pipe and the cancel flag
back; the GUI adapts it once (`gui/workers.py`).

Giving way (`give_way`, `paced`, `Gate`): background work that gives way to the thread a user is
waiting on. Threads of one process share the interpreter lock. While a background thread runs Python (a
model being read, an audit, a graph being built), a thread the user waits on (a window's) gets
the lock only every few microseconds and runs at about half its speed: on a 1,500-op model a
60 ms piece of a window's work took 110-200 ms. Long loops of core call `give_way()` every so
often (`paced` wraps an iterable); an application that has such a thread installs a `Gate`
(`set_gate`) that, while that thread is busy, holds the caller until it is idle again (at most
`Gate.max_wait_s` per busy period, so no work starves when that thread is busy for long). With no
gate installed (the command line, tests of core), `give_way` costs one global lookup.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

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


# ------------------------------------------------------------------ giving way
T = TypeVar("T")

EVERY = 32  # items of a loop between two calls of `give_way` (`paced`): well under a millisecond


class Gate:
    """Busy/idle state of one thread (the owner), as its event loop reports it: `busy()` when it
    handles an event, `idle()` when it is about to wait for more. Other threads wait in
    `give_way` while it is busy."""

    max_wait_s = 0.1

    def __init__(self) -> None:
        self.owner = threading.get_ident()
        self._idle = threading.Event()
        self._idle.set()
        self._period = 0  # busy periods so far
        self._waited = -1  # the busy period some thread already waited out in full

    def busy(self) -> None:
        self._period += 1
        self._idle.clear()

    def idle(self) -> None:
        self._idle.set()

    def is_idle(self) -> bool:
        return self._idle.is_set()

    def give_way(self) -> None:
        if self._idle.is_set() or threading.get_ident() == self.owner:
            return
        period = self._period
        if period == self._waited:
            return  # a long busy period (the owner waits for something else): go on
        if not self._idle.wait(self.max_wait_s):
            self._waited = period


_gate: Gate | None = None


def set_gate(gate: Gate | None) -> None:
    """The gate `give_way` consults (None: none)."""
    global _gate
    _gate = gate


def give_way() -> None:
    """Wait while the gated thread is busy (see the module); nothing when no gate is set."""
    g = _gate
    if g is not None:
        g.give_way()


def paced(items: Iterable[T], every: int = EVERY) -> Iterator[T]:
    """`items`, calling `give_way()` before every `every`-th one."""
    for i, item in enumerate(items):
        if i % every == 0 and _gate is not None:
            _gate.give_way()
        yield item
