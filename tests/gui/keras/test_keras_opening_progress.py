"""Issue 29 §5 in the GUI: while a Keras model converts, pane A says what is happening (it showed
"No model in A" for 10-30 s); a second opening of the same content (a copy elsewhere) comes from
the twin cache without converting."""

from __future__ import annotations

import shutil

WAIT = 180_000


def _open(qtbot, window, path):
    seen: list[str] = []
    w = window.open_model("A", path)
    w.progress.connect(lambda _f, _t: seen.append(window.panes["A"].placeholder.text()))
    qtbot.waitUntil(lambda: w.is_done, timeout=WAIT)
    assert w.error is None, w.error
    qtbot.waitUntil(lambda: window.controller.models["A"] is not None and window.features.keras.source is not None, timeout=WAIT)
    return seen


def test_pane_a_says_what_the_conversion_does_and_the_cache_serves_a_copy(qtbot, window, keras_models, tmp_path):
    window.features.keras.cache_root = str(tmp_path / "twins")
    seen = _open(qtbot, window, keras_models / "mlp_qat.h5")
    assert seen and all(s.startswith("Opening the Keras model mlp_qat.h5") for s in seen), seen
    steps = [s.split("\n\n", 1)[1] for s in seen]
    assert "Converting the float twin." in steps and "Converting the int8 twin." in steps, steps
    assert "No model in A" not in " ".join(seen)
    assert window.panes["A"].placeholder.text() == window.panes["A"].empty_text  # restored once open
    (entry,) = (tmp_path / "twins").iterdir()

    copy = tmp_path / "elsewhere" / "renamed_qat.h5"
    copy.parent.mkdir()
    shutil.copy2(keras_models / "mlp_qat.h5", copy)
    window.controller.close_model("A") if hasattr(window.controller, "close_model") else None
    window.features.keras.source = None
    seen = _open(qtbot, window, copy)
    assert not [s for s in seen if "Converting" in s], seen
    assert [p.name for p in (tmp_path / "twins").iterdir()] == [entry.name]
    assert window.features.keras.source["path"] == str(copy) and window.features.keras.source["info"]["path"] == str(copy)
