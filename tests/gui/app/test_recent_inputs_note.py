"""Issue 27 §12: after a comparison ran on the 200 samples of a file, reopening that pair through
File › Open recent said "No samples chosen for this pair yet: starting from its default, 8 random
samples" (the note of the mixed pair passed on the way, first A then B). The inputs panel
describes the samples the pair uses: the file and its count."""

from __future__ import annotations

import shutil

import numpy as np
from PySide6.QtWidgets import QFileDialog

from tests.helpers.gui_helpers import click_enabled, open_pair_checked


def _recent(qtbot, window, slot: str, path) -> None:
    window._fill_recent()
    acts = [a for a in window.recent_menu.actions() if a.toolTip() == str(path) and slot in a.text()]
    assert acts, [a.text() for a in window.recent_menu.actions()]
    with qtbot.waitSignal(window.controller.pair_changed, timeout=20_000):
        acts[0].trigger()


def test_open_recent_back_to_a_pair_describes_its_samples(qtbot, window, example_pair, cnn_pair, tmp_path, monkeypatch):
    a, b = tmp_path / "digits_float.tflite", tmp_path / "digits_int8.tflite"  # not the bundled pair's own defaults
    shutil.copy(example_pair[0], a)
    shutil.copy(example_pair[1], b)
    open_pair_checked(qtbot, window, a, b)
    shape = window.controller.models["A"].main.tensors[window.controller.models["A"].main.inputs[0]].shape
    samples = tmp_path / "two_hundred.npy"
    np.save(samples, np.random.default_rng(0).random((200, *shape[1:]), dtype=np.float32))
    panel = window.features.compare_features.inputs
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(samples), "")))
    window.features.compare_features.choose_sample_file()
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=120_000):
        click_enabled(qtbot, panel.run_button)
    assert window.features.compare.result.samples == 200
    open_pair_checked(qtbot, window, *cnn_pair)  # another pair
    assert "No samples chosen" in panel.status.text()
    _recent(qtbot, window, "A", a)  # back through Open recent, one model at a time
    _recent(qtbot, window, "B", b)
    qtbot.wait(50)
    text = panel.status.text()
    assert "No samples chosen" not in text and "random" not in text, text
    assert str(samples.name) in text and "200" in text, text
    assert panel.sample_settings().source == str(samples)
