"""Issue 26, items 1-4 in core: a QAT model's float twin (its fake quant kept as QUANTIZE →
DEQUANTIZE pairs) against the int8 export (`keras_models`' mlp_qat) and against the export of
another training of the same MLP (`keras_other`).

References are independent of the code under test: the .tflite files parsed with the `tflite`
package (kernels, the fake quant's scale and zero point), both models run with
`experimental_preserve_all_tensors`, and Keras layer outputs from `tf_keras` in a subprocess.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.pair_check import check_pair_files
from inspector.core.compare.pairing import pair_models
from inspector.core.compare.weights import analyze_tensors, weight_tensor_of
from inspector.core.keras.compare_keras import compare_keras_in_worker
from inspector.core.keras.for_view import cached_twins
from inspector.core.keras.info import keras_info, keras_info_text
from inspector.core.runtime.worker import run_isolated
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model
from tests.helpers.keras_reference import keras_layer_outputs
from tests.helpers.qat_twin_reference import FC, fc_kernels, kernel_steps


@pytest.fixture(scope="module")
def twin(keras_models, keras_twin_cache) -> str:
    """The float twin of mlp_qat.h5, made by TF's converter in the worker (cached)."""
    return run_isolated(cached_twins, str(keras_models / "mlp_qat.h5"), str(keras_twin_cache), step="test")["float"]


def test_pair_check_verifies_the_export_and_refuses_another_training(twin, keras_models, keras_other):
    """Item 1. Before: the genuine pair was 'not verified' (A's bias against B's kernel: no weight
    compared) and another training's export passed as a twin (related, exit 0)."""
    ok = check_pair_files(twin, keras_models / "mlp_qat_int8.tflite")
    want = kernel_steps(twin, keras_models / "mlp_qat_int8.tflite")
    assert ok.related and ok.note == "" and ok.weights_checked, ok.note
    assert ok.weights_compared == 3 and ok.elements_compared == want.size
    assert ok.max_step_error == pytest.approx(float(want.max()), abs=1e-4) and ok.max_step_error < 0.01  # bit-exact (float32 rounding)
    bad = check_pair_files(twin, keras_other / "other_qat_int8.tflite")
    want = kernel_steps(twin, keras_other / "other_qat_int8.tflite")
    assert not bad.related
    assert bad.disagree_share == pytest.approx(float(np.mean(want > 2.0)), abs=1e-9) and bad.disagree_share > 0.9
    assert bad.median_step_error == pytest.approx(float(np.median(want)), rel=1e-6)
    assert "not the same trained model" in bad.message


def test_weight_of_an_fc_op_is_its_kernel_on_both_sides(twin, keras_models):
    """Item 3 in core. Before: A's weight of FULLY_CONNECTED was the bias ([256], the first
    constant it reads directly), drawn over B's kernel [256, 784] with no error metrics."""
    a, b = load_model(twin), load_model(keras_models / "mlp_qat_int8.tflite")
    pairing = pair_models(a, b)
    kernels = fc_kernels(twin)
    fcs = [op for op in b.main.ops if op.type == "FULLY_CONNECTED"]
    assert len(fcs) == 3
    for op in fcs:
        fop = a.main.ops[pairing.float_op_for(op.index)]
        ta, tb = weight_tensor_of(a.main, fop), weight_tensor_of(b.main, op)
        assert a.main.tensors[ta].shape == b.main.tensors[tb].shape and len(a.main.tensors[ta].shape) == 2
        assert pairing.float_for_quant(tb) == ta  # tensor pairing agrees: kernel with kernel
        layer = next(n for n in FC if f"/{n}/" in b.main.tensors[tb].name)
        np.testing.assert_array_equal(a.tensor_data(a.main.tensors[ta]), kernels[layer][0])
        w = analyze_tensors(a, a.main.tensors[ta], b, b.main.tensors[tb])
        assert w is not None and w.metrics is not None and not any("shapes differ" in n for n in w.notes)
        k, s, _ = kernels[layer]
        q, sb, _ = fc_kernels(keras_models / "mlp_qat_int8.tflite")[layer]
        assert w.metrics.max_abs == pytest.approx(float(np.max(np.abs(k - q * sb))), rel=1e-5)


def _sqnr(x, y) -> float:
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    noise = float(np.sum((x - y) ** 2))
    return math.inf if noise == 0 else 10 * math.log10(float(np.sum(x**2)) / noise)


def test_one_number_per_layer_twin_and_keras_agree(twin, keras_models, tmp_path):
    """Item 2. B's op pairs with A's value after its fake quant: the float-twin comparison gives
    the same SQNR per layer as the Keras simulation (before: 39.5 / 37.7 / 35.9 dB against the
    FC outputs before the fake quant, 67.7 / 54.6 dB in the Keras comparison)."""
    b_path = keras_models / "mlp_qat_int8.tflite"
    inputs = keras_models / "mlp_inputs.npz"
    opts = CompareOptions(samples=SampleSettings(count=None, source=str(inputs)), isolated=True)
    r = compare_models(twin, b_path, opts)
    assert r.reference.startswith("the float twin mlp_qat_float.tflite after its fake quant")
    kc = compare_keras_in_worker(keras_models / "mlp_qat.h5", b_path, opts)
    assert kc.result.reference.startswith("the Keras simulation: mlp_qat.h5")
    # Independent: Keras layer outputs (subprocess) against B's tensors (preserved, dequantized).
    ref = keras_layer_outputs(keras_models / "mlp_qat.h5", inputs, "pixels", list(FC[:2]), tmp_path / "ref.npz")
    x = np.load(inputs)["pixels"].astype(np.float32)
    it = Interpreter(model_path=str(b_path), experimental_preserve_all_tensors=True)
    it.allocate_tensors()
    b = load_model(b_path)
    by_layer = {n: next(o for op in b.main.ops if op.type == "FULLY_CONNECTED" for o in op.outputs if f"/{n}/" in b.main.tensors[o].name)
                for n in FC[:2]}
    got = {n: [] for n in by_layer}
    for i in range(len(x)):
        it.set_tensor(it.get_input_details()[0]["index"], x[i : i + 1])
        it.invoke()
        for n, t in by_layer.items():
            s, z = it._get_tensor_details(t, 0)["quantization"]
            got[n].append((it.get_tensor(t).astype(np.float64) - z) * s)
    twin_db = {layer.quant_tensor: layer for layer in r.layers}
    keras_db = {layer.quant_tensor: layer for layer in kc.result.layers}
    for n, t in by_layer.items():
        y = np.concatenate(got[n])
        expected = _sqnr(ref[n].reshape(y.shape), y)
        assert twin_db[t].metrics.sqnr_db == pytest.approx(expected, abs=0.05), n
        assert keras_db[t].metrics.sqnr_db == pytest.approx(twin_db[t].metrics.sqnr_db, abs=0.05), n
        assert twin_db[t].metrics.sqnr_db > 50  # not the 35-40 dB of the tensor before the fake quant
        assert twin_db[t].isolated is not None  # the isolated model keeps the fake quants too


def test_info_names_every_qat_variable_and_what_it_becomes(keras_models):
    """Item 4. The counts are model.summary()'s (the MLP's shapes: Dense 784x256 + 256, ...),
    each variable is named with its trainability, value and what it becomes in the .tflite;
    optimizer_step is read (-1 after training) and said not to count steps."""
    b_path = keras_models / "mlp_qat_int8.tflite"
    info = run_isolated(keras_info, str(keras_models / "mlp_qat.h5"), str(b_path), step="test")
    dense = {"quant_dense_1": (784, 256), "quant_dense_2": (256, 128), "quant_probs": (128, 10)}
    trainable = sum(i * o + o for i, o in dense.values())
    assert info["params"] == {"total": trainable + 3 + 5 * 3, "trainable": trainable, "non_trainable": 18}
    layers = {q["layer"]: q for q in info["qat"]}
    ql = layers["quantize_layer"]
    assert ql["params"] == {"total": 3, "trainable": 0, "non_trainable": 3}
    assert [v["name"] for v in ql["qat_variables"]] == ["quantize_layer_min", "quantize_layer_max", "optimizer_step"]
    kernels = fc_kernels(b_path)
    for name, (i, o) in dense.items():
        q = layers[name]
        assert q["params"] == {"total": i * o + o + 5, "trainable": i * o + o, "non_trainable": 5}
        extra = {v["name"]: v for v in q["qat_variables"] if not v["trainable"]}
        act = "pre_activation" if name == "quant_probs" else "post_activation"
        assert set(extra) == {"kernel_min", "kernel_max", f"{act}_min", f"{act}_max", "optimizer_step"}
        assert extra["optimizer_step"]["value"] == -1 and "does not count training steps" in extra["optimizer_step"]["becomes"]
        assert "nothing (not in the .tflite)" in extra["optimizer_step"]["becomes"]
        s2 = kernels[name][1]  # B's kernel scale, parsed with `tflite`
        assert f"S2 = {s2:.8g}" in extra["kernel_min"]["becomes"] or f"S2 = {np.float32(s2):.8g}" in extra["kernel_min"]["becomes"]
        assert extra["kernel_min"]["value"] == pytest.approx(q["variables"]["kernel_min"])
        assert "S3" in extra[f"{act}_max"]["becomes"] and "B: S = " in extra[f"{act}_max"]["becomes"]
    text = keras_info_text(info)
    for v in ("quantize_layer_min", "quantize_layer_max", "kernel_min", "kernel_max", "post_activation_min",
              "post_activation_max", "pre_activation_min", "pre_activation_max", "optimizer_step"):
        assert f"    {v} " in text, v
    assert "model.summary(): 235,164 params, 235,146 trainable, 18 non-trainable" in text


def test_op_math_does_not_claim_optimizer_step_counts_steps(keras_models):
    """Item 4: the op math of B's FULLY_CONNECTED said optimizer_step 'only counted training
    steps'; tfmot 0.8.1 never writes it (it reads -1 after training, as the test above reads)."""
    from inspector.core.quantmath.opmath import op_math

    b = load_model(keras_models / "mlp_qat_int8.tflite")
    op = next(op.index for op in b.main.ops if op.type == "FULLY_CONNECTED")
    text = " ".join(op_math(b, op).explanation)
    assert "optimizer_step" in text
    assert "counted training steps" not in text and "does not count training steps" in text
