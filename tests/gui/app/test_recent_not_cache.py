"""Open recent lists the files the user opened, not the app's own cache files (requantized
versions, Keras models' float twins), which it listed before (issue 27 §12)."""

from __future__ import annotations

from PySide6.QtCore import QSettings

from inspector.gui.recent import RecentFiles


def test_cache_files_are_not_recent(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    recent = RecentFiles(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    user = tmp_path / "work" / "model.tflite"
    twin = tmp_path / "cache" / "tflite-inspector" / "keras-twins" / "abc" / "model_float.tflite"
    version = tmp_path / "cache" / "tflite-inspector" / "versions" / "x" / "v1.tflite"
    for p in (user, twin, version):
        p.parent.mkdir(parents=True)
        p.write_bytes(b"x")
        recent.add("A", str(p))
    assert recent.entries() == [("A", str(user.resolve()))]
    assert recent.last_dir == str(user.parent.resolve())
