"""How the GUI process sets up the Python interpreter, for a window that never waits on it.

Thread switches. The GUI thread takes the interpreter lock anew for each call from Qt into
Python (a table cell's data, an item's paint, a slot), and a Worker thread running Python (a
model being read, a pair check, a graph being styled) made each of those wait up to Python's
switch interval (5 ms by default): painting a 1,500-row table of 9 columns beside one busy
thread took 173 ms at 5 ms, 22 ms at 0.2 ms (10 ms with no other thread). At 0.05 ms the longest
wall-clock gap while a 1,500-op pair opens went from 255-291 to 137-165 ms (the GUI thread's own
CPU time unchanged). A busy thread loses nothing but the switches themselves (with nobody
waiting there is no switch).

The cyclic garbage collector. A full collection walks every container object and holds the
lock while it does: 90 ms with a 1,500-op pair and its comparison open, on whichever thread
triggers it (the GUI thread itself, or a Worker thread the GUI thread then waits for). The
objects the app has made once its window exists (modules, classes, the window's widgets:
125,000 of the 213,000) live as long as the process, so the app freezes them out of collection:
a full collection then took 16-21 ms. Freed by reference counting as before; only a cycle made
of them could no longer be collected, and they live for good anyway.

Collections on the GUI thread only. A cyclic collection runs on whichever thread's allocation
triggers it, and destroys the Qt objects in the cycles it frees there: a Worker thread that
destroyed a garbage widget held Qt's connection lock in `~QObject` while it waited for the
interpreter lock, which the GUI thread held while it waited for that connection lock (a
deadlock, seen in CI once finished Workers let go of their windows). So the GUI process turns
automatic collection off and collects on a GUI-thread timer, by pyqtgraph's `GarbageCollector`
(the generations' own thresholds, checked every second): in a turn of the event loop of its own,
never within a handler or a Worker."""

from __future__ import annotations

import gc
import sys

from pyqtgraph.util.garbage_collector import GarbageCollector

GUI_SWITCH_INTERVAL_S = 0.00005
COLLECT_CHECK_S = 1.0

_collector: GarbageCollector | None = None


def switch_threads_often() -> None:
    """The GUI thread's turn comes within `GUI_SWITCH_INTERVAL_S` while Workers run Python
    (called by every main window: the GUI process's setting)."""
    sys.setswitchinterval(GUI_SWITCH_INTERVAL_S)


def freeze_startup_objects() -> None:
    """Collect once, then keep every object made so far out of later collections (called by
    the app once its window is built; not by a window a test makes, whose process goes on to
    make and drop many windows)."""
    gc.collect()
    gc.freeze()


def collect_on_gui_thread() -> None:
    """Automatic cyclic collection off; the GUI thread collects on a timer instead (called by
    every main window, on the GUI thread; once per process)."""
    global _collector
    if _collector is None:
        _collector = GarbageCollector(interval=COLLECT_CHECK_S)


def collect_automatically_again() -> None:
    """Undo `collect_on_gui_thread` (a test process going on without windows): one collection
    here, on the calling (GUI) thread, then automatic collection as Python does it."""
    global _collector
    if _collector is not None:
        _collector.timer.stop()
        _collector = None
        gc.collect()
        gc.enable()
