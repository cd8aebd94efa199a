"""Model families the diagnosis must name the root cause of (issue 33), built at test time
(`tests/helpers/diagnosis_zoo.py`: digits CNNs trained on scikit-learn's load_digits), every
measured figure checked against numpy on LiteRT's outputs of the edited model, run here with the
interpreter directly on the held-out samples.

- An integer-input model (int8 I/O, calibrated on dimmer images: ~9 % of the real input values
  beyond the input's int8 range): the root cause is `input_range` at op 0 (it reads the input;
  there is no QUANTIZE op), its fix widens the input's scale and zero point and says that the
  caller must quantize with the new ones; the widened model is fed with them.
"""

from __future__ import annotations

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from inspector.core.compare.diagnosis_text import root_cause_lines
from inspector.core.compare.options import CompareOptions
from inspector.core.requantize.blame import compare_and_blame
from inspector.core.requantize.diagnosis_fix import fix_plan
from inspector.core.requantize.surgical import apply_plan
from inspector.core.samples.holdout import split_samples
from inspector.core.samples.settings import SampleSettings
from tests.helpers import diagnosis_zoo as zoo
from tests.helpers.paths import REPO
from tests.helpers.reference import model_outputs as _outputs

SAMPLES = 150


@pytest.fixture(scope="module")
def zoo_models():
    root = REPO / ".fixture-cache"
    return zoo.models(root), zoo.held_out(root)




def test_integer_input_model_names_its_input_range_and_widens_it(zoo_models):
    models, npz = zoo_models
    f, q = str(models["intin_float"]), str(models["intin_int8"])
    opts = CompareOptions(samples=SampleSettings(SAMPLES, source=str(npz)))
    result = compare_and_blame(f, q, opts)
    with np.load(npz) as z:
        images = z["image"][:SAMPLES]
    rc = result.root_causes[0]
    assert (rc.op_index, rc.cause, rc.fix.edit, rc.fix.ops) == (0, "input_range", "input_range", (0,))
    layer0 = next(lay for lay in result.layers if lay.op_index == 0)
    assert layer0.diagnosis.cause == "input_range"
    # the share of real input values beyond the int8 input's range, from the interpreter's own parameters
    it = Interpreter(model_path=q)
    s, zp = it.get_input_details()[0]["quantization"]
    lo, hi = (-128 - zp) * s, (127 - zp) * s
    clipped = float(np.mean((images < lo) | (images > hi)))
    assert 0.05 < clipped < 0.10
    assert f"{100 * clipped:.1f}% of the real values" in rc.note
    # blame: the widened model against B on the held-out samples, fed each with its own input parameters
    ev = slice(split_samples(SAMPLES).evaluation_start, SAMPLES)
    x = _outputs(f, images[ev])
    widened = apply_plan(f, q, fix_plan(rc.fix, opts.samples), runtime=opts.runtime)
    e_before = np.sum((x - _outputs(q, images[ev])) ** 2) / np.sum(x**2)
    e_after = np.sum((x - _outputs(widened.model_bytes, images[ev])) ** 2) / np.sum(x**2)
    assert rc.share == pytest.approx(1 - e_after / e_before, abs=1e-6)
    assert rc.fix_gain_db == pytest.approx(10 * np.log10(e_before / e_after), abs=1e-5)
    assert rc.share > 0.6  # the input's range is most of the output error
    # the interface change: the new parameters are the edited model's own, and cover the real values
    wi = Interpreter(model_content=widened.model_bytes).get_input_details()[0]
    change = rc.interface_change["inputs"][0]
    assert (change["scale"], change["zero_point"]) == pytest.approx(wi["quantization"], rel=1e-6)
    assert (change["old_scale"], change["old_zero_point"]) == pytest.approx((s, zp), rel=1e-6)
    assert (127 - change["zero_point"]) * change["scale"] >= images[: ev.start].max() * (1 - 1e-6)
    assert "must quantize its inputs with the new scale and zero point" in rc.interface_change["statement"]
    assert rc.to_json()["interface_change"] == rc.interface_change
    assert "must quantize" in "\n".join(root_cause_lines(result))
    assert any("INTERFACE CHANGE" in n for n in widened.notes)
    assert widened.to_json()["interface_change"]["inputs"][0]["zero_point"] == change["zero_point"]


@pytest.mark.parametrize("decades", [2, 3])
def test_per_tensor_depthwise_spread_names_the_equalize_chain(zoo_models, decades):
    """Depthwise channels spread over 2 / 3 decades under per-tensor weights (DFQ's failure): the
    root cause is channel_imbalance at the first depthwise producer, the fix one equalize chain of
    the three depthwise -> 1x1 pairs, and it brings held-out accuracy from the float model's (>= 97 %)
    back to >= 95 % (the issue's figures; the zoo's training reached only 93.5-96 % float before)."""
    models, npz = zoo_models
    f, q = str(models[f"dw{decades}_float"]), str(models[f"dw{decades}_int8"])
    opts = CompareOptions(samples=SampleSettings(SAMPLES, source=str(npz)))
    result = compare_and_blame(f, q, opts)
    rc = result.root_causes[0]
    assert (rc.op_index, rc.cause, rc.fix.edit, rc.fix.ops) == (2, "channel_imbalance", "equalize", (2, 3, 4, 5, 6, 7))
    verdicts = {lay.op_index: lay.diagnosis.cause for lay in result.layers if lay.diagnosis is not None}
    assert [verdicts[i] for i in (2, 4, 6)] == ["channel_imbalance"] * 3
    assert [verdicts[i] for i in (3, 5, 7)] == ["inherited"] * 3
    with np.load(npz) as z:
        images, labels = z["image"], z["labels"]
    cal = split_samples(SAMPLES).evaluation_start
    fixed = apply_plan(f, q, fix_plan(rc.fix, opts.samples), runtime=opts.runtime)
    assert len(fixed.equalized) == 3
    ev = slice(cal, SAMPLES)
    x = _outputs(f, images[ev])
    e_before = np.sum((x - _outputs(q, images[ev])) ** 2) / np.sum(x**2)
    e_after = np.sum((x - _outputs(fixed.model_bytes, images[ev])) ** 2) / np.sum(x**2)
    assert rc.share == pytest.approx(1 - e_after / e_before, abs=1e-6)
    assert rc.fix_gain_db == pytest.approx(10 * np.log10(e_before / e_after), abs=1e-5)
    # task metric on every image the fix did not calibrate on (200), by numpy argmax of LiteRT outputs
    rest = slice(cal, None)
    acc = {k: 100 * np.mean(_outputs(m, images[rest]).reshape(len(labels[rest]), -1).argmax(1) == labels[rest])
           for k, m in (("float", f), ("int8", q), ("fixed", fixed.model_bytes))}  # fmt: skip
    print(acc)
    # int8 measured 93.5 % (2 decades; 66 % with the old average-pooled head) and 5.5 % (3 decades)
    assert acc["float"] >= 97 and acc["int8"] < acc["float"] - 3, acc
    # the figures: the fix reaches >= 95 % from float ~97 %, and >= 90 % of the drop
    assert acc["fixed"] >= 95, acc
    assert acc["fixed"] - acc["int8"] >= 0.9 * (acc["float"] - acc["int8"]), acc


def test_healthy_twin_is_quiet(zoo_models):
    """The same depthwise-separable CNN unplanted, per-channel weights (output ~33 dB, accuracy at
    float): no layer carries a cause, no root cause is named (before blame gated the rules: op 4
    channel_imbalance with equalize +1.4 dB, two layers inherited)."""
    models, npz = zoo_models
    f, q = str(models["healthy_float"]), str(models["healthy_int8"])
    opts = CompareOptions(samples=SampleSettings(SAMPLES, source=str(npz)))
    result = compare_and_blame(f, q, opts)
    with np.load(npz) as z:
        images = z["image"][:SAMPLES]
    ev = slice(split_samples(SAMPLES).evaluation_start, SAMPLES)
    x = _outputs(f, images[ev])
    sqnr = 10 * np.log10(np.sum(x**2) / np.sum((x - _outputs(q, images[ev])) ** 2))
    assert sqnr >= 30  # healthy, by numpy on LiteRT outputs
    assert result.root_causes == ()
    assert [lay.op_index for lay in result.layers if lay.diagnosis is not None and lay.diagnosis.cause != "none"] == []


def test_suggest_tries_the_equalize_chain_first_and_measures_it(zoo_models):
    """Suggest considers the whole-model edits (the DFQ equalize chain here) and keeps one only for
    its measured held-out gain; the figure it reports is numpy's on LiteRT outputs of that model."""
    from inspector.core.requantize.suggest_options import SurgicalSuggestOptions
    from inspector.core.requantize.suggest_surgical import suggest_surgical
    from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan

    models, npz = zoo_models
    f, q = str(models["dw2_float"]), str(models["dw2_int8"])
    settings = SampleSettings(SAMPLES, source=str(npz))
    res = suggest_surgical(f, q, 25.0, SurgicalSuggestOptions(samples=settings, max_evaluations=6))
    step = res.steps[0]
    assert (step.edit, step.ops) == ("equalize", (2, 3, 4, 5, 6, 7))
    chain = SurgicalPlan(tuple(Edit("equalize", f"op:{p}", None, (p, p + 1)) for p in (2, 4, 6)), settings)
    edited = apply_plan(f, q, chain).model_bytes
    with np.load(npz) as z:
        images = z["image"][:SAMPLES]
    ev = slice(split_samples(SAMPLES).evaluation_start, SAMPLES)
    x = _outputs(f, images[ev])
    sqnr = lambda y: 10 * np.log10(np.sum(x**2) / np.sum((x - y) ** 2))  # noqa: E731
    assert step.objective_sqnr_db == pytest.approx(sqnr(_outputs(edited, images[ev])), abs=1e-4)
    assert step.gain_db == pytest.approx(sqnr(_outputs(edited, images[ev])) - sqnr(_outputs(q, images[ev])), abs=1e-4)
    assert step.gain_db > 20


def test_relu6_between_the_pair_is_refused_with_the_reason(zoo_models, tmp_path):
    """The same spread depthwise pairs with ReLU6 fused into the depthwise ops (planted in the
    flatbuffer): equalize cannot take them (ReLU6 is not positively homogeneous), so there is no
    chain, and the blame note says why for each producer rather than staying silent."""
    from ai_edge_litert import schema_py_generated as schema

    from inspector.core.compare.pairing import pair_models
    from inspector.core.requantize.imbalance import dfq_chain, refused
    from inspector.core.tflite import edit as fe
    from inspector.core.tflite.model import load_model

    models, _ = zoo_models
    m = fe.read(models["dw2_int8"].read_bytes())
    sg = m.subgraphs[0]
    for k in (2, 4, 6):
        sg.operators[k].builtinOptions.fusedActivationFunction = schema.ActivationFunctionType.RELU6
    path = tmp_path / "dw2_relu6.tflite"
    path.write_bytes(fe.write(m))
    fm, qm = load_model(models["dw2_float"]), load_model(path)
    pairing = pair_models(fm, qm)
    assert dfq_chain(fm, qm, pairing) is None
    lines = refused(fm, qm, pairing)
    assert [ln.split("'")[0] for ln in lines] == [f"op {k}" for k in (2, 4, 6)]
    assert all("RELU6" in ln and "not positively homogeneous" in ln for ln in lines)
    r = load_model(models["dw2_float"])
    w = np.abs(np.asarray(r.tensor_data(r.main.tensors[r.main.ops[pairing.float_op_for(2)].inputs[1]]), np.float64))
    spread = w.reshape(-1, w.shape[-1]).max(0)
    assert f"spread {spread.max() / spread.min():.0f}x" in lines[0]
