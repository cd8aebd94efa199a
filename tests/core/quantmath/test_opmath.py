"""op_math against the runtime itself: the integer math it reports reproduces the reference
kernels' outputs bit for bit, and its parameters match the interpreter's own tensor details."""

from __future__ import annotations

import json

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter, OpResolverType

from inspector.core.compare.result import ComparisonResult
from inspector.core.quantmath.fixed_point import multiply_by_quantized_multiplier
from inspector.core.quantmath.opmath import op_math
from inspector.core.tflite.model import load_model
from tests.core.quantmath.test_opmath_fixed_point import reference_quantize_multiplier


def _run_reference(path, seed=0):
    """All tensors of one invoke with the reference kernels (BUILTIN_REF; the optimized ruy
    kernels round near-ties differently by one step), buffers preserved."""
    it = Interpreter(model_path=str(path), experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                     experimental_preserve_all_tensors=True)  # fmt: skip
    it.allocate_tensors()
    inp = it.get_input_details()[0]
    x = np.random.default_rng(seed).uniform(-1, 1, inp["shape"]).astype(np.float32)
    if inp["dtype"] == np.int8:
        s, z = inp["quantization"]
        x = np.clip(np.round(x / s) + z, -128, 127).astype(np.int8)
    it.set_tensor(inp["index"], x)
    it.invoke()
    return it


@pytest.fixture(scope="module")
def int8(fixture_path):
    path = fixture_path("int8")
    return load_model(path), _run_reference(path)


def _requant(acc, om, c_axis_last=True):
    c = om.conv
    out = np.empty_like(acc)
    for ch in range(acc.shape[-1]):
        k = ch if c.per_channel else 0
        out[..., ch] = multiply_by_quantized_multiplier(acc[..., ch], c.m0[k], c.shifts[k])
    return np.clip(out + c.output_zero_point, *c.clamp)


def test_fully_connected_int8_bit_exact(int8):
    model, it = int8
    om = op_math(model, 11)
    assert om.kernel_path == "full_integer_int8"
    sg = model.main
    op = sg.ops[11]
    q_in = it.get_tensor(op.inputs[0]).astype(np.int64)
    w = it.get_tensor(op.inputs[1]).astype(np.int64)
    c = om.conv
    acc = (q_in - c.input_zero_point) @ (w - np.asarray(c.weight_zero_points)[:, None]).T
    got = _requant(acc, om)
    want = it.get_tensor(op.outputs[0]).astype(np.int64)
    assert np.array_equal(got, want)


def test_conv_int8_bit_exact(int8):
    model, it = int8
    op = model.main.ops[3]  # 1x1 CONV_2D, VALID: a matmul over pixels
    assert op.type == "CONV_2D" and model.main.tensors[op.inputs[1]].shape[1:3] == (1, 1)
    om = op_math(model, 3)
    c = om.conv
    q_in = it.get_tensor(op.inputs[0]).astype(np.int64)
    w = it.get_tensor(op.inputs[1]).astype(np.int64)[:, 0, 0, :]  # [O, I]
    bias = it.get_tensor(op.inputs[2]).astype(np.int64)
    acc = np.einsum("nhwi,oi->nhwo", q_in - c.input_zero_point, w) + bias
    assert np.array_equal(_requant(acc, om), it.get_tensor(op.outputs[0]).astype(np.int64))


def test_add_int8_bit_exact(int8):
    model, it = int8
    op = model.main.ops[4]
    om = op_math(model, 4)
    r = om.rescale
    assert r.kind == "add_sub" and r.left_shift == 20
    ins = [om.tensor("input 1"), om.tensor("input 2")]
    out_t = om.tensor("output")
    scaled = []
    for t, m in zip(ins, r.multipliers[:2], strict=True):
        q = it.get_tensor(t.index).astype(np.int64)
        scaled.append(multiply_by_quantized_multiplier((q - t.zero_points[0]) << r.left_shift, m.m0, m.shift))
    mo = r.multipliers[2]
    got = np.clip(multiply_by_quantized_multiplier(scaled[0] + scaled[1], mo.m0, mo.shift) + out_t.zero_points[0], *r.clamp)
    assert np.array_equal(got, it.get_tensor(op.outputs[0]).astype(np.int64))
    # the multipliers are the kernel's formulas on the interpreter's own scales
    s1, s2, so = (it.get_tensor_details()[i]["quantization_parameters"]["scales"][0] for i in (*op.inputs, op.outputs[0]))
    twice = 2 * max(float(s1), float(s2))
    assert r.twice_max_input_scale == twice
    assert [m.real for m in r.multipliers] == [float(s1) / twice, float(s2) / twice, twice / ((1 << 20) * float(so))]


def test_conv_parameters_match_interpreter_and_reference_multiplier(int8):
    model, it = int8
    details = it.get_tensor_details()
    for idx in (1, 2, 3, 5, 11, 12):
        op = model.main.ops[idx]
        om = op_math(model, idx)
        c = om.conv
        qp = [details[i]["quantization_parameters"] for i in (op.inputs[0], op.inputs[1], op.outputs[0])]
        s1, s2, s3 = float(qp[0]["scales"][0]), qp[1]["scales"].astype(np.float64), float(qp[2]["scales"][0])
        assert c.input_scale == s1 and c.output_scale == s3
        assert np.array_equal(c.weight_scales, s2)
        assert c.output_zero_point == int(qp[2]["zero_points"][0])
        m = s1 * s2 / s3
        assert np.array_equal(c.multipliers, m)
        assert [(a, b) for a, b in zip(c.m0, c.shifts, strict=True)] == [reference_quantize_multiplier(float(v)) for v in m]
        if len(op.inputs) > 2 and op.inputs[2] >= 0:
            assert c.bias_dtype == "int32"
            assert np.allclose(c.bias_scale_ratio, 1.0, rtol=1e-6, atol=0)
        # representable ranges of the output: S*(qmin - Z), S*(qmax - Z)
        out = om.tensor("output")
        z = int(qp[2]["zero_points"][0])
        assert out.range_lo == (s3 * (-128 - z),) and out.range_hi == (s3 * (127 - z),)


def test_paths_and_fixed_outputs(fixture_path):
    m = load_model(fixture_path("int8"))
    paths = [op_math(m, i).kernel_path for i in range(len(m.main.ops))]
    types = [op.type for op in m.main.ops]
    assert paths[types.index("QUANTIZE")] == "full_integer_int8"
    assert paths[types.index("SHAPE")] == "other"
    sm = op_math(m, types.index("SOFTMAX"))
    assert sm.rescale.kind == "fixed_output"
    assert "0.00390625" in sm.explanation[0] and "-128" in sm.explanation[0]
    a16 = load_model(fixture_path("a16w8"))
    conv = op_math(a16, 1)
    assert conv.kernel_path == "full_integer_16x8" and conv.conv.accumulator == "int64" and conv.conv.bias_dtype == "int64"
    add = op_math(a16, [o.type for o in a16.main.ops].index("ADD"))
    assert add.rescale.left_shift == 15
    f16 = load_model(fixture_path("float16"))
    conv_i = [o.type for o in f16.main.ops].index("CONV_2D")
    assert op_math(f16, conv_i).kernel_path == "float16_weights"
    assert op_math(load_model(fixture_path("float")), 0).kernel_path == "float"


def test_hybrid_fully_connected_explains_missing_output_scale(fixture_path):
    m = load_model(fixture_path("dynamic"))
    fc = [o.index for o in m.main.ops if o.type == "FULLY_CONNECTED"]
    hybrid = [op_math(m, i) for i in fc if op_math(m, i).kernel_path == "hybrid"]
    assert hybrid, "the dynamic-range fixture has a hybrid FULLY_CONNECTED"
    om = hybrid[0]
    assert om.conv is None and om.rescale is None
    w = m.main.tensors[m.main.ops[om.op_index].inputs[1]]
    assert om.hybrid.weight_scales == w.quantization.scales
    assert om.tensor("output").scales is None  # no S3 ...
    text = " ".join(om.explanation)
    assert "no output scale S3" in text and "S_in(runtime)" in text  # ... and the user is told why
    assert om.hybrid.asymmetric_quantize_inputs == m.main.ops[om.op_index].options["asymmetric_quantize_inputs"]
    conv = [op_math(m, o.index) for o in m.main.ops if o.type == "CONV_2D"]
    hconv = [c for c in conv if c.kernel_path == "hybrid"]
    assert hconv and all(c.hybrid.per_channel and c.hybrid.asymmetric_quantize_inputs for c in hconv)  # EvalHybridPerChannel
    json.dumps(om.to_json())


def test_observed_ranges_from_comparison(fixture_path):
    m = load_model(fixture_path("int8"))
    out_t = m.main.tensors[m.main.ops[1].outputs[0]]
    comparison = ComparisonResult.from_json({
        "float": "f.tflite", "quant": "q.tflite", "runtime": "optimized", "samples": 1, "outputs": [],
        "layers": [{"op_index": 1, "op_type": "CONV_2D", "tensor_name": out_t.name, "quant_tensor": out_t.index,
                    "float_tensor": 0, "match": "name", "metrics": {"range_use": 0.42, "clip_rate": 0.003, "sqnr_db": 31.0}}]})  # fmt: skip
    om = op_math(m, 1, comparison=comparison)
    assert om.tensor("output").observed == {"range_use": 0.42, "clip_rate": 0.003, "sqnr_db": 31.0}
    assert any("range use 42.0%" in line and "0.30%" in line for line in om.explanation)
    with pytest.raises(IndexError):
        op_math(m, 99)


def test_stored_parameters_and_qat_variables_explained(fixture_path):
    """'Why 5 extra parameters per QAT layer?': the panel counts what the file stores for the
    layer (from the tensors' own shapes) and says where each QAT variable went."""
    m = load_model(fixture_path("int8"))
    conv = next(o for o in m.main.ops if o.type == "CONV_2D")
    om = op_math(m, conv.index)
    w = m.main.tensors[conv.inputs[1]]
    b = m.main.tensors[conv.inputs[2]]
    stored = next(line for line in om.explanation if line.startswith("Stored in the file"))
    assert f"{int(np.prod(w.shape)):,} int8 weights + {w.shape[0]} weight scales" in stored
    assert f"{int(np.prod(b.shape)):,} int32 biases" in stored
    qat = next(line for line in om.explanation if "quantization-aware training" in line)
    for var in ("optimizer_step", "kernel_min", "kernel_max", "post_activation_min", "post_activation_max"):
        assert var in qat
    other = next(op_math(m, o.index) for o in m.main.ops if o.type not in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"))
    assert other.conv is None and not any("quantization-aware" in line for line in other.explanation)
