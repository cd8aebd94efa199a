"""Issue 19 §3: a newcomer's first screen. The bundled example pair opens compared on its
bundled inputs (in the worker, no click), and any other pair with both models open says "Run"
instead of "open models A and B"."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.diagnosis import cause_rows
from inspector.core.samples.settings import ALL, SampleSettings
from inspector.gui.example.feature import AUTORUN_KEY, READY_TEXT
from inspector.gui.views.model_pane import CAUSE_COLUMN
from inspector.paths import example_inputs
from tests.helpers.gui_helpers import open_wait

RUN_MS = 120_000


def test_example_pair_opens_compared(qtbot, window, example_pair):
    window.settings.setValue(AUTORUN_KEY, True)
    fa, fb = (str(p) for p in example_pair)
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=RUN_MS,
                          check_params_cb=lambda r: r is not None) as blocker:  # fmt: skip
        window.open_files([fa, fb], "A")
    result = blocker.args[0]
    labels = np.load(example_inputs())["labels"]
    assert result.samples == len(labels) and not result.samples_are_random and result.isolated
    assert "example_inputs.npz" in result.inputs
    want = compare_models(fa, fb, CompareOptions(samples=SampleSettings(count=ALL, source=str(example_inputs())), isolated=True))
    assert [lay.metrics.sqnr_db for lay in result.layers] == pytest.approx([lay.metrics.sqnr_db for lay in want.layers])
    # the story on the first screen: accuracy float -> int8 several points lower, and the worst
    # layer (the diagnosis' first cause) named with its cause in model B's layer list
    summary = window.features.compare_features.summary.text
    task = want.task()  # the figures shown are core's (its accuracies are checked against LiteRT in test_example_labels)
    fa_pct, qa_pct = 100 * task.float_accuracy, 100 * task.quant_accuracy
    assert f"accuracy {fa_pct:.1f} % → {qa_pct:.1f} %" in summary and f"drop {fa_pct - qa_pct:.1f} points" in summary
    assert fa_pct - qa_pct >= 2.0  # the story: a real drop
    worst = cause_rows(want.layers)[0]
    cell = window.panes["B"].ops.index(worst["op_index"], CAUSE_COLUMN)
    # the input's range (op 1 holds it): the name the root-cause strip gives it (this read "clipping" before:
    # the layer row and the strip named one cause two ways)
    assert worst["cause"] == "input_range" and window.panes["B"].ops.data(cell) == "input range"
    assert "No comparison yet" not in window.features.compare_features.summary.label.text()
    assert "top-1 agreement" in window.features.compare_features.summary.text  # labels came with the inputs
    # the first screen shows the run's plot, not the empty weight histogram ("Select a layer…")
    assert window.tabs.currentWidget() is window.features.compare_features.page


def test_example_run_keeps_a_tab_the_user_chose(qtbot, window, example_pair):
    window.settings.setValue(AUTORUN_KEY, True)
    window.tabs.setCurrentWidget(window.features.review.audit_view)
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=RUN_MS, check_params_cb=lambda r: r is not None):
        window.open_files([str(p) for p in example_pair], "A")
    assert window.tabs.currentWidget() is window.features.review.audit_view


def test_other_pair_says_run_once_both_are_open(qtbot, window, fixture_path):
    window.settings.setValue(AUTORUN_KEY, True)
    label = window.features.compare_features.summary.label
    assert "open models A and B" in label.text()
    open_wait(qtbot, window, "A", fixture_path("float"))
    assert "open models A and B" in label.text()
    open_wait(qtbot, window, "B", fixture_path("int8"))
    qtbot.wait(50)
    assert READY_TEXT in label.text() and "Run comparison" in label.text()
    assert window.features.compare.result is None and not window.features.compare.running  # not the example: no automatic run
