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


def test_no_collection_while_a_workers_result_is_handed_over(qtbot):
    """`workers.guarded` (every Worker signal's handler) holds cyclic collections off: one that
    comes due within the handler (its allocations) runs after it, in a turn of its own."""
    from PySide6.QtCore import QObject

    from inspector.gui.workers import guarded

    owner = QObject()
    seen: list[tuple[bool, int]] = []
    collected: list[int] = []

    def on_gc(phase: str, info: dict) -> None:
        if phase == "stop":
            collected.append(info["generation"])

    def handler() -> None:
        inner = guarded(owner, lambda: seen.append((gc.isenabled(), 0)))
        for _ in range(20_000):  # enough cyclic garbage for several collections
            a: list = []
            a.append(a)
        seen.append((gc.isenabled(), len(collected)))
        inner()  # nested: still held

    assert gc.isenabled()
    gc.callbacks.append(on_gc)
    try:
        guarded(owner, handler)()
        for _ in range(2_000):
            b: list = []
            b.append(b)
    finally:
        gc.callbacks.remove(on_gc)
    assert seen[0] == (False, 0) and seen[1][0] is False  # none within the handler (nested: still held)
    assert gc.isenabled() and len(collected) > 0  # back on: the one due ran after
