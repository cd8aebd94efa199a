"""QAT ranges by model B's tensor (`core.keras.qat_tensors`), what the tensor table and the op
math show beside B's scales: each range's findings are its own (activation or kernel), and the
mapping points at the tensors whose parameters the `tflite` package reads from B."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tflite

from inspector.core.keras.info import keras_info
from inspector.core.keras.qat_tensors import QatColumns, qat_by_tensor, qat_math_section
from inspector.core.runtime.worker import run_isolated


def _params(path) -> dict[int, tuple[str, np.ndarray]]:
    sg = tflite.Model.GetRootAsModel(bytearray(Path(path).read_bytes()), 0).Subgraphs(0)
    out = {}
    for i in range(sg.TensorsLength()):
        q = sg.Tensors(i).Quantization()
        if q is not None and q.ScaleLength():
            out[i] = (sg.Tensors(i).Name().decode(), q.ScaleAsNumpy().astype(np.float64))
    return out


def test_cnn_ranges_by_b_tensor_with_their_own_findings(keras_models):
    b = keras_models / "cnn_qat_int8.tflite"
    info = run_isolated(keras_info, str(keras_models / "cnn_qat.h5"), str(b), step="test")
    params = _params(b)
    for q in info["qat"]:  # the layer's findings, split by the range they are about
        parts = [p for p in (q["activation"], q["weights"]) if p is not None]
        assert sorted(f for p in parts for f in p["findings"]) == sorted(q["findings"])
        if q["weights"] is not None:
            assert not any(f.startswith("kernel range") for f in (q["activation"] or {}).get("findings", []))
    by = qat_by_tensor(info)
    conv = next(q for q in info["qat"] if q["layer"] == "quant_conv1")
    kernel = by[conv["tflite"]["weights"]["tensor"]]
    name, b_scales = params[kernel.tensor]
    assert kernel.name == name and kernel.kind == "kernel" and kernel.per_channel
    v = conv["variables"]
    qat = np.maximum(np.abs(v["kernel_min"]), np.abs(v["kernel_max"])) / 127  # numpy, from the variables
    np.testing.assert_allclose(kernel.scale, qat, rtol=1e-12)
    np.testing.assert_allclose(kernel.b_scale, b_scales, rtol=1e-7)
    rel = float(np.max(np.abs(b_scales - qat) / qat))
    assert kernel.relative_difference == pytest.approx(rel, rel=1e-6)
    assert (rel > 1e-5) == any("did not use the QAT range" in f for f in kernel.findings)
    assert all("ReLU output" not in f for f in kernel.findings)  # the activation's finding is not the kernel's
    cols = QatColumns(by)
    assert cols.cells(kernel.tensor)[0] == f"{qat.min():.8g} … {qat.max():.8g}"
    assert cols.cells(max(params) + 100) is None
    # Sorting by QAT scale: paired tensors first, in scale order.
    keys = sorted(range(max(params) + 1), key=lambda t: cols.sort_key(t, 0))
    paired = [t for t in keys if t in by]
    assert keys[: len(paired)] == paired
    assert [min(np.atleast_1d(by[t].scale)) for t in paired] == sorted(min(np.atleast_1d(by[t].scale)) for t in paired)
    # The op math section of the first convolution: input, weights and output ranges, with findings.
    section = qat_math_section(by, [("input", 99_999), ("weights", kernel.tensor)])
    assert section is not None
    caption, headers, rows, _tips, text, note = section
    assert len(rows) == 1 and rows[0][headers.index("Role")] == "weights"
    assert "max(|min|, |max|)/127" in caption and "max(|min|, |max|)/127 per channel ×8" in text
    assert ("did not use the QAT range" in note) == any("did not use" in f for f in kernel.findings)
    assert qat_math_section(by, [("input", 99_999)]) is None
