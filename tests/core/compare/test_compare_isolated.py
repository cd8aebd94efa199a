"""Isolated error agrees with TensorFlow's QuantizationDebugger per-layer mean_squared_error.

QuantizationDebugger (QD) re-quantizes the model from a converter with NumericVerify ops and
reports, per quantized op, statistics of (dequantized output - output of the float op fed the
dequantized inputs). Its converter here is set up exactly like the `int8` fixture (same Keras
model, same representative dataset), so its quantized ops are the fixture's.

Tolerance: relative 1e-3 on MSE (+1e-12 absolute, for layers that only move values such as
MAX_POOL, where QD sees float rounding noise ~1e-17 and we see exactly 0), on the optimized
runtime that QD also uses. One documented difference: for the first layer, whose input is the
QUANTIZE of the float model input, QD's float twin reads the unquantized model input, so QD's
value there equals our *accumulated* error of that layer, which the test checks instead.
"""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.export import to_csv_text
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model
from tests.helpers.fixture_models import _rep_dataset, _tf, keras_cnn, representative_images

REL = 1e-3


@pytest.fixture(scope="module")
def qd_and_ours(fixture_path, tmp_path_factory):
    tf = _tf()
    conv = tf.lite.TFLiteConverter.from_keras_model(keras_cnn())
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = _rep_dataset()
    data = representative_images(6, seed=5)

    def debug_dataset():
        for i in range(len(data)):
            yield [data[i : i + 1]]

    dbg = tf.lite.experimental.QuantizationDebugger(converter=conv, debug_dataset=debug_dataset)
    dbg.run()
    qd = {dbg._get_operand_name_and_index(k)[0]: v for k, v in dbg.layer_statistics.items()}
    p = tmp_path_factory.mktemp("qd") / "debug.npz"
    np.savez(p, image=data)
    fpath, qpath = fixture_path("float"), fixture_path("int8")
    ours = compare_models(str(fpath), str(qpath), CompareOptions(samples=SampleSettings(count=None, source=str(p)), isolated=True))
    return qd, ours, load_model(fpath), load_model(qpath)


def test_isolated_mse_matches_quantization_debugger(qd_and_ours):
    qd, ours, fm, qm = qd_and_ours
    by_float_name = {fm.main.tensors[layer.float_tensor].name: layer for layer in ours.layers}
    first_compute = min(layer.op_index for layer in ours.layers)
    compared = 0
    for name, stats in qd.items():
        layer = by_float_name[name]
        want = stats["mean_squared_error"]
        assert stats["num_elements"] == layer.num_elements
        if layer.op_index == first_compute:
            got = layer.metrics.mse  # see the module doc
        else:
            got = layer.isolated.mse
        assert abs(got - want) <= REL * want + 1e-12, (layer.op_type, name, got, want)
        compared += 1
    assert compared >= 9
    # isolated differs from accumulated deeper in the net (inherited error is removed)
    deep = [layer for layer in ours.layers if layer.op_type == "FULLY_CONNECTED"]
    assert all(layer.isolated.mse < 0.9 * layer.metrics.mse for layer in deep)


def test_csv_quantization_debugger_columns_match_qd(qd_and_ours):
    import csv
    import io

    qd, ours, fm, _ = qd_and_ours
    rows = list(csv.DictReader(io.StringIO(to_csv_text(ours))))
    by_float = {int(r["quant_tensor"]): r for r in rows}
    for layer in ours.layers:
        name = fm.main.tensors[layer.float_tensor].name
        if name not in qd or layer.op_index == min(x.op_index for x in ours.layers):
            continue
        r = by_float[layer.quant_tensor]
        assert r["qd_source"] == "isolated"
        assert float(r["mean_squared_error"]) == pytest.approx(qd[name]["mean_squared_error"], rel=REL, abs=1e-12)
        # same sign convention as QD: quantized - float
        assert float(r["mean_error"]) == pytest.approx(qd[name]["mean_error"], rel=1e-2, abs=1e-7)
        assert int(r["num_elements"]) == qd[name]["num_elements"]


@pytest.mark.parametrize("quant", ["dynamic", "float16", "a16w8"])
def test_isolated_on_other_quantization_kinds(fixture_path, quant):
    """Hybrid/float16 ops read float activations: isolated is the same op on the same inputs."""
    f, q = str(fixture_path("float")), str(fixture_path(quant))
    res = compare_models(f, q, CompareOptions(samples=SampleSettings(count=2), isolated=True))
    compute = [layer for layer in res.layers if layer.op_type in ("CONV_2D", "FULLY_CONNECTED", "DEPTHWISE_CONV_2D")]
    assert compute and all(layer.isolated is not None for layer in compute)
    for layer in compute:
        # a layer's own error never exceeds (much) the accumulated one
        assert layer.isolated.mse <= layer.metrics.mse * 1.5 + 1e-12
    # pure data movement repeats the float computation exactly: no error of its own
    reshape = next(layer for layer in res.layers if layer.op_type == "RESHAPE")
    assert reshape.isolated.mse <= 1e-12
