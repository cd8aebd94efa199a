"""Closing the worker while another thread discards it (the app or a script exiting during a run):
`close` at exit raised "AttributeError: 'NoneType' object has no attribute 'is_alive'" in an
atexit callback, a traceback on the terminal."""

from __future__ import annotations

from inspector.core.runtime.worker import WorkerProcess


class _RacingProcess:
    """A process the other thread discards between two of `close`'s looks at it."""

    exitcode = 0

    def __init__(self, worker: WorkerProcess) -> None:
        self.worker, self.calls, self.closed = worker, 0, False

    def is_alive(self) -> bool:
        self.calls += 1
        if self.calls == 2:  # the other thread's _discard ran just now
            self.worker._proc = self.worker._conn = None
        return False

    def close(self) -> None:
        self.closed = True


class _Conn:
    def close(self) -> None:
        pass


def test_close_survives_a_concurrent_discard():
    w = WorkerProcess()
    w._proc, w._conn = _RacingProcess(w), _Conn()
    w.close()  # raised AttributeError before
    assert w._proc is None and w._conn is None
