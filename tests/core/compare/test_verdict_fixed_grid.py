"""Fixed-output ops never "clip" (issue 26 §6): SOFTMAX's int8 output grid (1/256, -128) is the
kernel's, so a confident classifier's probabilities past 255.5/256 are the grid's own rounding,
not a calibration range that is too narrow. A correct export passes `report --fail-on warning`;
the audit says it as an info, the diagnosis gives no clipping verdict.

Independent reference: the clip rate from numpy on the float interpreter's output and the
SOFTMAX output parameters read with the `tflite` flatbuffer package.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
import tflite
from ai_edge_litert.interpreter import Interpreter

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.diagnosis import diagnose_layer
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model
from tests.helpers import verdict_fixtures as vf
from tests.helpers.paths import REPO


@pytest.fixture(scope="module")
def conf(tmp_path_factory):
    paths = vf.confident(REPO / ".fixture-cache")
    npz = tmp_path_factory.mktemp("conf") / "cal.npz"
    np.savez(npz, features=vf.inputs(64, 0))  # the calibration samples: no tensor but SOFTMAX's saturates
    return paths, npz


def _softmax_params(path) -> tuple[float, int]:
    m = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
    sg = m.Subgraphs(0)
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        if m.OperatorCodes(op.OpcodeIndex()).BuiltinCode() == tflite.BuiltinOperator.SOFTMAX:
            q = sg.Tensors(op.Outputs(0)).Quantization()
            return float(q.Scale(0)), int(q.ZeroPoint(0))
    raise AssertionError("no SOFTMAX")


def _independent_clip_rate(paths, x) -> float:
    it = Interpreter(model_path=str(paths["conf_float"]))
    it.allocate_tensors()
    i, o = it.get_input_details()[0], it.get_output_details()[0]
    ys = []
    for s in x:
        it.set_tensor(i["index"], s[None])
        it.invoke()
        ys.append(it.get_tensor(o["index"]).copy())
    y = np.concatenate(ys)
    s, z = _softmax_params(paths["conf_int8"])
    lo, hi = s * (-128 - z - 0.5), s * (127 - z + 0.5)
    return float(np.mean((y < lo) | (y > hi)))


def test_a_correct_export_whose_softmax_saturates_passes_fail_on_warning(conf, tmp_path):
    paths, npz = conf
    assert _softmax_params(paths["conf_int8"]) == (1 / 256, -128)
    rate = _independent_clip_rate(paths, np.load(npz)["features"])
    assert rate > 0.02  # what the fixture is: a few percent of the probabilities past the last step
    out = tmp_path / "r.json"
    r = subprocess.run([sys.executable, "-m", "inspector", "report", str(paths["conf_float"]), str(paths["conf_int8"]),
                        "--inputs", str(npz), "--isolated", "--json", str(out), "--fail-on", "warning"],
                       capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads(out.read_text())
    soft = [f for f in rep["audit"]["findings"] if f["op_type"] == "SOFTMAX"]
    assert [f["severity"] for f in soft] == ["info"] and soft[0]["rule"] == "fixed-grid"
    assert soft[0]["observed"] == pytest.approx(rate)
    assert not [f for f in rep["audit"]["findings"] if f["severity"] != "info"]
    layer = next(lay for lay in rep["comparison"]["layers"] if lay["op_type"] == "SOFTMAX")
    assert layer["metrics"]["clip_rate"] == pytest.approx(rate)
    assert layer["diagnosis"]["cause"] != "clipping"


def test_a_saturating_fixed_output_gets_no_clipping_verdict_nor_a_fix(conf):
    """Even with an own error far above rounding, the fixed grid is not a range to re-calibrate
    (the diagnosis proposed a16w8 there, which the edit refused: issue 26 §8)."""
    paths, npz = conf
    res = compare_models(str(paths["conf_float"]), str(paths["conf_int8"]),
                         CompareOptions(samples=SampleSettings(source=str(npz), count=None), isolated=True))  # fmt: skip
    fm, qm = load_model(paths["conf_float"]), load_model(paths["conf_int8"])
    soft = next(lay for lay in res.layers if lay.op_type == "SOFTMAX")
    m = replace(soft.metrics, clip_rate=0.05, rmse_over_scale=3.0, mse=1e-6)
    d = diagnose_layer(fm, qm, replace(soft, metrics=m, isolated=m, float_min=0.0, float_max=3.0))
    assert d.cause == "none" and d.fix is None and "fixed output grid" in d.evidence
    fc = next(lay for lay in res.layers if lay.op_type == "FULLY_CONNECTED")
    m = replace(fc.metrics, clip_rate=0.05, rmse_over_scale=3.0, mse=1e-6)
    hi = fc.scale[0] * (127 - fc.zero_point[0])
    d = diagnose_layer(fm, qm, replace(fc, metrics=m, isolated=m, float_min=0.0, float_max=3.0 * hi))
    assert d.cause == "clipping" and d.fix.edit == "recalibrate"
