"""The transformer family of the diagnosis zoo (issue 33): a digits encoder quantized by
litert-quantizer (int8 I/O, int8 activations and weights) whose first layer norm's MEAN was
calibrated too narrow (`tests/helpers/diagnosis_zoo_transformer.py`; held-out accuracy ~98 % float,
~73 % int8). The diagnosis names the root cause at that MEAN (range clipping), its fix
(re-calibrate it) gives back >= 90 % of the task drop on the held-out images, and no SOFTMAX (the
attention's or the output's: fixed output grids) gets a range cause. Every figure is checked
against numpy on LiteRT's outputs (the planted op found by its tensor's name in the interpreter,
its clip rate from A's preserved tensors and B's own quantization parameters).
"""

from __future__ import annotations

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from inspector.core.compare.options import CompareOptions
from inspector.core.requantize.blame import compare_and_blame
from inspector.core.requantize.diagnosis_fix import fix_plan
from inspector.core.requantize.surgical import apply_plan
from inspector.core.samples.holdout import split_samples
from inspector.core.samples.settings import SampleSettings
from tests.helpers import diagnosis_zoo as zoo
from tests.helpers import diagnosis_zoo_transformer as zt
from tests.helpers.paths import REPO
from tests.helpers.reference import model_outputs as _outputs

SAMPLES = 150
RANGE_CAUSES = ("clipping", "resolution", "input_range")


@pytest.fixture(scope="module")
def encoder():
    root = REPO / ".fixture-cache"
    models, npz = zt.models(root), zoo.held_out(root)
    f, q = str(models["tr_float"]), str(models["tr_int8"])
    opts = CompareOptions(samples=SampleSettings(SAMPLES, source=str(npz)))
    with np.load(npz) as z:
        images, labels = z["image"], z["labels"]
    return f, q, opts, compare_and_blame(f, q, opts), images, labels




def _planted(path: str) -> tuple[int, str]:
    """(op index, output tensor name) of the MEAN whose calibrated range was cut, by its name."""
    it = Interpreter(model_path=path)
    names = {t["index"]: t["name"] for t in it.get_tensor_details()}
    hits = [(o["index"], names[o["outputs"][0]]) for o in it._get_ops_details()
            if o["op_name"] == "MEAN" and zt.PLANTED[0] in names[o["outputs"][0]]
            and names[o["outputs"][0]].endswith(zt.PLANTED[1])]  # fmt: skip
    assert len(hits) == 1, hits
    return hits[0]


def test_the_root_cause_is_the_layer_norm_mean_and_its_fix_recovers_the_drop(encoder):
    f, q, opts, result, images, labels = encoder
    op, name = _planted(q)
    rc = result.root_causes[0]
    assert (rc.op_index, rc.op_type, rc.cause) == (op, "MEAN", "clipping")
    assert rc.fix is not None and (rc.fix.edit, rc.fix.ops) == ("recalibrate", (op,))
    layer = result.layer_for_op(op)
    assert layer.diagnosis.cause == "clipping" and layer.diagnosis.blame is not None
    # the clip rate shown: A's token means (preserved tensors) beyond B's int8 range of that tensor
    fi = Interpreter(model_path=f, experimental_preserve_all_tensors=True)
    fi.allocate_tensors()
    qi = Interpreter(model_path=q)
    s, z = next(t["quantization"] for t in qi.get_tensor_details() if t["name"] == name)
    a_index = next(t["index"] for t in fi.get_tensor_details() if t["name"] == name)
    means = []
    for img in images[:SAMPLES]:
        fi.set_tensor(fi.get_input_details()[0]["index"], img[None].astype(np.float32))
        fi.invoke()
        means.append(np.array(fi.get_tensor(a_index), np.float64).ravel())
    v = np.concatenate(means)
    clipped = float(np.mean((v > (127 - z + 0.5) * s) | (v < (-128 - z - 0.5) * s)))
    assert layer.metrics.clip_rate == pytest.approx(clipped, abs=1e-3) and clipped > 0.9
    # blame and the fix's gain: the re-calibrated model against B on the held-out samples
    ev = slice(split_samples(SAMPLES).evaluation_start, SAMPLES)
    fixed = apply_plan(f, q, fix_plan(rc.fix, opts.samples), runtime=opts.runtime)
    x = _outputs(f, images[ev])
    e_before = np.sum((x - _outputs(q, images[ev])) ** 2) / np.sum(x**2)
    e_after = np.sum((x - _outputs(fixed.model_bytes, images[ev])) ** 2) / np.sum(x**2)
    assert rc.share == pytest.approx(1 - e_after / e_before, abs=1e-6) and rc.share > 0.9
    assert rc.fix_gain_db == pytest.approx(10 * np.log10(e_before / e_after), abs=1e-5)
    # the task metric on every held-out image the fix did not calibrate on, by numpy argmax
    rest = slice(ev.start, None)
    acc = {k: 100 * np.mean(_outputs(m, images[rest]).argmax(1) == labels[rest])
           for k, m in (("float", f), ("int8", q), ("fixed", fixed.model_bytes))}  # fmt: skip
    print(acc)
    assert acc["float"] >= 95 and acc["int8"] < acc["float"] - 10, acc
    assert acc["fixed"] - acc["int8"] >= 0.9 * (acc["float"] - acc["int8"]), acc


def test_no_softmax_gets_a_range_cause(encoder):
    _f, q, _opts, result, _images, _labels = encoder
    it = Interpreter(model_path=q)
    softmax = [o["index"] for o in it._get_ops_details() if o["op_name"] == "SOFTMAX"]
    assert len(softmax) == 2  # the attention's and the output's
    causes = {lay.op_index: lay.diagnosis.cause for lay in result.layers if lay.diagnosis is not None}
    assert all(causes.get(k) not in RANGE_CAUSES for k in softmax), {k: causes.get(k) for k in softmax}
    assert all(rc.op_type != "SOFTMAX" for rc in result.root_causes)
