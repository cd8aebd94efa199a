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
of them could no longer be collected, and they live for good anyway."""

from __future__ import annotations

import gc
import sys

GUI_SWITCH_INTERVAL_S = 0.00005


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
