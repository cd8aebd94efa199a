"""Issue 35, item 9: the example pair opened again after another pair compares again (it said
"Press Run": the first opening's auto-run was remembered by file names), and while a comparison
runs, the one after Apply fix included, the summary strip says what it compares and how far,
never "Press Run"."""

from __future__ import annotations

from pathlib import Path

from inspector.gui.example.feature import AUTORUN_KEY, READY_TEXT, running_text
from inspector.paths import example_pair
from tests.helpers.gui_helpers import open_wait

RUN_MS = 120_000


def test_the_example_opened_again_after_another_pair_compares_again(qtbot, window, cnn_pair):
    window.settings.setValue(AUTORUN_KEY, True)
    compare, pair = window.features.compare, window.features.pair
    with qtbot.waitSignal(compare.started, timeout=20_000):
        pair.open_example()
    compare.cancel()  # the first opening's run started; its result is not what this test is about
    qtbot.waitUntil(lambda: not compare.running, timeout=RUN_MS)
    open_wait(qtbot, window, "B", cnn_pair[1])  # another pair
    assert compare.result is None
    with qtbot.waitSignal(compare.result_changed, timeout=RUN_MS, check_params_cb=lambda r: r is not None) as blocker:
        pair.open_example()
    assert [Path(p).name for p in (blocker.args[0].float_path, blocker.args[0].quant_path)] == ["example_float.tflite", "example_int8.tflite"]


def test_the_example_opened_file_by_file_compares_though_another_pair_was_being_compared(qtbot, window, cnn_pair):
    """Opening the example's A again beside another B starts that pair's comparison (the versions
    of an unchanged pair are compared when shown); the example's B then arrives: its own
    comparison replaces that one (it waited for it to end and said "Press Run")."""
    window.settings.setValue(AUTORUN_KEY, True)
    compare = window.features.compare
    open_wait(qtbot, window, "A", example_pair()[0])
    open_wait(qtbot, window, "B", cnn_pair[1])
    compare.run()  # the other pair's comparison, still running when the example's B opens
    assert compare.running_paths == window.state.paths()
    with qtbot.waitSignal(compare.result_changed, timeout=RUN_MS, check_params_cb=lambda r: r is not None) as blocker:
        open_wait(qtbot, window, "B", example_pair()[1])
    assert Path(blocker.args[0].quant_path).name == "example_int8.tflite" and blocker.args[0].isolated


def test_the_comparison_after_apply_fix_says_it_is_comparing(qtbot, diagnosed):
    win, _f, _q, op, _o, _r = diagnosed
    compare, label = win.features.compare, win.features.compare_features.summary.label
    seen: list[tuple[bool, str]] = []
    compare.started.connect(lambda: seen.append((compare.running, label.text())))
    compare.progress.connect(lambda *_a: seen.append((compare.running, label.text())))
    with qtbot.waitSignal(win.features.requantize.finished, timeout=RUN_MS) as blocker:
        assert win.features.diagnosis_features.apply_fix(op) is not None
    v1 = Path(blocker.args[0].path).name
    during = [text for running, text in seen if running]
    assert during, seen  # the comparison of the new version ran and was watched
    assert all(READY_TEXT not in t and f"Comparing {v1} with" in t for t in during), during
    assert during[0].endswith("(Cancel in the status bar)</i>")


def test_the_running_line_says_how_far():
    text = running_text(("/m/a.tflite", "/m/v1.tflite"), 0.42, "Comparing: isolated error")
    assert text == "Comparing v1.tflite with a.tflite… 42 % · Comparing: isolated error (Cancel in the status bar)"
    assert running_text(("/m/a.tflite", "/m/b.tflite")) == "Comparing b.tflite with a.tflite… (Cancel in the status bar)"  # busy: no figure
