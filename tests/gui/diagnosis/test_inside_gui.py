"""Inside the tensor in the GUI (issue 25): after comparing the detector head, the layer table's
worst-channel column marks the concatenation (its tooltip names the score slice with its
figures), the layer plot offers "worst channel SQNR" and draws the slice's figure, and the
per-channel view of the selected concatenation shades its input slices, the damaged one red.
Figures are checked against the comparison's typed result (itself checked against numpy in
tests/core/compare/test_inside_diagnosis.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from inspector.core.compare.comparison import CompareOptions
from inspector.core.compare.inside import worst_part_db
from inspector.core.samples.settings import SampleSettings
from tests.helpers import inside_fixtures as ix
from tests.helpers.gui_helpers import open_wait
from tests.helpers.paths import REPO

RUN_MS = 120_000


@pytest.fixture
def compared(qtbot, window, tmp_path):
    paths = ix.detector_models(REPO / ".fixture-cache")
    npz = tmp_path / "images.npz"
    np.savez(npz, image=ix.detector_images(8, seed=3))
    open_wait(qtbot, window, "A", paths["det_float"])
    open_wait(qtbot, window, "B", paths["det_int8"])
    opts = CompareOptions(samples=SampleSettings(count=None, source=str(npz)))
    window.features.compare.set_options(opts)
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=RUN_MS) as blocker:
        window.features.compare.run(opts)
    result = blocker.args[0]
    cat = next(lay for lay in result.layers if lay.op_type == "CONCATENATION")
    return window, result, cat


def test_worst_channel_column_and_tooltip(compared):
    from inspector.gui.views.model_pane import OP_COLUMNS, WORST_COLUMN

    win, _result, cat = compared
    assert OP_COLUMNS[WORST_COLUMN] == "Worst ch."
    model = win.panes["B"].ops
    idx = model.index(cat.op_index, WORST_COLUMN)
    assert model.data(idx) == "0 ⚠"  # the score slice, 0.0 dB, >= 20 dB below the tensor
    tip = model.data(idx, role=0x03)
    assert "slice 4:7 from op" in tip and "LOGISTIC" in tip and "steps used" in tip and "the tensor reads" in tip
    conv = next(lay for lay in _result.layers if lay.op_type == "CONV_2D")
    assert "⚠" not in model.data(model.index(conv.op_index, WORST_COLUMN))


def test_layer_plot_offers_the_worst_channel_metric(compared):
    win, result, cat = compared
    plot = win.features.compare_features.plot
    combo = plot.metric_combo
    i = combo.findData("worst_channel_sqnr_db")
    assert i >= 0 and combo.itemText(i) == "worst channel SQNR"
    combo.setCurrentIndex(i)
    s = plot.series["accumulated"]
    k = next(j for j, lay in enumerate(result.layers) if lay.op_index == cat.op_index)
    assert s.raw[k] == pytest.approx(worst_part_db(cat.channels, cat.slices)) and s.raw[k] < 1
    assert s.raw[k] < cat.metrics.sqnr_db - 20
    assert "worst of 7 channels" in plot._tip(0, 0, ("accumulated", k, result))


def test_per_channel_view_marks_the_slices(qtbot, compared):
    win, _result, cat = compared
    win.controller.select_op("B", cat.op_index)
    view = win.features.per_channel_view
    qtbot.waitUntil(lambda: view.channel_plots.isVisible() or bool(view.slice_items), timeout=5000)
    labels = [item.textItem.toPlainText() for _plot, item in view.slice_items if hasattr(item, "textItem")]
    assert len(labels) == 2 and labels[1].startswith("slice 4:7 · op") and "LOGISTIC" in labels[1]
    assert "⚠" in view.channel_title.text() and "slice 4:7" in view.channel_title.text()
    x, y = view.sqnr_points.getData()
    assert len(x) == 7 and np.nanmax(y[4:]) < 1 and np.nanmin(y[:4]) > 40


def test_output_summary_names_the_slice(compared):
    win, _result, _cat = compared
    text = win.features.compare_features.summary.text
    assert "⚠ slice 4:7 of op" in text and "LOGISTIC" in text and "the tensor reads" in text


def test_apply_fix_of_the_mixed_ranges_concatenation(qtbot, compared):
    win, before, cat = compared
    feats = win.features.diagnosis_features
    fix = cat.diagnosis.fix
    assert fix.edit == "keep_float"
    with qtbot.waitSignal(win.features.requantize.finished, timeout=RUN_MS) as blocker:
        assert feats.apply_fix(cat.op_index) is not None
    v = blocker.args[0]
    after = v.comparison
    out_b, out_a = before.outputs[0].slices[1], after.outputs[0].slices[1]
    assert out_a.sqnr_db - out_b.sqnr_db >= 20, (out_b.sqnr_db, out_a.sqnr_db)
    text = "\n".join(feats.outcome)
    m = re.search(rf"slice 4:7 of op {cat.op_index}: SQNR ([\d.]+) → ([\d.]+) dB", text)
    assert m and float(m.group(1)) == pytest.approx(cat.slices[1].sqnr_db, abs=0.01), text
    assert float(m.group(2)) - float(m.group(1)) >= 20
    # the reshape carrying the scores, found after the edit by A's tensor (B's op indices moved)
    path_op = next(op for op in fix.ops if op != cat.op_index)
    assert re.search(rf"op {path_op} RESHAPE: SQNR 0\.00 → [\d.]+ dB", text), text
