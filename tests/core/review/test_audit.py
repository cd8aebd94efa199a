"""The audit finds planted violations at the right op and tensor, and nothing wrong on clean
converter-built models."""

from __future__ import annotations

import json

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from inspector.core.compare.result import ComparisonResult
from inspector.core.review.audit import Finding, at_or_above, audit_model, counts
from inspector.core.tflite.model import load_model
from tests.helpers.audit_fixtures import planted


def _audit_planted(fixture_path, tmp_path, names, base="int8"):
    data, info = planted(fixture_path(base), names)
    p = tmp_path / f"{'-'.join(names)}.tflite"
    p.write_bytes(data)
    return audit_model(load_model(p)), info, p


def _errors(findings):
    return [f for f in findings if f.severity == "error"]


def test_weight_zero_point(fixture_path, tmp_path):
    fs, info, _ = _audit_planted(fixture_path, tmp_path, ["weight_zero_point"])
    (f,) = _errors(fs)
    want = info["weight_zero_point"]
    assert (f.rule, f.op_index, f.op_type, f.tensor_index) == ("weight-zero-point", want["op_index"], "CONV_2D", want["tensor_index"])
    assert f.observed == [3] and f.expected == 0


def test_bias_scale_off_by_ten_percent(fixture_path, tmp_path):
    fs, info, path = _audit_planted(fixture_path, tmp_path, ["bias_scale"])
    (f,) = _errors(fs)
    want = info["bias_scale"]
    assert (f.rule, f.op_index, f.tensor_index) == ("bias-scale", want["op_index"], want["tensor_index"])
    # independent expectation from the interpreter's own tensor details: S_in * S_w[c]
    it = Interpreter(model_path=str(path))
    det = it.get_tensor_details()
    op = load_model(path).main.ops[want["op_index"]]
    s_in = float(det[op.inputs[0]]["quantization_parameters"]["scales"][0])
    s_w = det[op.inputs[1]]["quantization_parameters"]["scales"].astype(np.float64)
    s_b = det[op.inputs[2]]["quantization_parameters"]["scales"].astype(np.float64)
    c = f.observed["channel"]
    assert f.expected["scale"] == pytest.approx(s_in * s_w[c], rel=1e-12)
    assert f.observed["scale"] == pytest.approx(s_b[c], rel=1e-12)
    assert f.observed["ratio"] == pytest.approx(1.1, rel=1e-6)
    assert "10.00%" in f.message


def test_softmax_output_scale(fixture_path, tmp_path):
    fs, info, _ = _audit_planted(fixture_path, tmp_path, ["softmax_output_scale"])
    (f,) = _errors(fs)
    want = info["softmax_output_scale"]
    assert (f.rule, f.op_index, f.op_type, f.tensor_index) == ("fixed-output", want["op_index"], "SOFTMAX", want["tensor_index"])
    assert f.observed == {"scale": pytest.approx(1 / 128), "zero_point": -128}
    assert f.expected["scale"] == 1 / 256 and f.expected["zero_point"] == -128


def test_weight_value_minus_128(fixture_path, tmp_path):
    fs, info, _ = _audit_planted(fixture_path, tmp_path, ["weight_minus_128"])
    (f,) = _errors(fs)
    want = info["weight_minus_128"]
    assert (f.rule, f.op_index, f.op_type, f.tensor_index) == ("weight-range", want["op_index"], "FULLY_CONNECTED", want["tensor_index"])
    assert f.observed == {"count": 3, "min": -128}


def test_all_planted_together(fixture_path, tmp_path):
    fs, info, _ = _audit_planted(fixture_path, tmp_path, list(info_names := ["weight_zero_point", "bias_scale",
                                                                               "softmax_output_scale", "weight_minus_128"]))  # fmt: skip
    got = {(f.rule, f.op_index, f.tensor_index) for f in _errors(fs)}
    rules = {"weight_zero_point": "weight-zero-point", "bias_scale": "bias-scale",
             "softmax_output_scale": "fixed-output", "weight_minus_128": "weight-range"}  # fmt: skip
    assert got == {(rules[n], info[n]["op_index"], info[n]["tensor_index"]) for n in info_names}


@pytest.mark.parametrize(
    "name, rule",
    [("maxpool_output_scale", "preserve-scale"), ("weight_channel_dimension", "weight-channel-dimension")],
)
def test_more_rules(fixture_path, tmp_path, name, rule):
    fs, info, _ = _audit_planted(fixture_path, tmp_path, [name])
    errs = _errors(fs)
    assert {f.rule for f in errs} >= {rule}
    f = next(f for f in errs if f.rule == rule)
    assert f.op_index == info[name]["op_index"]
    if name == "weight_channel_dimension":
        assert (f.observed, f.expected) == (3, 0)
        # 16 scales declared along a dimension of size 16 (1x1 conv: [16, 1, 1, 16]) -> no count error
        assert [e.rule for e in errs] == ["weight-channel-dimension"]
    else:
        assert f.expected["scale"] == pytest.approx(2 * f.observed["scale"])  # output doubled vs its input


def test_int16_activation_zero_point(fixture_path, tmp_path):
    fs, info, _ = _audit_planted(fixture_path, tmp_path, ["int16_zero_point"], base="a16w8")
    errs = [f for f in _errors(fs) if f.rule == "int16-zero-point"]
    assert [(f.op_index, f.tensor_index, f.observed) for f in errs] == [
        (info["int16_zero_point"]["op_index"], info["int16_zero_point"]["tensor_index"], [5])]


# What a clean converter-built model legitimately gets: float I/O around an integer graph is
# worth a note; the a16w8 converter shares one all-zero int64 bias between three ops, so two
# of them see a "wrong" bias scale that has no effect (info, not error).
CLEAN_EXPECTED = {
    "int8": {("info", "float-io")},
    "int8_io": set(),
    "int8_per_tensor": {("info", "float-io")},
    "a16w8": {("info", "float-io"), ("info", "bias-scale")},
}


@pytest.mark.parametrize("name", sorted(CLEAN_EXPECTED))
def test_clean_models_have_no_errors(fixture_path, name):
    fs = audit_model(load_model(fixture_path(name)))
    assert counts(fs)["error"] == 0
    assert {(f.severity, f.rule) for f in fs} == CLEAN_EXPECTED[name]


def test_hybrid_ops_explained(fixture_path):
    m = load_model(fixture_path("dynamic"))
    fs = audit_model(m)
    hybrid = [f for f in fs if f.rule == "hybrid-op"]
    assert {m.main.ops[f.op_index].type for f in hybrid} == {"CONV_2D", "FULLY_CONNECTED"}
    assert all("no output scale" in f.message for f in hybrid)
    assert not _errors(fs)


def _typed(layers: list[dict]) -> ComparisonResult:
    """A typed comparison holding these layers (the fields the JSON leaves out filled in)."""
    return ComparisonResult.from_json({"float": "f.tflite", "quant": "q.tflite", "runtime": "optimized", "samples": 1, "outputs": [],
                                       "layers": [{"float_tensor": 0, "match": "name", **lay} for lay in layers]})  # fmt: skip


def test_comparison_rules_and_gates(fixture_path):
    m = load_model(fixture_path("int8"))
    t = m.main.tensors[m.main.ops[5].outputs[0]]
    comparison = _typed([
        {"op_index": 5, "op_type": "CONV_2D", "tensor_name": t.name, "quant_tensor": t.index,
         "metrics": {"range_use": 0.05, "clip_rate": 0.03, "sqnr_db": 20.0}},
        {"op_index": 1, "op_type": "CONV_2D", "tensor_name": "x", "quant_tensor": 15,
         "metrics": {"range_use": 0.5, "clip_rate": 0.0, "sqnr_db": 40.0}},
    ])  # fmt: skip
    fs = audit_model(m, comparison)
    warn = {(f.rule, f.op_index, f.tensor_index, f.observed) for f in fs if f.severity == "warning"}
    assert warn == {("low-range-use", 5, t.index, 0.05), ("clipping", 5, t.index, 0.03)}
    assert len(at_or_above(fs, "warning")) == 2 and at_or_above(fs, "error") == []
    assert len(at_or_above(fs, "info")) == len(fs)
    with pytest.raises(ValueError):
        at_or_above(fs, "fatal")
    for f in fs:
        assert Finding.from_json(json.loads(json.dumps(f.to_json()))) == f
