"""Quantizer-route traps, each reproduced on a converter-built fixture and then repaired.

Each trap has a reproduction (the repair switched off: the runtime refuses the quantizer's model
with the error users saw) and a test of the repair, checked on an independent parse of the
produced flatbuffer and on interpreter outputs compared with the float model here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ai_edge_litert import schema_py_generated as schema
from ai_edge_litert.interpreter import Interpreter, OpResolverType

from inspector.core.errors import RuntimeFailure
from inspector.core.requantize import model_prep, quantizer_route
from inspector.core.requantize.plan import Plan
from inspector.core.requantize.quantizer_route import requantize
from tests.helpers.fixture_models import representative_images
from tests.helpers.quantizer_trap_fixtures import trap_path
from tests.helpers.reference import output_rows
from tests.helpers.reference import sqnr_db as _sqnr

REPO = Path(__file__).resolve().parents[3]

REF = OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
XNN = OpResolverType.AUTO
OPS = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
TYPES = {v: k for k, v in vars(schema.TensorType).items() if not k.startswith("_")}


@pytest.fixture(scope="module")
def trap():
    return lambda name: trap_path(REPO / ".fixture-cache", name)


def _parse(data: bytes):
    return schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(bytearray(data), 0))


def _ops(data: bytes):
    """(type name, op, subgraph, model) for every op of subgraph 0."""
    m = _parse(data)
    sg = m.subgraphs[0]
    for op in sg.operators:
        oc = m.operatorCodes[op.opcodeIndex]
        code = max(oc.builtinCode, oc.deprecatedBuiltinCode)
        kind = oc.customCode.decode() if code == schema.BuiltinOperator.CUSTOM else OPS[code]
        yield kind, op, sg, m


# --- a. operator codes only in the legacy field -> int8 conv bias --------------------------


def test_legacy_opcodes_trap_reproduces_the_int8_bias(trap, monkeypatch):
    monkeypatch.setattr(model_prep, "_legacy_op_codes", lambda model, prep: None)
    monkeypatch.setattr(quantizer_route, "MAX_KEPT_FLOAT", 0)
    with pytest.raises(RuntimeFailure, match=r"bias->type != kTfLiteInt32 \(INT8 != INT32\)"):
        requantize(trap("legacy_opcodes"), Plan(), representative_images(4, 1, (16, 16, 3)))


def test_legacy_opcodes_are_repaired(trap):
    src = trap("legacy_opcodes")
    r = requantize(src, Plan(), representative_images(8, 1, (16, 16, 3)))
    assert any(n.startswith("fixed: the model stores") and "legacy field" in n for n in r.notes)
    convs = [(op, sg, m) for kind, op, sg, m in _ops(r.model_bytes) if kind == "CONV_2D"]
    assert len(convs) == 3
    for op, sg, _ in convs:
        x, w, b = (sg.tensors[i] for i in op.inputs[:3])
        assert TYPES[x.type] == "INT8" and TYPES[w.type] == "INT8" and TYPES[b.type] == "INT32"
        assert not np.any(w.quantization.zeroPoint)
        want = x.quantization.scale[0] * np.asarray(w.quantization.scale, dtype=np.float64)
        np.testing.assert_allclose(b.quantization.scale, want, rtol=1e-6)
    held_out = representative_images(8, 42, (16, 16, 3))
    ref = _run(src.read_bytes(), held_out)
    for resolver in (REF, XNN):
        assert _sqnr(ref, _run(r.model_bytes, held_out, resolver)) > 25


def test_an_op_the_runtime_refuses_is_kept_float_as_a_last_resort(trap, monkeypatch):
    """Without the operator-code repair the refused convs are kept float, one by one."""
    monkeypatch.setattr(model_prep, "_legacy_op_codes", lambda model, prep: None)
    src = trap("legacy_opcodes")
    r = requantize(src, Plan(), representative_images(4, 1, (16, 16, 3)))
    kept = [n for n in r.notes if n.startswith("kept float:")]
    assert kept and all("INT8 != INT32" in n or "refused" in n for n in kept)
    float_convs = [
        op
        for kind, op, sg, _ in _ops(r.model_bytes)
        if kind == "CONV_2D" and TYPES[sg.tensors[op.inputs[0]].type] == "FLOAT32"
    ]
    assert len(float_convs) == len(kept)
    images = representative_images(4, 42, (16, 16, 3))
    ref = _run(src.read_bytes(), images)
    for resolver in (REF, XNN):
        assert _sqnr(ref, _run(r.model_bytes, images, resolver)) > 20
    rule_regexes = [rule["regex"] for rule in r.recipe if rule["algorithm_key"] == "no_quantize"]
    assert len(rule_regexes) >= len(kept)  # the saved recipe reproduces the fallback


# --- b. dead depthwise + ReLU6 -> clamp overflow ------------------------------------------


@pytest.mark.parametrize("base", ["int8", "a16w8"])
def test_dead_depthwise_trap_reproduces_the_overflow(trap, monkeypatch, base):
    monkeypatch.setattr(quantizer_route, "widen_clamped_ranges", lambda *a, **k: [])
    monkeypatch.setattr(quantizer_route, "MAX_KEPT_FLOAT", 0)
    with pytest.raises(
        RuntimeFailure, match=r"DEPTHWISE_CONV_2D.*no_integer_overflow_from_quantization"
    ):
        requantize(
            trap("dead_depthwise"), Plan(base=base), representative_images(4, 1, (16, 16, 3))
        )


def _dw_output(data: bytes):
    dw = [(op, sg) for kind, op, sg, _ in _ops(data) if kind == "DEPTHWISE_CONV_2D"]
    assert len(dw) == 1
    return dw[0][1].tensors[dw[0][0].outputs[0]]


def test_dead_depthwise_is_repaired(trap):
    src = trap("dead_depthwise")
    r = requantize(src, Plan(), representative_images(8, 1, (16, 16, 3)))
    repaired = [n for n in r.notes if n.startswith("repaired:")]
    assert len(repaired) == 1 and "2 activation tensor(s) spanned less than 2e-06" in repaired[0]
    assert "2 took the range of the first tensor downstream" in repaired[0]
    assert not any(n.startswith("kept float:") for n in r.notes)
    out = _dw_output(r.model_bytes)
    assert TYPES[out.type] == "INT8"
    scale = float(out.quantization.scale[0])
    assert 6.0 / scale < 2**31  # the kernel's ReLU6 clamp, round(6 / S), fits in int32
    add = next(op for kind, op, sg, _ in _ops(r.model_bytes) if kind == "ADD")
    sg0 = next(_ops(r.model_bytes))[2]
    assert scale == pytest.approx(float(sg0.tensors[add.outputs[0]].quantization.scale[0]))
    # Downstream of the repaired tensors (the dead branch adds exactly 0 to the residual) the
    # int8 values track the float ones; the model's own output error is left to calibration.
    held_out = representative_images(4, 42, (16, 16, 3))
    want = _tensor(src.read_bytes(), held_out, "residual_1/Add")
    got = _tensor(r.model_bytes, held_out, "residual_1/Add")
    assert _sqnr(want, got) > 35
    out_ref, out_xnn = _run(r.model_bytes, held_out, REF), _run(r.model_bytes, held_out, XNN)
    assert _sqnr(_run(src.read_bytes(), held_out), out_xnn) > 10
    deq = next(op for kind, op, sg, _ in _ops(r.model_bytes) if kind == "DEQUANTIZE")
    step = float(next(_ops(r.model_bytes))[2].tensors[deq.inputs[0]].quantization.scale[0])
    assert np.max(np.abs(out_ref - out_xnn)) <= 3 * step + 1e-6  # a few output steps apart


def test_dead_depthwise_with_int16_activations(trap):
    src = trap("dead_depthwise")
    r = requantize(src, Plan(base="a16w8"), representative_images(4, 1, (16, 16, 3)))
    out = _dw_output(r.model_bytes)
    assert TYPES[out.type] == "INT16" and out.quantization.zeroPoint[0] == 0
    assert 6.0 / float(out.quantization.scale[0]) < 2**31
    held_out = representative_images(4, 42, (16, 16, 3))
    want = _tensor(src.read_bytes(), held_out, "residual_1/Add")
    assert _sqnr(want, _tensor(r.model_bytes, held_out, "residual_1/Add")) > 35


@pytest.mark.parametrize(
    "bits, want", [(8, (-1e-6, 1e-6)), (16, (0.0, 6.0))], ids=["int8-floor", "int16-clamp"]
)
def test_a_degenerate_tail_is_floored_or_clamped(trap, bits, want):
    """With nothing downstream to borrow from, a dead ReLU6 output is widened to 2e-6 (its int8
    clamp then fits: 6 / (2e-6/255) < 2^31) or, on the int16 grid, to the clamp range 0..6."""
    from inspector.core.requantize.clamp_ranges import widen_clamped_ranges
    from inspector.core.tflite import edit as fe

    model = fe.read(trap("dead_depthwise").read_bytes())
    sg = model.subgraphs[0]
    dw = next(op for op in sg.operators if fe.op_name(model, op) == "DEPTHWISE_CONV_2D")
    name = fe.tensor_name(sg.tensors[dw.outputs[0]])
    zero = {"min": np.zeros((1,), np.float32), "max": np.zeros((1,), np.float32)}
    qsvs = {name: dict(zero)}  # nothing below it was calibrated
    widened = widen_clamped_ranges(model, qsvs, bits)
    assert [w.tensor for w in widened] == [name]
    np.testing.assert_allclose([qsvs[name]["min"][0], qsvs[name]["max"][0]], want, atol=1e-12)


def _tensor(data: bytes, images: np.ndarray, suffix: str) -> np.ndarray:
    """The dequantized values of the tensor whose name ends with `suffix`, over `images`."""
    rows = []
    for i in range(len(images)):
        it = Interpreter(
            model_content=data,
            experimental_op_resolver_type=REF,
            experimental_preserve_all_tensors=True,
        )
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], images[i : i + 1])
        it.invoke()
        d = next(d for d in it.get_tensor_details() if d["name"].endswith(suffix))
        scale, zp = d["quantization"]
        v = it.get_tensor(d["index"]).astype(np.float64)
        rows.append((v - zp) * scale if scale else v)
    return np.concatenate(rows)


def test_random_mobilenet_v2_is_refused_without_the_repair_and_runs_with_it(trap, monkeypatch):
    """The real model the issue names: a converter-built MobileNetV2 160x160."""
    src = trap("mobilenet_v2_160")
    images = representative_images(2, 1, (160, 160, 3))
    r = requantize(src, Plan(), images)
    assert any(n.startswith("repaired:") and "spanned less than 2e-06" in n for n in r.notes)
    for kind, op, sg, _ in _ops(r.model_bytes):
        if kind in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            out = sg.tensors[op.outputs[0]]
            assert TYPES[out.type] == "INT8" and 6.0 / out.quantization.scale[0] < 2**31
    out_ref, out_xnn = _run(r.model_bytes, images[:1], REF), _run(r.model_bytes, images[:1], XNN)
    assert out_ref.shape == out_xnn.shape == (1, 1000)

    monkeypatch.setattr(quantizer_route, "widen_clamped_ranges", lambda *a, **k: [])
    monkeypatch.setattr(quantizer_route, "MAX_KEPT_FLOAT", 0)
    with pytest.raises(
        RuntimeFailure, match=r"DEPTHWISE_CONV_2D.*no_integer_overflow_from_quantization"
    ):
        requantize(src, Plan(), images)


# --- c. a custom op only the XNNPACK delegate provides ------------------------------------


def test_xnnpack_only_custom_op_trap_reproduces(trap, monkeypatch):
    monkeypatch.setattr(quantizer_route, "delegate_only_custom_ops", lambda *a: None)
    with pytest.raises(RuntimeFailure, match="Convolution2DTransposeBias"):
        requantize(trap("transpose_conv_bias"), Plan(), representative_images(2, 1, (8, 8, 3)))


def test_xnnpack_only_custom_op_calibrates_and_validates_with_xnnpack(trap):
    src, builtin = trap("transpose_conv_bias"), trap("transpose_conv_builtin")
    images = representative_images(8, 1, (8, 8, 3))
    with pytest.raises(RuntimeError, match="unresolved custom op"):
        _run(src.read_bytes(), images[:1], REF)  # the reference kernels cannot run the input
    np.testing.assert_allclose(  # the fixture computes what the converter's TRANSPOSE_CONV does
        _run(src.read_bytes(), images, XNN), _run(builtin.read_bytes(), images), atol=1e-4
    )
    r = requantize(src, Plan(), images)
    assert any("Convolution2DTransposeBias" in n and "XNNPACK" in n for n in r.notes)
    kinds = {kind: (op, sg) for kind, op, sg, _ in _ops(r.model_bytes)}
    op, sg = kinds["Convolution2DTransposeBias"]
    assert all(TYPES[sg.tensors[i].type] == "FLOAT32" for i in op.inputs)
    conv_in = kinds["CONV_2D"][1].tensors[kinds["CONV_2D"][0].inputs[0]]
    assert TYPES[conv_in.type] == "INT8"
    held_out = representative_images(8, 42, (8, 8, 3))
    ref = _run(builtin.read_bytes(), held_out)
    assert _sqnr(ref, _run(r.model_bytes, held_out, XNN)) > 25


def _run(data: bytes, images: np.ndarray, resolver=REF) -> np.ndarray:
    return output_rows(data, images, resolver)
