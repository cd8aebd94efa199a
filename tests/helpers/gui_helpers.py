"""Helpers shared by the GUI tests."""

from __future__ import annotations

WAIT_MS = 20_000


def open_wait(qtbot, win, slot: str, path) -> None:
    """Open a model in the background and wait for its worker to deliver it (or fail)."""
    w = win.open_model(slot, path)
    with qtbot.waitSignal(w.done, timeout=WAIT_MS):
        pass


def click_enabled(qtbot, button, timeout: int = WAIT_MS) -> None:
    """Click `button` once it is enabled. A run's result arrives (queued from the worker thread)
    a moment before its `done`, which re-enables the Run buttons; a click on a disabled button
    is silently ignored, so clicking at once could wait forever for a run that never started."""
    from PySide6.QtCore import Qt

    qtbot.waitUntil(button.isEnabled, timeout=timeout)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def use_random_samples(win) -> None:
    """Choose random samples in the inputs panel (the bundled example pair opens with its .npz)."""
    panel = win.features.compare_features.inputs
    panel.source.setCurrentIndex(panel.source.findData("random"))


def choose_signature(qtbot, win, key: str) -> None:
    """Choose signature `key` in the chooser and wait until the panes show it."""
    combo = win.features.signature_features.chooser.combo
    i = combo.findData(key)
    assert i >= 0, [combo.itemData(k) for k in range(combo.count())]
    with qtbot.waitSignal(win.controller.signature_changed, timeout=5000):
        combo.setCurrentIndex(i)


def open_pair_checked(qtbot, win, a, b) -> None:
    """Open A and B and wait until the pair check of the new pair has finished."""
    open_wait(qtbot, win, "A", a)
    open_wait(qtbot, win, "B", b)
    checker = win.features.pair.checker
    qtbot.waitUntil(lambda: checker.worker is None and checker.check is not None, timeout=WAIT_MS)

