"""The litert-quantizer route seeded from the user's quantized model B (`--calibrate-from`).

Checked against an independent flatbuffer parse (ai_edge_litert's generated schema) of B and of
the produced model, and against interpreter values computed here with numpy.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from ai_edge_litert import schema_py_generated as schema
from ai_edge_litert.interpreter import Interpreter

from inspector.core.requantize.plan import Override, Plan
from inspector.core.requantize.quantizer_route import requantize
from inspector.core.samples.settings import SampleSettings
from tests.helpers.fixture_models import representative_images
from tests.helpers.reference import output_rows as _run
from tests.helpers.reference import sqnr_db as _sqnr

INT8 = schema.TensorType.INT8
LOGITS = "cnn_1/logits_1/MatMul1"
LOGITS_OP = "FULLY_CONNECTED#1"


def _parse(data: bytes):
    return schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(bytearray(data), 0))


def _act_params(data: bytes) -> dict[str, tuple[float, int]]:
    """(scale, zero point) of every int8 activation a compute op reads or writes, keyed by the
    op's type, its rank among ops of that type and the operand ("CONV_2D#1:in0")."""
    m = _parse(data)
    sg = m.subgraphs[0]
    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    seen: dict[str, int] = {}
    out = {}
    for op in sg.operators:
        code = m.operatorCodes[op.opcodeIndex]
        kind = max(code.builtinCode, code.deprecatedBuiltinCode)
        if kind in (schema.BuiltinOperator.QUANTIZE, schema.BuiltinOperator.DEQUANTIZE):
            continue
        seen[names[kind]] = seen.get(names[kind], -1) + 1
        name = f"{names[kind]}#{seen[names[kind]]}"
        for role, ids in (("in", op.inputs), ("out", op.outputs)):
            for k, ti in enumerate(ids):
                t = sg.tensors[ti] if ti >= 0 else None
                if t is None or t.type != INT8 or m.buffers[t.buffer].data is not None:
                    continue
                q = t.quantization
                out[f"{name}:{role}{k}"] = (float(q.scale[0]), int(q.zeroPoint[0]))
    return out


@pytest.fixture(scope="module")
def pair(fixture_path):
    return fixture_path("float"), fixture_path("int8")


@pytest.fixture(scope="module")
def seeded_no_change(pair):
    # Calibration samples deliberately unlike the converter's (other seed, a quarter of the range):
    # without seeding every scale would move.
    samples = 0.25 * representative_images(8, seed=11)
    return requantize(pair[0], Plan(), samples, calibrate_from=pair[1])


def test_no_change_plan_reproduces_b_activation_params(pair, seeded_no_change):
    b = _act_params(pair[1].read_bytes())
    new = _act_params(seeded_no_change.model_bytes)
    # B's SHAPE op reads the int8 tensor, the quantizer's the float one: not a scale to compare
    assert len(b) >= 15 and set(b) - set(new) == {"SHAPE#0:in0"} and set(new) <= set(b)
    for key, (scale, zp) in new.items():
        assert zp == b[key][1], key
        assert scale == pytest.approx(b[key][0], rel=1e-6), key
    assert seeded_no_change.seeded_tensors >= 10
    assert any("calibration seeded from int8.tflite" in n for n in seeded_no_change.notes)
    assert seeded_no_change.to_json()["calibration"]["seeded_from"] == str(pair[1])


def test_without_seeding_the_same_samples_move_the_scales(pair):
    """The control: the test above would pass for nothing if the samples reproduced B anyway."""
    samples = 0.25 * representative_images(8, seed=11)
    plain = _act_params(requantize(pair[0], Plan(), samples).model_bytes)
    b = _act_params(pair[1].read_bytes())
    moved = [k for k in plain if plain[k][0] != pytest.approx(b[k][0], rel=1e-3)]
    assert len(moved) >= len(plain) // 2


def test_no_change_output_sqnr_is_b_s(pair, seeded_no_change):
    images = representative_images(16, seed=99)  # held out
    ref = _run(pair[0].read_bytes(), images)
    b = _sqnr(ref, _run(pair[1].read_bytes(), images))
    new = _sqnr(ref, _run(seeded_no_change.model_bytes, images))
    assert new >= b - 0.5, (new, b)


def test_a_changed_op_is_recalibrated_and_the_rest_keep_b(pair):
    """An override on the logits layer re-calibrates its output on the sample (min/max of one
    sample, computed here from the float model), while every other tensor keeps B's range."""
    sample = 0.25 * representative_images(1, seed=5)
    r = requantize(
        pair[0], Plan(overrides=(Override(LOGITS, "int8"),)), sample, calibrate_from=pair[1]
    )
    it = Interpreter(model_path=str(pair[0]), experimental_preserve_all_tensors=True)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], sample)
    it.invoke()
    idx = next(d["index"] for d in it.get_tensor_details() if d["name"] == LOGITS)
    x = it.get_tensor(idx)
    lo, hi = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    want_scale = (hi - lo) / 255
    want_zp = int(np.rint(-128 - lo / want_scale))

    b, new = _act_params(pair[1].read_bytes()), _act_params(r.model_bytes)
    got = new[f"{LOGITS_OP}:out0"]
    assert got[0] == pytest.approx(want_scale, rel=1e-5) and got[1] == want_zp
    assert got[0] != pytest.approx(b[f"{LOGITS_OP}:out0"][0], rel=1e-2)
    assert new["SOFTMAX#0:in0"] == got  # the same tensor, read by the softmax
    for key in set(b) & set(new):
        if key not in (f"{LOGITS_OP}:out0", "SOFTMAX#0:in0"):
            assert new[key][0] == pytest.approx(b[key][0], rel=1e-6), key
    assert any("1 re-calibrated on the samples" in n for n in r.notes)


def test_calibrate_from_a_float_model_is_refused(pair):
    from inspector.core.errors import InputError

    with pytest.raises(InputError, match="int8/int16 activations"):
        requantize(pair[0], Plan(), None, sample_settings=SampleSettings(count=1), calibrate_from=pair[0])


def test_cli_calibrate_from(pair, tmp_path, capsys):
    from inspector.cli import main

    out = tmp_path / "new.tflite"
    summary = tmp_path / "r.json"
    rc = main(["requantize", str(pair[0]), "--out", str(out), "--samples", "2",
               "--calibrate-from", str(pair[1]), "--json", str(summary)])  # fmt: skip
    assert rc == 0
    calibration = json.loads(summary.read_text())["calibration"]
    assert calibration["seeded_from"] == str(pair[1]) and calibration["seeded_tensors"] >= 10
    text = capsys.readouterr().out
    assert "calibration seeded from int8.tflite" in text
    new, b = _act_params(out.read_bytes()), _act_params(pair[1].read_bytes())
    assert len(new) >= 15
    assert all(new[k][1] == b[k][1] and new[k][0] == pytest.approx(b[k][0], rel=1e-6) for k in new)
    assert main(["requantize", str(pair[0]), "--out", str(tmp_path / "x.tflite"),
                 "--calibrate-from", str(tmp_path / "missing.tflite")]) == 2  # fmt: skip


def test_keep_float_with_seeding_keeps_b_range_for_the_consumers(pair):
    """A kept-float op's output is quantized back to B's range for its int8 consumer (here the
    softmax), so the rest of the model sees what it saw in B: output SQNR not below B's."""
    r = requantize(
        pair[0],
        Plan(overrides=(Override(LOGITS, "keep_float"),)),
        None,
        sample_settings=SampleSettings(count=4),
        calibrate_from=pair[1],
    )
    b, new = _act_params(pair[1].read_bytes()), _act_params(r.model_bytes)
    assert f"{LOGITS_OP}:out0" not in new  # the logits layer computes in float
    assert new["SOFTMAX#0:in0"] == pytest.approx(b["SOFTMAX#0:in0"], rel=1e-6)
    images = representative_images(32, seed=99)  # held out
    ref = _run(pair[0].read_bytes(), images)
    b_db = _sqnr(ref, _run(pair[1].read_bytes(), images))
    assert _sqnr(ref, _run(r.model_bytes, images)) >= b_db - 0.05
