"""Every fix the diagnosis proposes applies (issue 26 §8): on every diagnosis fixture (the planted
causes, the healthy twins, the transformer, the saturating classifier), the fixes of the real
comparison and of every layer pushed past each alarm (saturating, coarse), turned into a plan by
`diagnosis_fix.fix_plan` as Apply fix does and applied by the surgical requantize, give a model
LiteRT runs. The diagnosis proposed a16w8 for SOFTMAX/LOGISTIC/TANH/MEAN from a list of its own
while the edit accepted only op facts' `A16W8_OPS` (without them): Apply fix failed there.

Independent check: the edited bytes are run by a fresh LiteRT interpreter on one sample.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.diagnosis import diagnose_layer
from inspector.core.requantize.diagnosis_fix import fix_plan
from inspector.core.requantize.surgical import apply_plan
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model
from inspector.core.tflite.op_facts import A16W8_OPS
from tests.helpers import diagnosis_fixtures as dx
from tests.helpers import verdict_fixtures as vf
from tests.helpers.paths import REPO
from tests.helpers.task_fixtures import TaskFixtures, make_dataset
from tests.helpers.transformer_fixtures import transformer_path

CACHE = REPO / ".fixture-cache"


def _pushed(layer):
    """The layer as if it clipped (5 %, 3 steps of own error) and as if it used 5 % of its range."""
    if layer.scale is None or not layer.scale or layer.zero_point is None:
        return []
    hi = layer.scale[0] * (127 - layer.zero_point[0])
    clip = replace(layer.metrics, clip_rate=0.05, rmse_over_scale=3.0, mse=1e-6)
    coarse = replace(layer.metrics, range_use=0.05, sqnr_db=20.0, clip_rate=0.0)
    return [replace(layer, metrics=clip, isolated=clip, float_min=0.0, float_max=3.0 * abs(hi)),
            replace(layer, metrics=coarse, isolated=coarse)]  # fmt: skip


def _cases(tmp):
    paths = dx.models(CACHE)
    f, q = paths["diag_float"], paths["diag_int8"]
    cal = tmp / "diag.npz"
    np.savez(cal, image=make_dataset(16, seed=3)[0])
    data = q.read_bytes()
    ops = {name: dx.op_index(q, name) for name in ("dw", "conv2")}
    plants = {
        "clipping": dx.scale_output(data, ops["conv2"], 0.25),
        "resolution": dx.scale_output(data, ops["conv2"], 12.0),
        "weight_channels": dx.per_tensor_weights(data, ops["dw"]),
        "bias_shift": dx.shift_bias(data, ops["conv2"], 3.0),
        "weight_rounding": dx.coarsen_weights(data, ops["conv2"], 16),
    }
    cases = [("diag healthy", f, q, cal)]
    for cause, b in plants.items():
        p = tmp / f"{cause}.tflite"
        p.write_bytes(b)
        cases.append((cause, f, p, cal))
    tf = TaskFixtures(CACHE)
    cls = tf.models()
    cases.append(("classifier", cls["cls_float"], cls["cls_int8"], tf.npz(16)))
    conf = vf.confident(CACHE)
    ccal = tmp / "conf.npz"
    np.savez(ccal, features=vf.inputs(16, 0))
    cases.append(("confident softmax", conf["conf_float"], conf["conf_int8"], ccal))
    cases.append(("transformer", transformer_path(CACHE, "float"), transformer_path(CACHE, "int8"), None))
    return cases


def _runs(data: bytes) -> None:
    it = Interpreter(model_content=data)
    it.allocate_tensors()
    for d in it.get_input_details():
        it.set_tensor(d["index"], np.zeros(d["shape"], d["dtype"]))
    it.invoke()
    for d in it.get_output_details():
        assert np.all(np.isfinite(it.get_tensor(d["index"]).astype(np.float64)))


def test_every_fix_the_diagnosis_proposes_applies(tmp_path):
    applied = []
    for name, f, q, cal in _cases(tmp_path):
        samples = SampleSettings(count=8, seed=0, source=None if cal is None else str(cal))
        res = compare_models(str(f), str(q), CompareOptions(samples=samples, isolated=True))
        fm, qm = load_model(f), load_model(q)
        fixes = {lay.diagnosis.fix for lay in res.layers if lay.diagnosis is not None and lay.diagnosis.fix is not None}
        for lay in res.layers:
            for pushed in _pushed(lay):
                d = diagnose_layer(fm, qm, pushed)
                if d.fix is not None:
                    fixes.add(d.fix)
        assert fixes, name
        for fix in sorted(fixes, key=lambda x: (x.edit, x.ops)):
            if fix.edit == "a16w8":
                assert all(qm.main.ops[op].type in A16W8_OPS for op in fix.ops), (name, fix)
            try:
                out = apply_plan(str(f), str(q), fix_plan(fix, samples))
            except Exception as e:  # noqa: BLE001 - name the case that failed
                pytest.fail(f"{name}: the proposed fix {fix} does not apply: {e}")
            _runs(out.model_bytes)
            applied.append((name, fix.edit))
    print(applied)
    assert {"recalibrate", "per_channel", "bias_correct", "weight_rounding"} <= {e for _, e in applied}
