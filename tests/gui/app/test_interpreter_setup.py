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

