"""Issue 27, item 9: a saved session keeps the Keras / QAT work. It stores the Keras source of
model A (the .h5), not only its cached float twin, and the Keras-vs-B table; reopening it in a
new window shows the same table, and reopens the .h5 itself when the cached twin is gone."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

from inspector.core.state.session import load_session
from inspector.gui.main_window import MainWindow

WAIT = 180_000


def _window(qtbot, tmp_path, name: str) -> MainWindow:
    win = MainWindow(settings=QSettings(str(tmp_path / f"{name}.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.features.keras.cache_root = str(tmp_path / f"twins-{name}")
    win.show()
    return win


def _restored(qtbot, win, path, want: dict) -> None:
    with qtbot.waitSignal(win.features.session.restored, timeout=WAIT):
        assert win.features.session.open(path)
    qtbot.waitUntil(lambda: win.features.keras.comparison is not None, timeout=60_000)
    assert Path(win.features.keras.source["path"]).resolve() == Path(want["source"]).resolve()
    assert win.features.keras.comparison == want["comparison"]
    assert win.features.keras.view.layer_table.rowCount() == len(want["comparison"]["layers"])
    assert win.features.keras.view.layer_table.item(3, 2).text() == "quant_probs"
    assert win.features.keras.view.qat_table.rowCount() >= 4  # the QAT ranges are back beside B


def test_session_keeps_the_keras_source_and_table(qtbot, window, keras_models, tmp_path):
    h5, b_path = keras_models / "mlp_qat.h5", keras_models / "mlp_qat_int8.tflite"
    window.features.keras.cache_root = str(tmp_path / "twins")
    w = window.open_model("A", h5)
    qtbot.waitUntil(lambda: w.is_done, timeout=WAIT)
    qtbot.waitUntil(lambda: window.controller.models["A"] is not None and window.features.keras.source is not None, timeout=WAIT)
    window.open_model("B", b_path)
    qtbot.waitUntil(lambda: window.features.keras.source["info"].get("tflite") == str(b_path), timeout=WAIT)
    cw = window.features.keras.compare()
    qtbot.waitUntil(lambda: cw.is_done, timeout=WAIT)
    assert cw.error is None, cw.error
    # is_done is set on the worker thread; the result reaches the feature by a queued signal after it
    qtbot.waitUntil(lambda: window.features.keras.comparison is not None, timeout=WAIT)
    table = window.features.keras.comparison
    path = tmp_path / "keras.tqi.json"
    window.features.session.save(path)

    saved = load_session(path)
    twin = window.controller.models["A"].path
    assert saved["models"]["float"]["path"] == str(Path(twin).resolve())  # A is the twin (the panes' structure)
    assert Path(saved["keras"]["source"]).resolve() == h5.resolve() and saved["keras"]["float_twin"] == str(Path(twin).resolve())
    assert saved["keras"]["comparison"] == table

    want = {"source": str(h5.resolve()), "comparison": table}
    _restored(qtbot, _window(qtbot, tmp_path, "second"), path, want)

    Path(twin).unlink()  # the cache was cleared (or another machine): the .h5 itself is reopened
    third = _window(qtbot, tmp_path, "third")
    _restored(qtbot, third, path, want)
    assert Path(third.controller.models["A"].path).exists() and third.banner.isHidden()
