"""Issue 20: QAT variables -> scales, and the Keras-vs-TFLite layer comparison, on real models
built at test time (QAT MLP and CNN, `keras_models`), against independent references: the
.tflite parsed with the `tflite` package, Keras layer outputs from `tf_keras.Model(inputs,
layer.output)` in a subprocess, and B run with `experimental_preserve_all_tensors`."""

from __future__ import annotations

import math

import numpy as np
import pytest
import tflite
from ai_edge_litert.interpreter import Interpreter

from inspector.core.compare.comparison import CompareOptions
from inspector.core.compare.result import ComparisonResult, LayerResult
from inspector.core.keras.compare_keras import compare_keras_in_worker
from inspector.core.keras.detect import keras_format
from inspector.core.keras.info import keras_info
from inspector.core.keras.qat_math import activation_params, weight_scales
from inspector.core.keras.result import first_departure
from inspector.core.runtime.worker import run_isolated
from inspector.core.samples.settings import SampleSettings
from inspector.core.stats.metrics import compute_metrics
from tests.helpers.keras_reference import keras_layer_outputs


def _tflite_params(path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """tensor name -> (scales, zero points), read with the `tflite` package alone."""
    m = tflite.Model.GetRootAsModel(bytearray(open(path, "rb").read()), 0)
    sg = m.Subgraphs(0)
    out = {}
    for i in range(sg.TensorsLength()):
        t = sg.Tensors(i)
        q = t.Quantization()
        if q is not None and q.ScaleLength():
            out[t.Name().decode()] = (q.ScaleAsNumpy().astype(np.float64), q.ZeroPointAsNumpy().astype(np.int64))
    return out


def test_activation_params_follow_the_converters_formula():
    s, z = activation_params(-5.904716491699219, 5.983526229858398)
    assert s == pytest.approx((5.983526229858398 + 5.904716491699219) / 255, rel=1e-12)
    assert z == -1  # round(-128 + 5.9047/0.046620) = round(-1.34)
    assert activation_params(0.0, 6.0) == (pytest.approx(6 / 255), -128)
    assert activation_params(-6.0, 0.0)[1] == 127
    assert weight_scales(np.array([-0.5, -1.0]), np.array([1.27, 0.2])).tolist() == pytest.approx([0.01, 1 / 127])


def test_formats_are_recognised_from_the_path(keras_models):
    assert keras_format(keras_models / "mlp_qat.h5") == "h5"
    assert keras_format(keras_models / "mlp_qat.keras") == "keras"
    assert keras_format(keras_models / "mlp_qat_sm") == "saved_model"
    assert keras_format(keras_models / "mlp_qat_int8.tflite") is None
    assert keras_format(keras_models) is None  # a folder without saved_model.pb


@pytest.mark.parametrize("fmt", ["h5", "saved_model"])
def test_qat_scales_of_the_mlp_equal_the_converters(keras_models, fmt):
    model = keras_models / ("mlp_qat.h5" if fmt == "h5" else "mlp_qat_sm")
    tfl = keras_models / "mlp_qat_int8.tflite"
    info = run_isolated(keras_info, str(model), str(tfl), step="test")
    params = _tflite_params(tfl)
    layers = {q["layer"]: q for q in info["qat"]}
    assert set(layers) == {"quantize_layer", "quant_dense_1", "quant_dense_2", "quant_probs"}
    for q in info["qat"]:
        a = q["activation"]
        v = q["variables"]
        lo, hi = min(a["min"], 0.0), max(a["max"], 0.0)
        assert a["scale"] == pytest.approx((hi - lo) / 255, rel=1e-9)
        name = q["tflite"]["activation"]["name"]
        scales, zps = params[name]  # independently parsed
        assert q["tflite"]["activation"]["scale"] == pytest.approx(float(scales[0]), rel=1e-7)
        assert abs(a["scale"] - scales[0]) / scales[0] < 1e-5, q["layer"]
        assert a["zero_point"] == int(zps[0]), q["layer"]
        if q["weights"] is not None:
            wname = q["tflite"]["weights"]["name"]
            expected = max(abs(v["kernel_min"]), abs(v["kernel_max"])) / 127
            assert params[wname][0][0] == pytest.approx(expected, rel=1e-5)
            assert q["weights"]["scale"] == pytest.approx(expected, rel=1e-9)
    # The question's ReLU layers keep [-5.9, 6]: half the grid is wasted, and said so.
    for n in ("quant_dense_1", "quant_dense_2"):
        assert layers[n]["activation"]["min"] < -5
        assert any("ReLU output" in f for f in layers[n]["findings"]), layers[n]["findings"]
    assert layers["quant_probs"]["activation"]["kind"] == "pre_activation"
    assert not any("did not use" in f for q in info["qat"] for f in q["findings"])


def test_cnn_per_channel_kernel_ranges_beside_the_tflite_scales(keras_models):
    tfl = keras_models / "cnn_qat_int8.tflite"
    info = run_isolated(keras_info, str(keras_models / "cnn_qat.h5"), str(tfl), step="test")
    params = _tflite_params(tfl)
    conv = next(q for q in info["qat"] if q["layer"] == "quant_conv1")
    assert conv["weights"]["per_channel"] and len(conv["weights"]["scale"]) == 8
    w = conv["tflite"]["weights"]
    np.testing.assert_allclose(w["scale"], params[w["name"]][0], rtol=1e-7)
    # BatchNormalization is folded into the kernel after QAT's fake quantization: the deployed
    # scales are not the QAT kernel range's, which is a finding naming the relative difference.
    rel = np.max(np.abs(params[w["name"]][0] - np.asarray(conv["weights"]["scale"])) / np.asarray(conv["weights"]["scale"]))
    assert (rel > 1e-5) == any("did not use the QAT range" in f for f in conv["findings"])
    relu = next(q for q in info["qat"] if q["layer"] == "quant_relu1")
    assert relu["activation"]["kind"] == "output"
    name = relu["tflite"]["activation"]["name"]
    assert relu["activation"]["scale"] == pytest.approx(float(params[name][0][0]), rel=1e-5)


def _sqnr(x: np.ndarray, y: np.ndarray) -> float:
    noise = float(np.sum((x.astype(np.float64) - y) ** 2))
    return math.inf if noise == 0 else 10 * math.log10(float(np.sum(x.astype(np.float64) ** 2)) / noise)


@pytest.mark.parametrize("name,key", [("mlp_qat", "pixels"), ("cnn_qat", "image")])
def test_layer_errors_against_keras_layer_outputs(keras_models, tmp_path, name, key):
    model, tfl, inputs = keras_models / f"{name}.h5", keras_models / f"{name}_int8.tflite", keras_models / f"{name[:3]}_inputs.npz"
    kc = compare_keras_in_worker(model, tfl, CompareOptions(samples=SampleSettings(count=None, source=str(inputs)), isolated=True))
    d = kc.to_json()
    assert d["float"]["format"] == "keras" and d["float"]["qat"] is True
    names = [layer["keras_layer"] for layer in d["layers"]]
    ref = keras_layer_outputs(model, inputs, key, names, tmp_path / "ref.npz")
    x = np.load(inputs)[key].astype(np.float32)
    it = Interpreter(model_path=str(tfl), experimental_preserve_all_tensors=True)
    it.allocate_tensors()
    inp = it.get_input_details()[0]
    per_tensor: dict[int, list[np.ndarray]] = {layer["quant_tensor"]: [] for layer in d["layers"]}
    for i in range(len(x)):
        it.set_tensor(inp["index"], x[i : i + 1])
        it.invoke()
        for t in per_tensor:
            det = it._get_tensor_details(t, 0)
            s, z = det["quantization"]
            per_tensor[t].append((it.get_tensor(t).astype(np.float64) - z) * s)
    for layer in d["layers"]:
        y = np.concatenate(per_tensor[layer["quant_tensor"]])
        kx = ref[layer["keras_layer"]].reshape(y.shape)
        expected = _sqnr(kx, y)
        got = layer["metrics"]["sqnr_db"]
        if math.isinf(expected):
            assert got is None, layer["keras_layer"]
        else:
            assert got == pytest.approx(expected, abs=0.05), layer["keras_layer"]
        assert layer["metrics"]["max_abs"] == pytest.approx(float(np.max(np.abs(kx - y))), rel=1e-4, abs=1e-7)
    # A Dense with a fused softmax pairs with the tensor after SOFTMAX.
    probs = next(layer for layer in d["layers"] if layer["keras_layer"] == "quant_probs")
    assert probs["op_type"] == "SOFTMAX"
    # A correctly exported QAT model is nearly bit-exact: every layer well above 40 dB.
    assert all(layer["metrics"]["sqnr_db"] is None or layer["metrics"]["sqnr_db"] > 35 for layer in d["layers"])
    assert "first_departure" in d
    if name == "cnn_qat":  # Conv2D and BatchNormalization are fused into the ReLU's CONV_2D
        fused = {u["keras_layer"]: u["reason"] for u in d["unmatched"] if u.get("side") == "keras"}
        assert set(fused) == {"quant_conv1", "quant_bn1", "quant_conv2", "quant_bn2"}
        assert "fused into layer 'quant_relu1'" in fused["quant_conv1"]
        relu1 = next(layer for layer in d["layers"] if layer["keras_layer"] == "quant_relu1")
        assert relu1["op_type"] == "CONV_2D" and relu1["isolated"] is not None


def test_first_departure_is_the_first_layer_beyond_one_step():
    def layer(i, max_abs):
        m = compute_metrics(np.zeros(4), np.full(4, max_abs))
        return LayerResult(i, "FULLY_CONNECTED", f"t{i}", -1, i, "name", m, scale=(0.1,), zero_point=(0,))

    r = ComparisonResult("a.h5", "b.tflite", "optimized", "", 1, (layer(0, 0.1), layer(1, 0.25), layer(2, 0.5)), (), ())
    first, steps = first_departure(r, {0: "d0", 1: "d1", 2: "d2"}, qat=True)
    assert first["op_index"] == 1 and first["keras_layer"] == "d1" and first["steps"] == pytest.approx(2.5)
    assert steps[0] == pytest.approx(1.0)  # exactly one step (a rounding tie) is not a departure
    assert first_departure(r, {}, qat=False)[0] is None


def test_first_departure_marks_the_layer_where_b_leaves_the_qat_simulation(keras_models, tmp_path):
    """B = the QAT MLP's own int8 model, with quant_dense_2's weight scale made 1.3x too large
    (as a wrong export would): layers before it still follow the simulation within one step,
    quant_dense_2 is the first departure. The faithful export departs nowhere."""
    from ai_edge_litert import schema_py_generated as schema

    from inspector.core.tflite import edit

    tfl = keras_models / "mlp_qat_int8.tflite"
    m = edit.read(tfl.read_bytes())
    sg = m.subgraphs[0]
    kernel = next(t for t in sg.tensors if "quant_dense_2/LastValueQuant" in edit.tensor_name(t))
    kernel.quantization.scale = [float(s) * 1.3 for s in kernel.quantization.scale]
    assert isinstance(kernel.quantization, schema.QuantizationParametersT)
    bad = tmp_path / "mlp_qat_int8_bad_scale.tflite"
    bad.write_bytes(edit.write(m))
    opts = CompareOptions(samples=SampleSettings(count=None, source=str(keras_models / "mlp_inputs.npz")))
    good = compare_keras_in_worker(keras_models / "mlp_qat.h5", tfl, opts)
    # The faithful export follows the simulation through every layer with weights; only the int8
    # SOFTMAX kernel (a lookup-table exp, fixed 1/256 grid) may differ from TF's float softmax
    # plus fake quantization by a few steps, depending on the trained model (2.4 steps seen).
    assert good.first_departure is None or good.first_departure["op_type"] == "SOFTMAX", good.first_departure
    kc = compare_keras_in_worker(keras_models / "mlp_qat.h5", bad, opts)
    fd = kc.first_departure
    assert fd is not None and fd["keras_layer"] == "quant_dense_2" and fd["steps"] > 2
    before = [layer for layer in kc.result.layers if layer.op_index < fd["op_index"]]
    assert before and all(layer.metrics.max_abs <= 1.001 * layer.scale[0] for layer in before)


def test_tab_rows_show_equal_tensors_as_infinite_sqnr():
    from inspector.core.keras.rows import layer_rows

    m = {"sqnr_db": None, "max_abs": 0.0}
    d = {"layers": [{"op_index": 3, "op_type": "MEAN", "keras_layer": "pool", "metrics": m, "isolated": m, "max_error_steps": 0.0}],
         "unmatched": [{"side": "keras", "keras_layer": "bn", "keras_class": "BatchNormalization", "reason": "fused"}],
         "first_departure": None}  # fmt: skip
    rows, mark = layer_rows(d)
    assert rows[0][3:5] == ("∞", "∞") and mark is None and rows[1][2] == "bn"


def test_float_cnn_dense_with_softmax_pairs_past_an_unnamed_softmax(keras_models, tmp_path):
    """Post-training int8 of the float CNN (.keras): the SOFTMAX output is named after the
    signature ('StatefulPartitionedCall:01'), not the layer; the Dense still pairs with it."""
    model, tfl, inputs = keras_models / "cnn_float.keras", keras_models / "cnn_float_int8.tflite", keras_models / "cnn_inputs.npz"
    kc = compare_keras_in_worker(model, tfl, CompareOptions(samples=SampleSettings(count=None, source=str(inputs))))
    d = kc.to_json()
    assert d["float"]["keras_format"] == "keras" and d["float"]["qat"] is False and d["first_departure"] is None
    probs = next(layer for layer in d["layers"] if layer["keras_layer"] == "probs")
    assert probs["op_type"] == "SOFTMAX"
    ref = keras_layer_outputs(model, inputs, "image", ["probs"], tmp_path / "ref.npz")["probs"]
    assert probs["metrics"]["sqnr_db"] > 20  # the softmax output, not the logits (about 1 dB against them)
    assert probs["float_max"] == pytest.approx(float(ref.max()), rel=1e-5)
