"""Op math panel: full-int8 CONV_2D and hybrid FULLY_CONNECTED, values against core and the
TFLite multiplier rule; observed ranges after a comparison; copy as text."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QGuiApplication

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.quantmath.fixed_point import quantize_multiplier
from inspector.core.quantmath.kernel_path import classify
from inspector.core.quantmath.opmath import op_math
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import Model
from tests.helpers.gui_helpers import open_wait


def _click_op(win, slot: str, op: int) -> None:
    view = win.panes[slot].op_view
    sm = view.selectionModel()
    sm.setCurrentIndex(win.panes[slot].ops.index(op, 0), sm.SelectionFlag.ClearAndSelect | sm.SelectionFlag.Rows)


def _column(table, header: str) -> list[str]:
    c = table.column_of(header)
    return [table.cell_text(r, c) for r in range(table.rowCount())]


def test_full_int8_conv(qtbot, window, fixture_path):
    open_wait(qtbot, window, "A", fixture_path("float"))
    open_wait(qtbot, window, "B", fixture_path("int8"))
    mq = Model(fixture_path("int8"))
    conv = next(op for op in mq.main.ops if op.type == "CONV_2D")
    _click_op(window, "B", conv.index)
    panel = window.features.opmath.op_math_panel
    assert panel.math == op_math(mq, conv.index)
    assert f"op {conv.index} <b>CONV_2D</b>" in panel.header.text() and "full integer (int8)" in panel.header.text()

    # Independent: M = S1*S2[c]/S3 from the tensors' float32 scales, (M0, shift) as QuantizeMultiplier.
    t_in, t_w, t_out = (mq.main.tensors[i] for i in (conv.inputs[0], conv.inputs[1], conv.outputs[0]))
    s1, s3 = float(t_in.quantization.scales[0]), float(t_out.quantization.scales[0])
    s2 = np.asarray(t_w.quantization.scales, np.float64)
    assert len(s2) == 16 and t_w.quantization.per_channel
    expected = [quantize_multiplier(s1 * s / s3) for s in s2]
    table = panel.detail_table
    assert table.rowCount() == len(s2)
    assert [int(v) for v in _column(table, "M0")] == [m0 for m0, _ in expected]
    assert [int(v) for v in _column(table, "shift")] == [sh for _, sh in expected]
    assert all(2**30 <= m0 < 2**31 for m0, _ in expected)
    np.testing.assert_allclose([float(v) for v in _column(table, "M = S1·S2/S3")], s1 * s2 / s3, rtol=1e-5)
    np.testing.assert_allclose([float(v) for v in _column(table, "S2")], s2, rtol=1e-5)
    b = mq.main.tensors[conv.inputs[2]]
    np.testing.assert_allclose([float(v) for v in _column(table, "bias scale stored")], b.quantization.scales, rtol=1e-5)
    np.testing.assert_allclose([float(v) for v in _column(table, "bias scale expected")], s1 * s2, rtol=1e-5)
    # The plot shows M per channel.
    x, y = panel.points.getData()
    np.testing.assert_allclose(y, s1 * s2 / s3, rtol=1e-12)
    assert list(x) == list(range(16))
    # The parameter grid: S1/Z1, S3/Z3 as the tensors have them; no S3 callout.
    html = panel.summary.toHtml()
    assert f"{s1:.6g}" in html and f"Z3 = {t_out.quantization.zero_points[0]}" in html
    assert "Why is there no S3" not in html
    # Tensors table: representable ranges [S(qmin - Z), S(qmax - Z)] of input and output.
    rows = {panel.tensor_table.cell_text(r, 0): r for r in range(panel.tensor_table.rowCount())}
    assert set(rows) == {"input", "weights", "bias", "output"}
    z3 = t_out.quantization.zero_points[0]
    rng = panel.tensor_table.cell_text(rows["output"], panel.tensor_table.column_of("Representable range"))
    assert rng == f"[{s3 * (-128 - z3):.5g}, {s3 * (127 - z3):.5g}]"
    assert panel.tensor_table.cell_text(rows["output"], panel.tensor_table.column_of("Range use")) == "—"
    # Copy as text carries every M0.
    panel.copy_button.click()
    text = QGuiApplication.clipboard().text()
    assert all(str(m0) in text for m0, _ in expected) and "CONV_2D" in text


def test_hybrid_fully_connected_has_no_s3(qtbot, window, fixture_path):
    open_wait(qtbot, window, "A", fixture_path("float"))
    open_wait(qtbot, window, "B", fixture_path("dynamic"))
    mq = Model(fixture_path("dynamic"))
    fc = next(op for op in mq.main.ops if op.type == "FULLY_CONNECTED" and classify(mq.main, op) == "hybrid")
    _click_op(window, "B", fc.index)
    panel = window.features.opmath.op_math_panel
    assert panel.math == op_math(mq, fc.index)
    assert "hybrid" in panel.header.text()
    html = panel.summary.toPlainText()
    assert "Why is there no S3?" in html and "quantized per batch at run time" in html
    assert "S_in(runtime)·S_w·acc" in html
    grid = {a: b for a, b, _ in _grid(panel)}
    assert grid["S3 (output scale)"] == "none" and grid["M0 / shift"] == "none"
    assert grid["S1 (input scale)"] == "at run time"
    table = panel.detail_table
    headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    assert headers == ["c", "S2", "Z2"]  # no M, M0, shift
    w = mq.main.tensors[fc.inputs[1]]
    np.testing.assert_allclose([float(v) for v in _column(table, "S2")], w.quantization.scales, rtol=1e-5)
    out_row = next(r for r in range(panel.tensor_table.rowCount()) if panel.tensor_table.cell_text(r, 0) == "output")
    assert panel.tensor_table.cell_text(out_row, 2) == "float32"
    assert panel.tensor_table.cell_text(out_row, panel.tensor_table.column_of("Scale S")) == "—"


def _grid(panel):
    from inspector.core.viewdata.op_math_format import params

    return params(panel.math)


def test_observed_range_use_after_comparison(qtbot, window, fixture_path):
    fp, qp = fixture_path("float"), fixture_path("int8")
    open_wait(qtbot, window, "A", fp)
    open_wait(qtbot, window, "B", qp)
    result = compare_models(str(fp), str(qp), CompareOptions(samples=SampleSettings(count=2), threads=1))
    window.features.compare_features.source.set_result(result)
    mq = Model(qp)
    conv = next(op for op in mq.main.ops if op.type == "CONV_2D")
    _click_op(window, "B", conv.index)
    layer = result.layer_for_tensor(conv.outputs[0])
    assert layer is not None and layer.metrics.range_use is not None
    panel = window.features.opmath.op_math_panel
    t = panel.tensor_table
    out_row = next(r for r in range(t.rowCount()) if t.cell_text(r, 0) == "output")
    assert t.cell_text(out_row, t.column_of("Range use")) == f"{layer.metrics.range_use * 100:.1f}%"
    assert t.cell_text(out_row, t.column_of("Clipped")) == f"{layer.metrics.clip_rate * 100:.2f}%"
    assert "Observed in the comparison run" in panel.summary.toPlainText()


def test_empty_and_float_only(qtbot, window, fixture_path):
    panel = window.features.opmath.op_math_panel
    assert panel.math is None and "Select an op" in panel.header.text()
    open_wait(qtbot, window, "A", fixture_path("float"))
    _click_op(window, "A", 0)
    assert panel.math is not None and panel.math.kernel_path == "float"
    assert "A · float" in panel.header.text()
