"""Pair sanity in the GUI: a swapped pair is swapped back with a note, a pair that is not twins
gets a warning with the figures, a twin shows nothing; the random-inputs banner; the bundled
example opens with its inputs (accuracy shows) and the inputs are remembered per pair."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from inspector.core.compare.pair_check import check_pair_files
from inspector.core.samples.settings import ALL
from inspector.gui.main_window import MainWindow
from inspector.paths import example_inputs
from tests.helpers.gui_helpers import WAIT_MS, click_enabled, open_wait
from tests.helpers.pair_fixtures import PairFixtures
from tests.helpers.paths import REPO

RUN_MS = 60_000


@pytest.fixture(scope="module")
def pairs() -> dict[str, Path]:
    return PairFixtures(REPO / ".fixture-cache").models()


def _open_pair(qtbot, win, a, b) -> None:
    open_wait(qtbot, win, "A", a)
    open_wait(qtbot, win, "B", b)
    checker = win.features.pair.checker
    qtbot.waitUntil(lambda: checker.worker is None and checker.check is not None, timeout=WAIT_MS)


def _run(qtbot, win, **source):
    panel = win.features.compare_features.inputs
    if source.get("random"):
        panel.source.setCurrentIndex(panel.source.findData("random"))
        panel.count.setValue(4)
    with qtbot.waitSignal(win.features.compare.result_changed, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, panel.run_button)
    return blocker.args[0]


def test_swapped_pair_is_swapped_back_with_a_note(qtbot, window, example_pair):
    f, q = (str(p) for p in example_pair)
    _open_pair(qtbot, window, q, f)  # the quantized file opened as A
    c = window.controller
    assert c.models["A"].path == f and c.models["B"].path == q
    assert window.panes["A"].title.text() == "<b>A · float reference</b>"
    assert window.panes["A"].info.text().startswith("example_float.tflite")
    assert window.panes["B"].info.text().startswith("example_int8.tflite")
    banner = window.features.pair.pair_banner
    assert banner.isVisible()
    assert banner.text.startswith("Models swapped: example_int8.tflite was opened as A but is the quantized model")
    assert "A · float reference is now example_float.tflite" in banner.text
    assert "Not a float model" not in banner.text  # the swapped-back pair is a twin
    check = window.features.pair.checker.check
    assert check is not None and not check.swapped and check.related
    assert window.features.review.audit_view.summary.text().count("example_int8.tflite") >= 1  # the quantized one is audited
    assert "example_float" not in window.features.review.audit_view.summary.text()
    assert c.pairing is not None and len(c.pairing.ops) >= 10


def test_unrelated_pair_warns_with_figures(qtbot, window, pairs):
    _open_pair(qtbot, window, pairs["seed21_float"], pairs["seed22_int8"])
    want = check_pair_files(pairs["seed21_float"], pairs["seed22_int8"])
    assert not want.related and want.disagree_share is not None
    banner = window.features.pair.pair_banner
    assert banner.isVisible()
    text = banner.text
    assert text.startswith("Not a float model and its quantized twin:")
    share = f"{want.disagree_share:.0%} of the paired weights disagree by more than 2 quantization steps"
    assert share in text and want.reasons[0] in text
    assert f"(median {want.median_step_error:.1f}, p99 {want.p99_step_error:.1f} steps;" in text
    assert f"Pairing covers {want.op_coverage:.0%} of B's ops" in text
    assert f"{want.elements_compared:,} weights compared" in text
    assert "Models swapped" not in text
    assert window.controller.models["A"].path == str(pairs["seed21_float"])  # not swapped
    result = _run(qtbot, window, random=True)
    assert result.pair_check is not None and not result.pair_check.related
    assert "not twins" in window.features.compare_features.summary.text  # the results are marked


def test_twin_pair_shows_nothing(qtbot, window, pairs):
    _open_pair(qtbot, window, pairs["seed21_float"], pairs["seed21_int8"])
    assert window.features.pair.checker.check.related
    assert not window.features.pair.pair_banner.isVisible()
    # then an unrelated B: warning; back to the twin: gone
    open_wait(qtbot, window, "B", pairs["seed22_int8"])
    qtbot.waitUntil(window.features.pair.pair_banner.isVisible, timeout=WAIT_MS)
    open_wait(qtbot, window, "B", pairs["seed21_int8"])
    qtbot.waitUntil(lambda: not window.features.pair.pair_banner.isVisible(), timeout=WAIT_MS)


def test_example_first_run_uses_bundled_inputs_and_random_banner(qtbot, window, example_pair):
    _open_pair(qtbot, window, *example_pair)
    panel = window.features.compare_features.inputs
    assert window.state.samples.source == str(example_inputs()) and window.state.samples.count is ALL
    assert panel.source.currentData() == "file" and panel.path.text() == str(example_inputs())
    result = _run(qtbot, window)
    assert not result.samples_are_random and result.samples == len(np.load(example_inputs())["labels"])
    assert result.inputs.endswith("example_inputs.npz") or "example_inputs.npz" in result.inputs
    task = window.features.compare.task
    assert task is not None and task.float_accuracy is not None and task.per_class
    assert "accuracy" in window.features.compare_features.summary.text
    assert not window.features.pair.random_banner.isVisible()
    assert not window.features.pair.pair_banner.isVisible()  # the example is a true twin

    result = _run(qtbot, window, random=True)
    assert result.samples_are_random
    banner = window.features.pair.random_banner
    assert banner.isVisible() and banner.text.startswith("These results come from random inputs")
    # The comparison dropped while the pair stays open (a new version of B arriving): the notice
    # stays until the next result says (it used to go and come back, moving the panes twice).
    window.features.compare.set_result(None)
    assert banner.isVisible()
    window.features.compare.set_result(result)
    panel.source.setCurrentIndex(panel.source.findData("file"))
    panel.path.setText(str(example_inputs()))
    panel.path.editingFinished.emit()
    _run(qtbot, window)
    assert not banner.isVisible()


def test_inputs_remembered_per_pair(qtbot, window, settings, example_pair, pairs, tmp_path):
    import numpy as np

    _open_pair(qtbot, window, pairs["seed21_float"], pairs["seed21_int8"])
    npz = tmp_path / "mine.npz"
    np.savez(npz, image=np.zeros((3, 32, 32, 3), np.float32))
    panel = window.features.compare_features.inputs
    panel.source.setCurrentIndex(panel.source.findData("file"))
    panel.path.setText(str(npz))
    panel.path.editingFinished.emit()
    panel.seed.setValue(5)
    assert window.state.samples.source == str(npz)

    # another pair: the example comes with its inputs, its own choice is remembered
    _open_pair(qtbot, window, *example_pair)
    assert window.state.samples.source == str(example_inputs())
    panel.source.setCurrentIndex(panel.source.findData("random"))
    panel.count.setValue(3)
    assert window.state.samples.source is None

    # the first pair again: its file and seed are back
    _open_pair(qtbot, window, pairs["seed21_float"], pairs["seed21_int8"])
    s = window.state.samples
    assert (s.source, s.seed) == (str(npz), 5)
    assert panel.path.text() == str(npz) and panel.seed.value() == 5

    # a new window on the same settings: the example pair reopens with random, 3 samples
    win2 = MainWindow(settings=settings)
    qtbot.addWidget(win2)
    _open_pair(qtbot, win2, *example_pair)
    s2 = win2.state.samples
    assert s2.source is None and s2.count == 3
    assert win2.features.compare_features.inputs.source.currentData() == "random"


def test_file_menu_opens_the_example_with_its_inputs(qtbot, window, example_pair):
    window.state.set_options(window.state.options)  # nothing chosen yet
    assert len(window.features.pair.open_example()) == 1  # one worker opens both: one pair change (issue 35, item 9)
    want = tuple(str(p) for p in example_pair)
    qtbot.waitUntil(lambda: window.state.paths() == want, timeout=WAIT_MS)
    assert window.state.samples.source == str(example_inputs())
    assert window.features.pair.act_example.text() == "Open the &example pair"
