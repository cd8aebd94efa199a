"""The own (isolated) error is computed by default, on every runtime, for models whose ops compute
shapes: a Keras Dense on a 3-D input (SHAPE/GATHER/REDUCE_PROD/PACK feeding RESHAPE around each
FULLY_CONNECTED) and a transformer block, both from the TF converter (`shape_op_fixtures`).

Before, XNNPACK refused the isolated model of both ("XNNPack delegate failed to reshape"): its
inputs took the float file's placeholder shape [1, 1] for the 2-D tensors the shape ops size,
and the message named the user's float file. Independent reference: each FULLY_CONNECTED of A
computed in numpy (A's weights and bias as LiteRT holds them) on B's dequantized input tensor, as
LiteRT computed it (`experimental_preserve_all_tensors`), against B's dequantized output.
"""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.isolated import INTEGER_NOTE, REFUSED_PREFIX
from inspector.core.samples.settings import SampleSettings
from tests.helpers.paths import REPO
from tests.helpers.reference import preserving_interpreter
from tests.helpers.shape_op_fixtures import cache_path, samples

N = 6


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    out = {}
    for kind in ("dense3d", "block"):
        npz = tmp_path_factory.mktemp(kind) / "inputs.npz"
        np.savez(npz, tokens=samples(kind, N, seed=4)[:, 0])  # the file holds samples along its first axis
        out[kind] = (str(cache_path(REPO / ".fixture-cache", f"{kind}_float")), str(cache_path(REPO / ".fixture-cache", f"{kind}_int8")), npz)
    return out


def _opts(npz, **kw) -> CompareOptions:
    return CompareOptions(samples=SampleSettings(count=None, source=str(npz)), **kw)


def _independent_fc_mse(fpath: str, qpath: str, data: np.ndarray, q_op: int, f_op: int, relu: bool) -> float:
    fi, qi = preserving_interpreter(fpath), preserving_interpreter(qpath)
    qop, fop = qi._get_ops_details()[q_op], fi._get_ops_details()[f_op]
    assert qop["op_name"] == fop["op_name"] == "FULLY_CONNECTED"
    w = fi.get_tensor(int(fop["inputs"][1])).astype(np.float64)
    bias = int(fop["inputs"][2]) if len(fop["inputs"]) > 2 else -1  # the converter drops an all-zero bias
    b = fi.get_tensor(bias).astype(np.float64) if bias >= 0 else 0.0
    qdet = {d["index"]: d for d in qi.get_tensor_details()}
    errs = []
    for x in data:
        qi.set_tensor(qi.get_input_details()[0]["index"], x)
        qi.invoke()
        (s_in, z_in), (s_out, z_out) = (qdet[int(qop[k][0])]["quantization"] for k in ("inputs", "outputs"))
        x_in = (qi.get_tensor(int(qop["inputs"][0])).astype(np.float64) - z_in) * s_in
        y = x_in.reshape(-1, w.shape[1]) @ w.T + b
        y = np.maximum(y, 0.0) if relu else y
        yq = (qi.get_tensor(int(qop["outputs"][0])).astype(np.float64) - z_out) * s_out
        errs.append((yq.reshape(y.shape) - y).ravel())
    e = np.concatenate(errs)
    return float(np.mean(e * e))


def test_a_dense_on_a_3d_input_has_its_own_error_by_default_on_the_optimized_runtime(pairs):
    f, q, npz = pairs["dense3d"]
    res = compare_models(f, q, _opts(npz))  # the defaults: optimized runtime, own error included
    assert res.isolated and res.runtime == "optimized"
    fcs = [lay for lay in res.layers if lay.op_type == "FULLY_CONNECTED"]
    assert len(fcs) == 2 and all(lay.isolated is not None and 20 < lay.isolated.sqnr_db < 80 for lay in fcs)
    # the shape computation has no error of its own: not cut out, and said so
    shape_ops = [lay for lay in res.layers if lay.op_type in ("SHAPE", "GATHER", "REDUCE_PROD", "PACK")]
    assert len(shape_ops) >= 8 and all(lay.isolated is None and lay.isolated_note == INTEGER_NOTE for lay in shape_ops)
    # the figures: equal to numpy on LiteRT's tensors (reference kernels, the run that can be
    # reproduced exactly), and the optimized run's within a dB of them (kernels differ by an LSB)
    ref = compare_models(f, q, _opts(npz, runtime="reference"))
    data = np.load(npz)["tokens"][:, None]
    for lay in (x for x in ref.layers if x.op_type == "FULLY_CONNECTED"):
        want = _independent_fc_mse(f, q, data, lay.op_index, lay.float_op_index, relu="fc1" in lay.tensor_name)
        assert lay.isolated.mse == pytest.approx(want, rel=1e-4)
        opt = next(x for x in fcs if x.op_index == lay.op_index)
        assert abs(opt.isolated.sqnr_db - lay.isolated.sqnr_db) < 1.0


def test_a_transformer_block_has_its_own_error_by_default(pairs):
    f, q, npz = pairs["block"]
    res = compare_models(f, q, _opts(npz))
    compute = [lay for lay in res.layers if lay.op_type in ("FULLY_CONNECTED", "BATCH_MATMUL")]
    assert len(compute) >= 6
    for lay in compute:
        assert lay.isolated is not None, (lay.op_index, lay.isolated_note)
        assert lay.isolated.mse <= 1.5 * lay.metrics.mse + 1e-12  # a layer's own error never (much) above the accumulated
        assert "no isolated error" not in lay.diagnosis.evidence


def test_a_refused_isolated_model_is_named_and_the_comparison_goes_on(pairs, monkeypatch):
    """The runtime refusing the isolated model (here: a custom op planted in it) fails neither
    the comparison nor names the user's float file: every layer's note names the app's own
    model, and the accumulated error is measured as without it."""
    from inspector.core.compare import comparison, isolated
    from inspector.core.compare.isolated_work import isolated_refusal
    from inspector.core.runtime.runner import ModelRunner
    from inspector.core.tflite import rewrite
    from inspector.core.tflite.model import load_model
    from tests.helpers.fixture_models import make_custom_op

    f, q, npz = pairs["dense3d"]
    real = isolated._Builder.serialize
    monkeypatch.setattr(isolated._Builder, "serialize", lambda self, *a: make_custom_op(real(self, *a), "FULLY_CONNECTED", "Planted"))
    rewrite._cache.clear()
    comparison._idle_slots.clear()
    try:
        res = compare_models(f, q, _opts(npz))
    finally:
        rewrite._cache.clear()
        comparison._idle_slots.clear()
    note = isolated_refusal(res)
    assert note is not None and note.startswith(REFUSED_PREFIX + f) and "custom op 'Planted'" in note
    assert all(lay.isolated is None and lay.isolated_note == note for lay in res.layers)
    plain = compare_models(f, q, _opts(npz, isolated=False))
    assert [lay.metrics for lay in res.layers] == [lay.metrics for lay in plain.layers]
    # the runner says which model was refused; without a label it still names the user's file
    from inspector.core.errors import RuntimeFailure

    custom = make_custom_op(open(f, "rb").read(), "FULLY_CONNECTED", "Planted")
    fm = load_model(f)
    x = {fm.main.inputs[0]: np.zeros((1, 12, 16), np.float32)}
    with pytest.raises(RuntimeFailure) as e:
        ModelRunner(fm, content=custom, exposed=(), label="the app's test model").run(x)
    assert e.value.path is None and str(e.value).startswith("the app's test model: ")
    with pytest.raises(RuntimeFailure) as e:
        ModelRunner(fm, content=custom, exposed=()).run(x)
    assert e.value.path == f
