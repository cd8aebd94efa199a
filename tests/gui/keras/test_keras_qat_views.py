"""Issue 20 item 3 in the shared views: with a Keras QAT model as A and its int8 TFLite as B,
B's tensor table gains QAT columns and B's op math a "QAT range → scale" section.

The expected values are computed here from `info MODEL --tflite B --json -` (the CLI, its
"variables": the QAT min/max read from the Keras model) with numpy (activation (max − min)/255,
zero point round(−128 − min/S) half away from zero; weights max(|min|, |max|)/127), and B's
scales and zero points are parsed from the .tflite with the `tflite` package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tflite

WAIT = 180_000
REPO = Path(__file__).resolve().parents[3]


def _b_params(path) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    sg = tflite.Model.GetRootAsModel(bytearray(Path(path).read_bytes()), 0).Subgraphs(0)
    out = {}
    for i in range(sg.TensorsLength()):
        q = sg.Tensors(i).Quantization()
        if q is not None and q.ScaleLength():
            out[i] = (q.ScaleAsNumpy().astype(np.float64), q.ZeroPointAsNumpy().astype(np.int64))
    return out


def _cli_info(model, b) -> dict:
    r = subprocess.run([sys.executable, "-m", "inspector", "info", str(model), "--tflite", str(b), "--json", "-"],
                       capture_output=True, text=True, cwd=REPO)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _expected(info: dict) -> dict[int, dict]:
    """B's tensor -> the QAT range's values, recomputed with numpy from the CLI's variables."""
    out = {}
    for q in info["qat"]:
        v, tfl = q["variables"], q["tflite"] or {}
        a = q["activation"]
        if a is not None and tfl.get("activation"):
            lo, hi = min(v[f"{_prefix(v, a['kind'])}_min"], 0.0), max(v[f"{_prefix(v, a['kind'])}_max"], 0.0)
            s = (hi - lo) / 255
            z = np.sign(-128 - lo / s) * np.floor(abs(-128 - lo / s) + 0.5)
            out[tfl["activation"]["tensor"]] = {"layer": q["layer"], "min": [lo], "max": [hi], "scale": np.array([s]),
                                                "zp": int(np.clip(z, -128, 127)), "findings": a["findings"]}  # fmt: skip
        if q["weights"] is not None and tfl.get("weights"):
            lo, hi = np.atleast_1d(v["kernel_min"]), np.atleast_1d(v["kernel_max"])
            out[tfl["weights"]["tensor"]] = {"layer": q["layer"], "min": lo, "max": hi, "zp": 0, "findings": q["weights"]["findings"],
                                             "scale": np.maximum(np.abs(lo), np.abs(hi)) / 127}  # fmt: skip
    return out


def _prefix(v: dict, kind: str) -> str:
    if kind != "input":
        return kind
    return next(k[:-4] for k in v if k.endswith("_min") and not k.startswith("kernel"))


def _span_values(cell: str) -> list[float]:
    return [float(x) for x in cell.split(" … ")]


def _open_pair(qtbot, window, model, b, tmp_path):
    window.features.keras.cache_root = str(tmp_path / "twins")
    w = window.open_model("A", model)
    qtbot.waitUntil(lambda: w.is_done, timeout=WAIT)
    assert w.error is None, w.error
    qtbot.waitUntil(lambda: window.features.keras.source is not None and window.controller.models["A"] is not None, timeout=WAIT)
    window.open_model("B", b)
    qtbot.waitUntil(lambda: window.controller.models["B"] is not None, timeout=WAIT)
    qtbot.waitUntil(lambda: bool(window.features.keras.qat_tensors), timeout=WAIT)


def _check_table(table, expected: dict[int, dict], params) -> None:
    for ti, e in expected.items():
        b_scales = params[ti][0]
        assert table.cell_text(ti, "QAT range").startswith(e["layer"] + " · ")
        assert _span_values(table.cell_text(ti, "QAT scale")) == pytest.approx(sorted({e["scale"].min(), e["scale"].max()}), rel=1e-7)
        assert _span_values(table.cell_text(ti, "QAT min")) == pytest.approx(sorted({min(e["min"]), max(e["min"])}), rel=1e-5)
        assert _span_values(table.cell_text(ti, "QAT max")) == pytest.approx(sorted({min(e["max"]), max(e["max"])}), rel=1e-5)
        assert int(table.cell_text(ti, "QAT zp")) == e["zp"]
        rel = float(np.max(np.abs(b_scales - e["scale"]) / e["scale"]))
        assert float(table.cell_text(ti, "Rel. diff")) == pytest.approx(rel, rel=0.06, abs=1e-12)  # shown with 2 digits
        assert table.cell_text(ti, "QAT finding") == "; ".join(e["findings"])
    unpaired = next(i for i in range(len(table.model.subgraph.tensors)) if i not in expected)
    assert table.cell_text(unpaired, "QAT scale") == ""


def test_mlp_qat_ranges_in_b_tensor_table_and_op_math(qtbot, window, keras_models, tmp_path):
    model, b = keras_models / "mlp_qat.h5", keras_models / "mlp_qat_int8.tflite"
    info = _cli_info(model, b)
    expected, params = _expected(info), _b_params(b)
    assert len(expected) == 7  # 4 activation ranges (input + 3 Dense) and 3 kernels
    _open_pair(qtbot, window, model, b, tmp_path)
    table = window.panes["B"].tensors
    _check_table(table, expected, params)
    # The ReLU layers' QAT min of about −5.9 wastes half the grid: the finding is in their rows.
    relu_rows = [ti for ti, e in expected.items() if any("ReLU output" in f for f in e["findings"])]
    assert len(relu_rows) == 2 and all(table.model.extra.flagged(ti) for ti in relu_rows)

    # Op math of the second Dense: input (dense_1's output range), weights, output ranges.
    fc2 = next(q for q in info["qat"] if q["layer"] == "quant_dense_2")
    op = fc2["tflite"]["activation"]["op_index"]
    window.controller.select_op("B", op)
    panel = window.features.opmath.op_math_panel
    assert panel.math is not None and panel.math.op_index == op
    assert panel.qat_box.isVisibleTo(panel)
    qt = panel.qat_table
    rows = {qt.cell_text(r, qt.column_of("Role")): r for r in range(qt.rowCount())}
    assert set(rows) == {"input", "weights", "output"}
    roles = {t.role: t.index for t in panel.math.tensors}
    for role, r in rows.items():
        ti = roles[role]
        e = expected[ti]
        assert qt.cell_text(r, qt.column_of("Tensor")) == info_name(info, ti)
        assert float(qt.cell_text(r, qt.column_of("QAT scale"))) == pytest.approx(e["scale"][0], rel=1e-7)
        assert int(qt.cell_text(r, qt.column_of("QAT Z"))) == e["zp"]
        assert float(qt.cell_text(r, qt.column_of("B scale"))) == pytest.approx(params[ti][0][0], rel=1e-7)
        assert int(qt.cell_text(r, qt.column_of("B Z"))) == params[ti][1][0]
    assert "ReLU output" in qt.cell_text(rows["output"], qt.column_of("Finding"))
    assert "max(|min|, |max|)/127" in panel.qat_caption.text()
    assert panel.summary.toPlainText().startswith("QAT findings") and "ReLU output" in panel.summary.toPlainText()
    text = panel.as_text()
    assert "QAT range → scale" in text and f"{expected[roles['weights']]['scale'][0]:.8g}" in text
    # Closing B removes the columns and the section (B's tensors no longer pair with the ranges).
    window.controller.close_model("B")
    qtbot.waitUntil(lambda: not window.features.keras.qat_tensors, timeout=WAIT)
    assert window.panes["B"].tensors.model.extra is None
    assert not panel.qat_box.isVisibleTo(panel)

    if os.environ.get("KERAS_SHOTS"):
        _shots(qtbot, window, b, op)


def info_name(info: dict, ti: int) -> str:
    for q in info["qat"]:
        for part in (q["tflite"] or {}).values():
            if part.get("tensor") == ti:
                return part["name"]
    raise KeyError(ti)


def _shots(qtbot, window, b, op) -> None:
    window.open_model("B", b)
    qtbot.waitUntil(lambda: bool(window.features.keras.qat_tensors), timeout=WAIT)
    window.controller.select_op("B", op)
    for size in ((1280, 800), (1920, 1080)):
        window.resize(*size)
        window.tabs.setCurrentWidget(window.features.opmath.op_math_panel)
        qtbot.wait(300)
        window.grab().save(f"/tmp/h20v-opmath-{size[0]}.png")
        window.panes["B"].tensors.view.horizontalScrollBar().setValue(10**6)  # the QAT columns, right of B's own
        qtbot.wait(200)
        window.panes["B"].grab().save(f"/tmp/h20v-tensors-{size[0]}.png")


def test_cnn_per_channel_kernel_ranges_in_b_tensor_table(qtbot, window, keras_models, tmp_path):
    model, b = keras_models / "cnn_qat.h5", keras_models / "cnn_qat_int8.tflite"
    info = _cli_info(model, b)
    expected, params = _expected(info), _b_params(b)
    per_channel = [ti for ti, e in expected.items() if len(e["scale"]) > 1]
    assert per_channel
    _open_pair(qtbot, window, model, b, tmp_path)
    table = window.panes["B"].tensors
    _check_table(table, expected, params)
    for ti in per_channel:  # a kernel whose deployed scales are not the QAT range's is flagged
        rel = float(np.max(np.abs(params[ti][0] - expected[ti]["scale"]) / expected[ti]["scale"]))
        assert table.model.extra.flagged(ti) == (rel > 1e-5 or bool(expected[ti]["findings"]))
        assert ("did not use the QAT range" in table.cell_text(ti, "QAT finding")) == (rel > 1e-5)
    # The first convolution's op math: its kernel range per channel beside B's per-channel scales.
    conv = next(q for q in info["qat"] if q["layer"] == "quant_conv1")
    kernel = conv["tflite"]["weights"]["tensor"]
    op = next(o.index for o in window.controller.models["B"].main.ops if kernel in o.inputs)
    window.controller.select_op("B", op)
    panel = window.features.opmath.op_math_panel
    qt = panel.qat_table
    r = next(r for r in range(qt.rowCount()) if qt.cell_text(r, qt.column_of("Role")) == "weights")
    assert qt.cell_text(r, qt.column_of("QAT range")) == f"quant_conv1 · kernel ×{len(expected[kernel]['scale'])}"
    assert _span_values(qt.cell_text(r, qt.column_of("QAT scale"))) == pytest.approx(
        sorted({expected[kernel]["scale"].min(), expected[kernel]["scale"].max()}), rel=1e-7)
    assert _span_values(qt.cell_text(r, qt.column_of("B scale"))) == pytest.approx(sorted({params[kernel][0].min(), params[kernel][0].max()}), rel=1e-7)
    if os.environ.get("KERAS_SHOTS"):
        for size in ((1280, 800), (1920, 1080)):
            window.resize(*size)
            window.tabs.setCurrentWidget(panel)
            qtbot.wait(300)
            window.grab().save(f"/tmp/h20v-cnn-opmath-{size[0]}.png")
