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


def test_a_workers_long_loop_waits_while_the_window_handles_an_event(window, qtbot):
    """Core's long loops give way (`core.progress.paced`) while the GUI thread's event loop is
    awake: a Worker thread reading a model beside a 60 ms handler made that handler take about
    twice its time (the threads took the interpreter lock in turns every 0.05 ms)."""
    import threading
    import time

    from PySide6.QtCore import QTimer

    from inspector.core.progress import EVERY, paced
    from inspector.gui.workers import Worker

    done = threading.Event()
    count = [0]

    def loop() -> int:
        for i in paced(range(10**9)):
            count[0] = i
            if done.is_set():
                break
        return 0

    w = Worker(loop).start()
    qtbot.waitUntil(lambda: count[0] > 10 * EVERY, timeout=10_000)  # running, between the window's turns
    seen: list[int] = []

    def handler() -> None:  # 60 ms of the window's own work, in Python
        before = count[0]
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 0.06:
            sum(range(1000))
        seen.append(count[0] - before)

    QTimer.singleShot(0, handler)
    qtbot.waitUntil(lambda: bool(seen), timeout=5000)
    done.set()
    qtbot.waitUntil(lambda: w.is_done, timeout=10_000)
    assert seen[0] <= 2 * EVERY, seen  # the loop stopped at its next checkpoint (it ran freely before)


def test_automatic_collection_turned_back_on_is_turned_off_again(window, qtbot):
    """Code that turns automatic collection back on (a helper restoring "on": the watchdog's
    `machine_scale` did, and the next GUI test deadlocked in a Worker thread's collection) is
    undone at the collector's next check."""
    assert not gc.isenabled()
    gc.enable()
    try:
        qtbot.waitUntil(lambda: not gc.isenabled(), timeout=3000)
    finally:
        gc.disable()
