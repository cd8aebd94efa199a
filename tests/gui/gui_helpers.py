"""Helpers shared by the GUI tests."""

from __future__ import annotations

WAIT_MS = 20_000


def open_wait(qtbot, win, slot: str, path) -> None:
    """Open a model in the background and wait for its worker to deliver it (or fail)."""
    w = win.open_model(slot, path)
    with qtbot.waitSignal(w.done, timeout=WAIT_MS):
        pass
