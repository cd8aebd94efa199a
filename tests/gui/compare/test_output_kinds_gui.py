"""The GUI shows a regression output's MAE/RMSE/max error (not top-1) and flags a constant,
argmax-tied classifier instead of reporting agreement (issue 18 §3, §5). Figures are core's,
themselves checked against the LiteRT interpreter in tests/core/compare/test_output_kinds.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.helpers.gui_helpers import click_enabled, open_wait
from tests.helpers.output_kind_fixtures import OutputKindFixtures

RUN_MS = 60_000
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def kinds():
    fx = OutputKindFixtures(REPO / ".fixture-cache")
    return fx.models(), fx.npz(12)


def _run(qtbot, window, models, npz, name):
    open_wait(qtbot, window, "A", str(models[f"{name}_float"]))
    open_wait(qtbot, window, "B", str(models[f"{name}_int8"]))
    panel = window.features.compare_features.inputs
    panel.source.setCurrentIndex(panel.source.findData("file"))
    panel.path.setText(str(npz))
    panel.count.setValue(0)
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, panel.run_button)
    return blocker.args[0]


def test_regression_output_shows_regression_figures(qtbot, window, kinds):
    models, npz = kinds
    result = _run(qtbot, window, models, npz, "landmarks")
    task = window.features.compare.task
    assert task.kind == "regression" and result.task().regression.rmse == pytest.approx(task.regression.rmse)
    m = task.regression
    summary = window.features.compare_features.summary.text
    assert "top-1" not in summary and f"RMSE {m.rmse:.4g}" in summary and "% of range" in summary
    view = window.features.compare_features.worst
    headers = [view.table.horizontalHeaderItem(c).text() for c in range(view.table.columnCount())]
    assert headers[2:5] == ["RMSE", "MAE", "Max error"]
    top = task.worst(1)[0]
    assert view.table.item(0, 2).text() == f"{top.rmse:.4g}" and top.rmse == max(o.rmse for o in task.outcomes)
    assert "regression" in view.summary.text() and "flipped" not in view.summary.text()
    np.testing.assert_allclose(view.per_class.drops, [100 * m.relative(v) for v in (m.mae, m.rmse, m.max_error)])
    _show_tab(view)
    for w, h in ((1280, 800), (1920, 1080)):
        window.resize(w, h)
        window.grab().save(f"/tmp/h18-outputs-regression-{w}.png")


def test_constant_tied_classifier_reports_no_agreement(qtbot, window, kinds):
    models, npz = kinds
    _run(qtbot, window, models, npz, "const")
    task = window.features.compare.task
    assert task.kind == "classification" and task.top1_agreement is None
    summary = window.features.compare_features.summary.text
    assert "top-1 agreement not reported" in summary and "100.0 %" not in summary and "output constant" in summary
    assert "tied" in window.features.compare_features.worst.summary.text()
    _show_tab(window.features.compare_features.worst)
    window.resize(1280, 800)
    window.grab().save("/tmp/h18-outputs-tied-1280.png")


def _show_tab(widget) -> None:
    """Bring the tab holding `widget` to the front (for the screenshot)."""
    from PySide6.QtWidgets import QTabWidget

    w = widget.parentWidget()
    while w is not None and not isinstance(w, QTabWidget):
        w = w.parentWidget()
    if w is not None:
        for i in range(w.count()):
            if w.widget(i) is widget or w.widget(i).isAncestorOf(widget):
                w.setCurrentIndex(i)


@pytest.mark.parametrize(("count", "held_out"), [(24, True), (8, False)])
def test_bias_correction_gain_is_stated_held_out_or_in_sample(qtbot, window, example_pair, count, held_out):
    """Issue 18 §5: an edit that calibrates says where its gain was measured (status and notes);
    the held-out figure equals core's `held_out_gain` on the same samples."""
    from inspector.core.requantize.held_out import held_out_gain
    from inspector.core.samples.settings import SampleSettings
    from inspector.core.samples.sources import open_source
    from inspector.core.tflite.model import load_model
    from tests.helpers.gui_helpers import use_random_samples

    fa, fb = (str(p) for p in example_pair)
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    use_random_samples(window)
    panel = window.features.compare_features.inputs
    panel.count.setValue(count)
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=RUN_MS):
        click_enabled(qtbot, panel.run_button)
    rq, ed = window.features.requantize, window.features.requantize_panel.editor
    cal_text = ed.calibration.text()
    assert ("held-out" in cal_text) == held_out and ("in-sample" in cal_text) != held_out
    convs = [op.index for op in window.controller.models["B"].main.ops if op.type == "CONV_2D"]
    ed.ops_edit.setText(str(convs[0]))
    ed._add_typed()
    ed.set_row_choice(0, "bias_correct")
    with qtbot.waitSignal(rq.finished, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, ed.run_button)
    v = blocker.args[0]
    status = ed.status.text()
    assert v.notes[0].startswith("gain: output SQNR")
    if held_out:
        assert "8 held-out samples not used for calibration" in status and "calibration samples included" in status
        samples = list(open_source(load_model(fa), load_model(fb), SampleSettings(count=count, seed=panel.seed.value())))
        g = held_out_gain(fa, fb, open(v.path, "rb").read(), samples)
        assert f"{g.before_db:.2f} dB → {g.after_db:.2f} dB" in status
    else:
        assert "in-sample" in status
    _show_tab(window.features.requantize_panel)
    window.resize(1280, 800)
    window.grab().save(f"/tmp/h18-outputs-requant-{count}.png")
