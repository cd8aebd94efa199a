"""A blockwise int4 FC in the GUI: tensor table, op math panel, weight and per-channel views show
what core computed (block size, block count, block scales), and nothing crashes on empty scales."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from inspector.core.compare.weights import weight_tensor_of
from inspector.core.quantmath.blockwise import blockwise_params
from inspector.core.quantmath.opmath import op_math
from inspector.core.tflite.model import Model
from inspector.core.viewdata.op_math_format import params
from inspector.gui.views.tensor_table import COLUMNS
from tests.helpers.gui_helpers import open_wait
from tests.helpers.transformer_fixtures import transformer_path

REPO = Path(__file__).resolve().parents[3]


def test_blockwise_fc_views(qtbot, window):
    f, q = (transformer_path(REPO / ".fixture-cache", n) for n in ("float", "int4_b32"))
    open_wait(qtbot, window, "A", f)
    open_wait(qtbot, window, "B", q)
    mq = Model(q)
    fc = [op for op in mq.main.ops if op.type == "FULLY_CONNECTED"][4]
    wt = weight_tensor_of(mq.main, fc)
    p = blockwise_params(mq, mq.main.tensors[wt])
    window.controller.select_op("B", fc.index)
    window.panes["B"].tensors.select_tensor(wt)
    qtbot.wait(50)
    # tensor table: block count × block size, block-scale range, union range
    row = window.panes["B"].tensors.model.text(wt)
    lo, hi = p.scale_range
    assert row[COLUMNS.index("Chan.")] == f"{p.num_blocks}×32" == "512×32"
    assert row[COLUMNS.index("Scale")] == f"{lo:.6g} … {hi:.6g}" and row[COLUMNS.index("Zero pt")] == "0"
    assert row[COLUMNS.index("Range")] == f"[{-8 * hi:.6g}, {7 * hi:.6g}]"
    # op math panel
    panel = window.features.opmath.op_math_panel
    assert panel.math == op_math(mq, fc.index)
    grid = {a: b for a, b, _ in params(panel.math)}
    assert grid["Block size B"] == "32" and grid["Blocks"] == "512" and grid["S3 (output scale)"] == "none"
    assert "Σ_blocks" in panel.summary.toPlainText()
    table = panel.detail_table
    col = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())].index("largest block scale")
    got = [float(table.item(r, col).text()) for r in range(table.rowCount())]
    np.testing.assert_allclose(got, p.scales.max(axis=1), rtol=1e-5)
    # weight view: per-block dequantization, per-channel SQNR, the largest block S/2 as reference
    w = window.features.weights_view.analysis
    assert w is not None and w.b is not None and w.b.blockwise is not None
    assert len(w.per_channel_sqnr_db) == mq.main.tensors[wt].shape[0]
    x, y = window.features.weights_view.half_step.getOriginalDataset()
    np.testing.assert_allclose(y, 0.5 * p.scales.max(axis=1))
    # one output channel: the combo lists them; picking one analyses that row alone
    combo = window.features.weights_view.channel_combo
    assert combo.isEnabled() and combo.count() == 1 + mq.main.tensors[wt].shape[0]
    combo.setCurrentIndex(4)
    qtbot.waitUntil(lambda: window.features.weights_view.analysis is not None and window.features.weights_view.analysis.channel == 3, timeout=20_000)
    assert window.features.weights_view.analysis.total_elements == mq.main.tensors[wt].shape[1]
    # per-channel view explains instead of plotting empty scales
    window.features.per_channel_view.set_tensor(mq.main.tensors[wt], "B")
    assert "blockwise" in window.features.per_channel_view.title.text()
