"""Choosing an .npz (or a folder) uses all of it unless the user set a count: it kept the
default Count = 8 of random samples (issue 27 §12)."""

from __future__ import annotations

from PySide6.QtWidgets import QFileDialog

from inspector.core.samples.settings import ALL, DEFAULT_COUNT
from inspector.gui.compare.inputs_panel import InputsPanel


def _choose(panel: InputsPanel, monkeypatch, path: str) -> None:
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (path, "")))
    panel.source.setCurrentIndex(panel.source.findData("file"))
    panel.choose_path()


def test_a_chosen_file_is_used_whole(qtbot, monkeypatch, tmp_path):
    panel = InputsPanel()
    qtbot.addWidget(panel)
    assert panel.count.value() == DEFAULT_COUNT
    _choose(panel, monkeypatch, str(tmp_path / "x.npz"))
    assert panel.sample_settings().count is ALL and panel.pending_source() == str(tmp_path / "x.npz")


def test_a_count_the_user_set_is_kept(qtbot, monkeypatch, tmp_path):
    panel = InputsPanel()
    qtbot.addWidget(panel)
    panel.count.setValue(5)
    _choose(panel, monkeypatch, str(tmp_path / "x.npz"))
    assert panel.sample_settings().count == 5
