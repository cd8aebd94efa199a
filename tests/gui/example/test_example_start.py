"""Issue 29 §2 in the window: the empty window says how to open the example (File › Open the
example pair, drop targets), the menu action opens it, and a copy of the example pair in another
folder opens compared on the bundled inputs, as the installed one does."""

from __future__ import annotations

import shutil

import numpy as np

from inspector.gui.example.feature import AUTORUN_KEY
from inspector.paths import example_inputs, example_pair

RUN_MS = 120_000


def test_empty_window_says_how_to_open_the_example(window):
    for slot, pane in window.panes.items():
        text = pane.placeholder.text()
        assert f"No model in {slot}" in text and "Drop a .tflite" in text
        assert "File › Open the example pair" in text and "drop both files on the window" in text
        assert pane.placeholder.isVisible()
    assert "File › Open the example pair" in window.features.compare_features.summary.label.text()
    file_menu = window.ui.menu("File")
    assert any(a.text().replace("&", "") == "Open the example pair" for a in file_menu.actions())


def test_the_menu_action_opens_the_example_compared(qtbot, window):
    window.settings.setValue(AUTORUN_KEY, True)
    act = next(a for a in window.ui.menu("File").actions() if a.text().replace("&", "") == "Open the example pair")
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=RUN_MS, check_params_cb=lambda r: r is not None) as blocker:
        act.trigger()
    result = blocker.args[0]
    assert [str(p) for p in example_pair()] == [window.controller.models[s].path for s in "AB"]
    assert result.isolated and result.samples == len(np.load(example_inputs())["labels"])


def test_a_copy_of_the_example_opens_compared_on_its_inputs(qtbot, window, tmp_path):
    window.settings.setValue(AUTORUN_KEY, True)
    for p in (*example_pair(), example_inputs()):
        shutil.copy(p, tmp_path / p.name)
    fa, fb = (str(tmp_path / p.name) for p in example_pair())
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=RUN_MS, check_params_cb=lambda r: r is not None) as blocker:
        window.open_files([fa, fb], "A")
    result = blocker.args[0]
    assert result.float_path == fa and result.quant_path == fb
    assert not result.samples_are_random and result.samples == len(np.load(example_inputs())["labels"])
    assert "example_inputs.npz" in result.inputs
    assert "accuracy" in window.features.compare_features.summary.text  # the labels came with the inputs
