"""The Worst samples tab fits at 1280x800 (issue 35, item 8): at the first window size on that
screen the list showed its Sample column cut and the per-class plot's labels overlapped."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from PySide6.QtCore import QPointF

from tests.helpers.gui_helpers import click_enabled, open_wait
from tests.helpers.task_fixtures import TaskFixtures

RUN_MS = 60_000
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def task_data():
    tf = TaskFixtures(REPO / ".fixture-cache")
    return tf.models(), tf.image_folder()


def test_worst_samples_show_every_column_and_readable_class_labels_at_1280x800(qtbot, window, task_data):
    from inspector.gui.views.sizing import window_size

    models, folder = task_data
    window.resize(*window_size(1280, 800))
    open_wait(qtbot, window, "A", str(models["cls_float"]))
    open_wait(qtbot, window, "B", str(models["cls_int8_broken"]))
    panel = window.features.compare_features.inputs
    panel.source.setCurrentIndex(panel.source.findData("folder"))
    panel.path.setText(str(folder))
    panel.count.setValue(30)
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=RUN_MS):
        click_enabled(qtbot, panel.run_button)
    view = window.features.compare_features.worst
    window.ui.show_tab(view)
    qtbot.waitUntil(lambda: view.table.rowCount() > 0 and view.isVisible(), timeout=RUN_MS)
    qtbot.wait(100)
    if os.environ.get("TQI_SHOTS"):
        view.grab().save(os.path.join(os.environ["TQI_SHOTS"], "worst_samples_1280.png"))
    t = view.table
    hdr = t.horizontalHeader()
    fm = hdr.fontMetrics()
    for col in range(t.columnCount()):
        right = hdr.sectionViewportPosition(col) + hdr.sectionSize(col)
        assert right <= t.viewport().width(), (col, right, t.viewport().width())  # every column in view
        title = t.horizontalHeaderItem(col).text()
        assert hdr.sectionSize(col) >= fm.horizontalAdvance(title) + 8, (title, hdr.sectionSize(col))  # its title whole
    sample = t.item(0, 1)
    assert hdr.sectionSize(1) >= t.fontMetrics().horizontalAdvance(sample.text()) + t.iconSize().width() + 12, (
        sample.text(), hdr.sectionSize(1))  # the Sample column not cut

    # ten classes (the digits' count) in the per-class plot beside the list: no two labels overlap
    pc = view.per_class
    per_class = {k: {"drop_pct": float(k % 4 - 1), "float_accuracy": 0.9, "quant_accuracy": 0.85} for k in range(10)}
    names = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
    pc.set_task(SimpleNamespace(per_class=per_class, class_names=names, regression=None))
    qtbot.wait(50)
    if os.environ.get("TQI_SHOTS"):
        view.grab().save(os.path.join(os.environ["TQI_SHOTS"], "worst_samples_10_classes_1280.png"))
    assert len(pc.ticks) == 10
    shown = pc.shown_ticks
    vb = pc.getPlotItem().getViewBox()
    xs = [vb.mapViewToScene(QPointF(i, 0)).x() for i, _t in shown]
    widths = [max(pc.fontMetrics().horizontalAdvance(line) for line in text.split("\n")) for _i, text in shown]
    assert len(shown) >= 2
    for k in range(1, len(shown)):
        gap = xs[k] - xs[k - 1]
        assert gap >= (widths[k] + widths[k - 1]) / 2, (shown[k - 1], shown[k], gap, widths)  # no two labels overlap
    assert all(name in pc.toolTip() for name in names) or len(shown) == 10  # the skipped ones in the tooltip
