"""The benchmarks' marker (`gui.first_figure`): with TFLITE_INSPECTOR_FIRST_FIGURE set, the app
writes the wall-clock time once the watched figure was painted holding a result, not before;
unset, nothing is watched."""

from __future__ import annotations

import time

from PySide6.QtWidgets import QWidget

from inspector.gui import first_figure
from inspector.gui.app import make_app


def test_the_marker_is_written_after_the_first_paint_with_a_result(qtbot, tmp_path, monkeypatch):
    make_app()
    marker = tmp_path / "first-figure"
    monkeypatch.setenv(first_figure.ENV, str(marker))
    w = QWidget()
    qtbot.addWidget(w)
    drawn = {"result": False}
    first_figure.watch(w, lambda: drawn["result"])
    w.resize(200, 100)
    w.show()
    qtbot.waitExposed(w)
    w.repaint()
    qtbot.wait(50)
    assert not marker.exists()  # painted, but without a result yet
    t0 = time.time()
    drawn["result"] = True
    w.repaint()
    qtbot.waitUntil(marker.exists, timeout=5000)
    assert t0 <= float(marker.read_text()) <= time.time()


def test_nothing_is_watched_without_the_variable(qtbot, monkeypatch):
    make_app()
    monkeypatch.delenv(first_figure.ENV, raising=False)
    w = QWidget()
    qtbot.addWidget(w)
    first_figure.watch(w, lambda: True)
    assert not w.findChildren(first_figure._PaintWatch)
