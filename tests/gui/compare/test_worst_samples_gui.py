"""Worst samples (issue 8) in the GUI: an image folder with class subfolders on the trained
classifier and its broken int8 twin (conv2's weight scales x8). The list ranks flipped samples
first with thumbnails and class names; the per-class drop plot matches core; selecting a sample
re-runs it alone and its layerwise error (checked against an independent one-sample run from the
PNG file) shows in the layer error plot, with the broken layer standing out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import Qt

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.samples.settings import SampleSettings
from tests.helpers.gui_helpers import click_enabled, open_wait
from tests.helpers.task_fixtures import BROKEN_LAYER, CLASSES, TaskFixtures

RUN_MS = 60_000
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def task_data():
    tf = TaskFixtures(REPO / ".fixture-cache")
    return tf.models(), tf.image_folder()


def test_worst_samples_list_per_class_and_sample_rerun(qtbot, window, task_data, tmp_path):
    models, folder = task_data
    fa, fb = str(models["cls_float"]), str(models["cls_int8_broken"])
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    panel = window.features.compare_features.inputs
    panel.source.setCurrentIndex(panel.source.findData("folder"))
    panel.path.setText(str(folder))
    panel.count.setValue(0)  # all 60 images
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, panel.run_button)
    result = blocker.args[0]
    task = compare_models(fa, fb, CompareOptions(samples=SampleSettings(source=str(folder), count=None))).task()
    assert result.samples == task.num_samples == 60 and result.class_names == tuple(sorted(p.name for p in folder.iterdir()))
    assert task.accuracy_drop_pct > 10  # the broken model loses accuracy

    # The list: every sample, in core's worst-first order, flipped predictions first.
    view = window.features.compare_features.worst
    table = view.table
    assert table.rowCount() == 60
    order = [table.item(r, 0).data(Qt.ItemDataRole.UserRole) for r in range(60)]
    assert order == [o.index for o in task.worst(60)]
    flipped = [o.flipped for o in task.worst(60)]
    n_flip = sum(flipped)
    assert n_flip >= 5 and flipped == [True] * n_flip + [False] * (60 - n_flip)
    top = task.worst(1)[0]
    names = result.class_names
    assert table.item(0, 1).text() == top.source and (folder / top.source).is_file()
    assert table.item(0, 2).text() == f"{names[top.label]} ({top.label})"
    assert table.item(0, 3).text() == f"{names[top.float_pred]} ({top.float_pred})"
    assert table.item(0, 4).text().startswith(f"{names[top.quant_pred]} ({top.quant_pred})") and "flipped" in table.item(0, 4).text()
    assert "flipped" not in table.item(59, 4).text()
    # Thumbnails are decoded on a pool thread and arrive after the list is filled.
    qtbot.waitUntil(lambda: not view.thumbnails_loading, timeout=10_000)
    icons = [table.item(r, 1).icon() for r in range(60)]
    assert all(not i.isNull() and i.availableSizes()[0].width() == 40 for i in icons)  # 32x32 PNGs shown at 40 px
    assert f"{n_flip} flipped" in view.summary.text()

    # Per-class accuracy drop = core's.
    pc = view.per_class
    assert pc.labels == sorted(task.per_class) == list(range(len(CLASSES)))
    np.testing.assert_allclose(pc.drops, [task.per_class[k]["drop_pct"] for k in pc.labels])
    assert "drop" in window.features.compare_features.summary.text and f"{task.accuracy_drop_pct:.1f} points" in window.features.compare_features.summary.text

    # Selecting the worst sample re-runs it alone; its layerwise error joins the layer error plot.
    plot = window.features.compare_features.plot
    assert len(plot.point_data("sample")[0]) == 0
    with qtbot.waitSignal(window.features.compare.sample_changed, timeout=RUN_MS) as sb:
        view.select_row(0)
    run = sb.args[0]
    assert run.index == top.index and run.result.sources == (top.source,) and run.result.samples == 1
    x, y = plot.point_data("sample")
    assert len(x) == len(result.layers) == 6
    assert f"sample #{top.index}" in plot.legend_labels and f"sample #{top.index}" in plot.legend.text()
    # Independent: the PNG read and normalized as documented ((v - 127.5) / 127.5), one-sample npz.
    img = (np.asarray(Image.open(folder / top.source).convert("RGB"), np.float32)[None] - 127.5) / 127.5
    npz = tmp_path / "one.npz"
    np.savez(npz, image=img)
    one = compare_models(fa, fb, CompareOptions(samples=SampleSettings(source=str(npz), count=None)))
    np.testing.assert_allclose(y, [lay.metrics.sqnr_db for lay in one.layers], rtol=1e-6)
    # The broken layer stands out: good before it, far below 0 dB from it on.
    k = next(i for i, lay in enumerate(result.layers) if BROKEN_LAYER in lay.tensor_name)
    assert y[k - 1] > 30 and y[k] < 0 and y[k] == y[: k + 1].min()
    sx, sy = window.features.compare_features.sample_plot.point_data("sample")
    np.testing.assert_allclose(sy, y)
