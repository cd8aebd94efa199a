"""The GUI process's interpreter settings (`gui/interpreter.py`, issue 35): the GUI thread gets
the interpreter lock back within 0.05 ms while a Worker thread runs Python, and the app's window
freezes the objects made at start-up out of the cyclic collector, so a full collection walks
only what came after them."""

from __future__ import annotations

import gc
import sys

from inspector.gui.app import create_window
from inspector.gui.interpreter import GUI_SWITCH_INTERVAL_S


def test_every_window_switches_threads_often(window):
    assert abs(sys.getswitchinterval() - GUI_SWITCH_INTERVAL_S) < 1e-9 and GUI_SWITCH_INTERVAL_S < 0.005


def test_the_app_window_freezes_what_start_up_made(qtbot, settings):
    gc.unfreeze()
    try:
        win = create_window(settings=settings)
        qtbot.addWidget(win)
        frozen, left = gc.get_freeze_count(), len(gc.get_objects())
        assert frozen > 50_000 and left < frozen / 4, (frozen, left)  # the modules, classes, widgets: frozen
    finally:
        gc.unfreeze()  # the rest of this test process collects as before



def test_cyclic_collections_run_on_the_gui_thread_only(window, qtbot):
    """A Worker thread making cyclic garbage never collects it (a collection there could destroy a
    garbage widget off the GUI thread: a deadlock seen in CI); the GUI thread's timer does."""
    import threading
    import weakref

    from inspector.gui.workers import Worker

    class Cycle:
        pass

    main = threading.get_ident()
    threads: list[int] = []
    last: list[weakref.ref] = []

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            threads.append(threading.get_ident())

    def make_garbage() -> int:
        for _ in range(50_000):  # ~70 generation-0 thresholds' worth
            a = Cycle()
            a.me = a
        last.append(weakref.ref(a))
        return 0

    assert not gc.isenabled()  # every main window turns automatic collection off
    gc.callbacks.append(on_gc)
    try:
        w = Worker(make_garbage).start()
        qtbot.waitUntil(lambda: w.result is not None or bool(last), timeout=10_000)
        qtbot.waitUntil(lambda: bool(last) and last[0]() is None, timeout=10_000)  # collected, by the timer
    finally:
        gc.callbacks.remove(on_gc)
    assert threads and set(threads) == {main}, (len(threads), len(set(threads)))
