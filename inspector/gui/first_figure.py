"""A timing marker for benchmarks: with TFLITE_INSPECTOR_FIRST_FIGURE=PATH set, the app writes the
wall-clock time (`time.time()`, seconds) into PATH once the first comparison figure has been painted
(tests/perf/bench_gui_launch.py measures launch to the example's first figure with it). Unset (the
normal case), `watch` does nothing."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget

ENV = "TFLITE_INSPECTOR_FIRST_FIGURE"


class _PaintWatch(QObject):
    def __init__(self, widget: QWidget, drawn: Callable[[], bool], path: str) -> None:
        super().__init__(widget)
        self.drawn, self.path = drawn, path

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Paint and self.drawn():
            obj.removeEventFilter(self)
            # after this paint event: the figure is on the screen (the backing store) when the timer fires
            from PySide6.QtCore import QTimer

            QTimer.singleShot(0, self._write)
        return False

    def _write(self) -> None:
        from inspector.core.writing import atomic_write_text

        atomic_write_text(self.path, f"{time.time():.6f}\n")


def watch(widget: QWidget, drawn: Callable[[], bool]) -> None:
    """Write the marker after the first paint of `widget` at which `drawn()` holds (only when the
    environment asks for it)."""
    path = os.environ.get(ENV)
    if path:
        widget.installEventFilter(_PaintWatch(widget, drawn, path))
