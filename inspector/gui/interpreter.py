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
never within a handler or a Worker.

Background threads give way. A Worker thread running Python took the lock from the GUI thread
every 0.05 ms, so whatever the window did meanwhile took about twice its CPU time (a 1,500-op
pair: 60 ms of a handler's CPU, 110-200 ms of the user's wait). Core's long loops call
`core.progress.give_way` every few dozen items; the window's gate (`give_way_to_the_window`)
holds them while the GUI thread handles events, so the window's work runs alone, and lets them go
on once it waits for events again (or after 0.1 s of one busy stretch): on a quiet machine,
opening the 1,500-op pair, longest wall-clock gap 100-200 -> 49-67 ms; Apply fix 108-157 -> 67-81."""

from __future__ import annotations

import gc
import sys

from pyqtgraph.util.garbage_collector import GarbageCollector
from PySide6.QtCore import QAbstractEventDispatcher, QCoreApplication, QEvent, QObject, Qt, QThread

from inspector.core.progress import Gate, set_gate

GUI_SWITCH_INTERVAL_S = 0.00005
COLLECT_CHECK_S = 1.0

_collector: _GuiCollector | None = None
_gate: Gate | None = None
_busy: _Busy | None = None


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


class _GuiCollector(GarbageCollector):
    """pyqtgraph's collector, turning automatic collection off again at each check: code that
    turned it back on (a library, a helper that restores "on") would let a Worker thread collect."""

    def check(self) -> None:
        gc.disable()
        super().check()


def collect_on_a_gui_timer() -> None:
    """Automatic cyclic collection off; the GUI thread collects on a timer instead (called by
    every main window, on the GUI thread; once per process)."""
    global _collector
    if _collector is None:
        _collector = _GuiCollector(interval=COLLECT_CHECK_S)


def collect_automatically_again() -> None:
    """Undo `collect_on_a_gui_timer` (a test process going on without windows): one collection
    here, on the calling (GUI) thread, then automatic collection as Python does it."""
    global _collector
    if _collector is not None:
        _collector.timer.stop()
        _collector = None
        gc.collect()
        gc.enable()


class _Busy(QObject):
    """Marks the gate busy at the first event the GUI thread handles after it waited (an
    application-wide event filter sees every event: a timer's, a Worker's queued signal, input,
    a paint). The dispatcher's `awake` cannot: under glib it comes after the events it woke for."""

    def __init__(self, gate: Gate) -> None:
        super().__init__()
        self.gate = gate

    def eventFilter(self, _obj: QObject, _event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if self.gate.is_idle():
            self.gate.busy()
        return False


def give_way_to_the_window() -> None:
    """Core's long loops in other threads wait while the GUI thread handles events (called by
    every main window, on the GUI thread; once per process)."""
    global _gate, _busy
    app = QCoreApplication.instance()
    dispatcher = QAbstractEventDispatcher.instance(QThread.currentThread())
    if _gate is not None or dispatcher is None or app is None:
        return
    gate = Gate()
    _busy = _Busy(gate)
    app.installEventFilter(_busy)
    dispatcher.aboutToBlock.connect(gate.idle, Qt.ConnectionType.DirectConnection)  # before it waits
    _gate = gate
    set_gate(gate)
