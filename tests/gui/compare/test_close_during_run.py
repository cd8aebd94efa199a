"""Closing the window while a comparison runs ends cleanly (issue 35, item 6): it printed a
traceback ('ForkServerProcess' object has no attribute '_sentinel') when the interpreter's exit
closed the worker process under the thread still reading from it. Now the window cancels its
work and waits for it (the run stops within the worker's grace period), and a failure of work
that was already cancelled is its cancellation, never an "internal error" with a traceback."""

from __future__ import annotations

import logging

from inspector.core.compare.comparison import CompareOptions
from inspector.core.runtime.worker import close_default_worker
from inspector.core.samples.settings import SampleSettings
from inspector.gui.workers import Worker
from tests.helpers.gui_helpers import open_wait


def test_closing_the_window_during_a_run_stops_it_without_a_traceback(qtbot, window, example_pair, caplog):
    fa, fb = (str(p) for p in example_pair)
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    opts = CompareOptions(samples=SampleSettings(count=400, seed=1))
    outcome: list[str] = []
    w = window.features.compare.run(opts)
    w.failed.connect(lambda m: outcome.append(f"failed {m}"))
    w.cancelled.connect(lambda: outcome.append("cancelled"))
    qtbot.waitUntil(lambda: window.features.compare.running and w._cancel is not None, timeout=10_000)
    qtbot.wait(300)  # the worker process is computing
    assert not w.is_done
    with caplog.at_level(logging.ERROR):
        window.close()  # what the user does; the interpreter's exit then closes the worker process,
        close_default_worker()  # here at once, under the thread still reading from it (the race)
        assert Worker.shutdown(15_000)  # what `run_app` does after the event loop returns
        qtbot.wait(50)
    assert w.is_done and w.result is None
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]
    assert w.error is None, w.error  # cancelled, not "internal error: AttributeError ..."
