"""Layer metrics of compare_models agree with a straightforward numpy computation.

The reference side uses nothing of ours but the layer list: both models run in a plain LiteRT
interpreter with `experimental_preserve_all_tensors=True` and the builtin kernels, every tensor is
read back, dequantized with the interpreter's own quantization parameters, and the metrics of
docs/ARCHITECTURE.md "Metrics" are computed in float64 over all samples at once.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.samples.settings import SampleSettings
from tests.helpers.fixture_models import representative_images
from tests.helpers.reference import preserving_interpreter as _interpreter

N_SAMPLES = 3
REL = 1e-5


def _run_all(path, images):
    """Per sample: {tensor index: (value, scales, zero_points, qdim)} of every tensor."""
    it = _interpreter(path)
    inp = it.get_input_details()[0]
    out = []
    for i in range(len(images)):
        x = images[i : i + 1]
        scales, zps = inp["quantization_parameters"]["scales"], inp["quantization_parameters"]["zero_points"]
        if inp["dtype"] != np.float32:
            info = np.iinfo(inp["dtype"])
            x = np.clip(np.round(x / scales[0]) + zps[0], info.min, info.max).astype(inp["dtype"])
        it.set_tensor(inp["index"], x)
        it.invoke()
        vals = {}
        for d in it.get_tensor_details():
            try:
                v = it.get_tensor(d["index"])
            except ValueError:
                continue
            vals[d["index"]] = (np.array(v), d["quantization_parameters"], d["dtype"])
        out.append(vals)
    return out


def _deq(v, qp, dtype):
    if len(qp["scales"]) == 0 or not np.issubdtype(dtype, np.integer):
        return v.astype(np.float64)
    s = np.asarray(qp["scales"], np.float64)
    z = np.asarray(qp["zero_points"], np.float64)
    if s.size > 1:
        shape = [1] * v.ndim
        shape[qp["quantized_dimension"]] = s.size
        s, z = s.reshape(shape), z.reshape(shape)
    return (v.astype(np.float64) - z) * s


def _reference(fvals, qvals, ft, qt, channel: bool, scale_tensor: int) -> dict:
    x = np.stack([f[ft][0].astype(np.float64) for f in fvals])
    y = np.stack([_deq(*q[qt]) for q in qvals])
    e = x - y
    sx2, se2 = float(np.sum(x * x)), float(np.sum(e * e))
    ref = {
        "mse": float(np.mean(e * e)),
        "sqnr_db": math.inf if se2 == 0 else 10 * math.log10(sx2 / se2),
        "max_abs": float(np.max(np.abs(e))),
        "mean_error": float(np.mean(e)),
        "cosine": float(np.sum(x * y) / math.sqrt(np.sum(x * x) * np.sum(y * y))),
    }
    _, qp, dtype = qvals[0][scale_tensor]
    if len(qp["scales"]) == 1 and np.issubdtype(dtype, np.integer):
        s, z = float(qp["scales"][0]), float(qp["zero_points"][0])
        info = np.iinfo(dtype)
        lo, hi = s * (info.min - z), s * (info.max - z)
        ref["rmse_over_scale"] = math.sqrt(float(np.mean(e * e)) / s**2)
        # clipped = saturated: beyond the representable range by more than half a step
        ref["clip_rate"] = float(np.mean((x < lo - s / 2) | (x > hi + s / 2)))
        ref["range_use"] = float((x.max() - x.min()) / (hi - lo))
    else:
        ref.update(rmse_over_scale=None, clip_rate=None, range_use=None)
    if channel:
        axes = tuple(range(x.ndim - 1))
        cx, ce = np.sum(x * x, axis=axes), np.sum(e * e, axis=axes)
        ref["per_channel_sqnr_db"] = [
            math.inf if b == 0 else -math.inf if a == 0 else 10 * math.log10(a / b) for a, b in zip(cx, ce, strict=True)
        ]
    return ref


def _close(ours, ref, scale_abs: float) -> bool:
    if ref is None or ours is None:
        return ours is None and ref is None
    if math.isinf(ref) or math.isinf(ours):
        return ref == ours
    return abs(ours - ref) <= REL * abs(ref) + scale_abs


@pytest.fixture(scope="module")
def npz_inputs(tmp_path_factory):
    images = representative_images(N_SAMPLES, seed=11)
    p = tmp_path_factory.mktemp("inputs") / "samples.npz"
    np.savez(p, image=images)
    return p, images


@pytest.mark.parametrize("quant", ["int8", "int8_io", "dynamic", "float16", "a16w8"])
def test_layer_metrics_match_independent_numpy(fixture_path, npz_inputs, quant):
    path, images = npz_inputs
    fpath, qpath = fixture_path("float"), fixture_path(quant)
    res = compare_models(str(fpath), str(qpath), CompareOptions(samples=SampleSettings(count=None, source=str(path)), runtime="reference"))
    assert res.samples == N_SAMPLES and res.runtime == "reference"
    fvals, qvals = _run_all(fpath, images), _run_all(qpath, images)
    # A float output written by DEQUANTIZE is measured on its quantized input's grid.
    dequantized_from = {
        int(op["outputs"][0]): int(op["inputs"][0])
        for op in _interpreter(qpath)._get_ops_details()
        if op["op_name"] == "DEQUANTIZE"
    }
    checked = 0
    for layer in [*res.layers, *res.outputs]:
        channel = getattr(layer, "op_type", None) in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")
        scale_tensor = layer.quant_tensor
        if not hasattr(layer, "op_type"):
            scale_tensor = dequantized_from.get(layer.quant_tensor, layer.quant_tensor)
        ref = _reference(fvals, qvals, layer.float_tensor, layer.quant_tensor, channel, scale_tensor)
        m = layer.metrics
        rmse = math.sqrt(ref["mse"])
        for key, want in ref.items():
            got = getattr(m, key)
            if key == "per_channel_sqnr_db":
                assert all(_close(a, b, 1e-9) for a, b in zip(got, want, strict=True)), (quant, layer, key)
            else:
                tol_abs = REL * rmse if key == "mean_error" else 1e-12
                assert _close(got, want, tol_abs), (quant, getattr(layer, "tensor_name", layer.name), key, got, want)
        checked += 1
    assert checked >= 10
    # A real check: the quantized models differ from the float one somewhere.
    assert min(layer.metrics.sqnr_db for layer in res.layers) < 80
