"""Parsed tensors and quantization agree with the LiteRT interpreter's own tensor details."""

from __future__ import annotations

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from inspector.core.quantmath.quant import dequantize, representable_range
from inspector.core.tflite.model import Model
from tests.helpers.paths import ALL_FIXTURES

RUNNABLE = [f for f in ALL_FIXTURES if f != "custom_op"]


@pytest.mark.parametrize("name", RUNNABLE)
def test_tensors_match_interpreter(fixture_path, name):
    path = fixture_path(name)
    model = Model(path)
    interp = Interpreter(model_path=str(path))
    details = {d["index"]: d for d in interp.get_tensor_details()}
    sg = model.main
    assert details, "interpreter reported no tensors"
    checked = 0
    for t in sg.tensors:
        d = details.get(t.index)
        if d is None:  # the interpreter lists only tensors of the primary subgraph it can see
            continue
        assert d["name"] == t.name
        if t.dtype not in ("resource", "variant", "string", "int4"):
            assert np.dtype(d["dtype"]).name == t.dtype, t.name
        assert tuple(d["shape_signature"]) == t.shape_signature or tuple(d["shape"]) == t.shape, t.name
        qp = d["quantization_parameters"]
        if t.quantization is None:
            assert len(qp["scales"]) == 0, t.name
        else:
            np.testing.assert_allclose(qp["scales"], t.quantization.scales, rtol=1e-7)
            np.testing.assert_array_equal(qp["zero_points"], t.quantization.zero_points)
            assert qp["quantized_dimension"] == t.quantization.quantized_dimension
        checked += 1
    assert checked == len(details) or checked >= len(sg.tensors) * 0.9


@pytest.mark.parametrize("name", ["int8", "int8_io", "a16w8", "dynamic", "float", "float16"])
def test_constant_data_matches_interpreter(fixture_path, name):
    path = fixture_path(name)
    model = Model(path)
    interp = Interpreter(model_path=str(path), experimental_preserve_all_tensors=True)
    interp.allocate_tensors()
    n = 0
    for t in model.main.tensors:
        data = model.tensor_data(t)
        if data is None:
            continue
        expected = interp.get_tensor(t.index)
        np.testing.assert_array_equal(data, expected, err_msg=t.name)
        assert not data.flags.owndata, "constant data must be a view over the mapped file"
        n += 1
    assert n >= 8


def test_per_channel_weights_dequantize(fixture_path):
    """Dequantized conv weights, computed independently, are close to the float model's weights."""
    fq, fi = Model(fixture_path("float")), Model(fixture_path("int8"))
    w_int = next(t for t in fi.main.tensors if "conv2" in t.name and t.is_constant and t.dtype == "int8")
    q = w_int.quantization
    assert q.per_channel and q.quantized_dimension == 0 and q.num_channels == w_int.shape[0] == 32
    raw = fi.tensor_data(w_int)
    ours = dequantize(raw, q)
    indep = np.stack([raw[c].astype(np.float64) * q.scales[c] for c in range(32)])
    np.testing.assert_allclose(ours, indep, rtol=0, atol=0)
    # symmetric int8 weights: the scale is max|w| / 127 per channel, so the float weights agree to S/2
    w_float = next(t for t in fq.main.tensors if t.is_constant and t.shape == w_int.shape and t.dtype == "float32")
    wf = fq.tensor_data(w_float).astype(np.float64)
    err = np.abs(wf - ours).reshape(32, -1).max(axis=1)
    assert np.all(err <= np.asarray(q.scales) / 2 + 1e-9)
    np.testing.assert_allclose(np.asarray(q.scales), np.abs(wf).reshape(32, -1).max(axis=1) / 127, rtol=1e-5)


def test_representable_range(fixture_path):
    m = Model(fixture_path("int8"))
    t = next(t for t in m.main.tensors if t.name.endswith("Relu;cnn_1/conv1_1/convolution"))
    lo, hi = representable_range(t.quantization, "int8")
    s, z = t.quantization.scales[0], t.quantization.zero_points[0]
    assert lo[0] == pytest.approx(s * (-128 - z)) and hi[0] == pytest.approx(s * (127 - z))


def test_special_models_parse(fixture_path):
    f16 = Model(fixture_path("float16"))
    deq = [op for op in f16.main.ops if op.type == "DEQUANTIZE"]
    assert deq and all(f16.main.tensors[op.inputs[0]].dtype == "float16" for op in deq)
    sparse = Model(fixture_path("sparse"))
    assert any(t.sparsity is not None for t in sparse.main.tensors)
    custom = Model(fixture_path("custom_op"))
    assert [op.type for op in custom.main.ops if op.is_custom] == ["MyCustomSoftmax"]
    assert Model(fixture_path("no_signature")).signatures == ()
    multi = Model(fixture_path("multi_subgraph"))
    assert len(multi.subgraphs) >= 3 and multi.main.ops[0].type == "WHILE"
    stateful = Model(fixture_path("stateful_int8"))
    assert any(t.dtype == "resource" for sg in stateful.subgraphs for t in sg.tensors)
    assert any(op.type == "VAR_HANDLE" for op in stateful.main.ops)


def test_sub_byte_unpacking():
    from inspector.core.tflite.model import _unpack_bits

    raw = np.array([0x21, 0xF8, 0x7F], np.uint8)
    np.testing.assert_array_equal(_unpack_bits(raw, 4, True), [1, 2, -8, -1, -1, 7])
    np.testing.assert_array_equal(_unpack_bits(raw, 4, False), [1, 2, 8, 15, 15, 7])
    # int2, four per byte, low bits first: 0x21 = 0b00_10_00_01 -> 1, 0, -2, 0
    np.testing.assert_array_equal(_unpack_bits(raw[:2], 2, True), [1, 0, -2, 0, 0, -2, -1, -1])








