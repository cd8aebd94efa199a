"""Work that follows an event in later turns of the event loop, one piece per turn.

A comparison result arriving on a 1,500-op model starts three pieces of work of 30-50 ms each
besides the first drawing: the layer plot's series, the versions' bookkeeping and delta, and so
on. Each on its own `QTimer.singleShot(1, ...)` fired in the same pass of the timers, back to
back, so the event loop was held for all of them at once (no input, no paint, no other timer in
between). `later(owner, key, fn)` queues them instead: one runs per turn, on a 1 ms timer started
after the previous one ended, so whatever else is due (a click, a paint, a watchdog's tick) comes
between them.

A piece is keyed by its owner and a name: asking again before it ran keeps its place and runs the
newest `fn` once (a plot asked to redraw twice draws once). A deleted owner's pieces are dropped.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer
from shiboken6 import isValid


class TurnQueue(QObject):
    """The queue `later` uses (one per application)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pieces: dict[tuple[int, str], tuple[QObject, Callable[[], object]]] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(1)  # a timer, not a posted call: posted calls all run in one pass
        self._timer.timeout.connect(self._run_one)

    def later(self, owner: QObject, key: str, fn: Callable[[], object]) -> None:
        self._pieces[(id(owner), key)] = (owner, fn)
        if not self._timer.isActive():
            self._timer.start()

    def pending(self, owner: QObject, key: str) -> bool:
        return (id(owner), key) in self._pieces

    def now(self, owner: QObject, key: str) -> None:
        """Run the piece keyed (owner, key) here, if one is queued (a reader needs its outcome now)."""
        piece = self._pieces.pop((id(owner), key), None)
        if piece is not None and isValid(piece[0]):
            piece[1]()

    def _run_one(self) -> None:
        if not self._pieces:
            return
        k = next(iter(self._pieces))
        owner, fn = self._pieces.pop(k)
        try:
            if isValid(owner):
                fn()
        finally:
            if self._pieces:
                self._timer.start()


_queue: TurnQueue | None = None


def queue() -> TurnQueue:
    global _queue
    if _queue is None or not isValid(_queue):
        _queue = TurnQueue()
    return _queue


def later(owner: QObject, key: str, fn: Callable[[], object]) -> None:
    """Run `fn` in a later turn of the event loop, one queued piece per turn (see the module)."""
    queue().later(owner, key, fn)


def now(owner: QObject, key: str) -> None:
    """Run the queued piece (owner, key) now, if there is one: for a reader of what it makes."""
    queue().now(owner, key)
