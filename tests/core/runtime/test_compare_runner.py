"""Runner: rewritten models give the same values as preserve-all-tensors; failures, cancel, progress."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.errors import Cancelled, RuntimeFailure
from inspector.core.progress import TaskState
from inspector.core.runtime.runner import ModelRunner, preserved_values
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model
from inspector.core.tflite.rewrite import expose_intermediates
from inspector.core.writing import to_json_text
from tests.helpers.fixture_models import representative_images


@pytest.mark.parametrize("name", ["float", "int8", "a16w8", "dynamic"])
def test_rewritten_model_values_equal_preserved_tensors(fixture_path, name):
    model = load_model(fixture_path(name))
    runner = ModelRunner(model, runtime="reference")
    inp = model.main.tensors[model.main.inputs[0]]
    x = representative_images(1, seed=3)
    feed = {inp.index: x.astype(inp.dtype) if inp.dtype == "float32" else np.zeros(inp.shape, inp.dtype)}
    ours = {k: np.array(v) for k, v in runner.run(feed).items()}
    ref = preserved_values(model, feed, runtime="reference")
    producers = model.main.producers()
    compared = 0
    for t in producers:
        if t in ref and model.main.tensors[t].dtype not in ("string", "resource"):
            np.testing.assert_array_equal(ours[t], ref[t], err_msg=model.main.tensors[t].name)
            compared += 1
    assert compared == len(ours) - len(feed)
    assert compared >= 10


def test_exposed_outputs_cover_every_op_output(fixture_path):
    path = fixture_path("int8")
    model = load_model(path)
    _, exposed = expose_intermediates(str(path), model.main.index)
    wanted = {o for op in model.main.ops for o in op.outputs if o >= 0}
    assert wanted <= set(exposed)


def test_custom_op_is_a_clear_runtime_failure(fixture_path):
    with pytest.raises(RuntimeFailure) as err:
        compare_models(str(fixture_path("float")), str(fixture_path("custom_op")), CompareOptions(samples=SampleSettings(count=1)))
    msg = str(err.value)
    assert "custom_op.tflite" in msg and "MyCustomSoftmax" in msg and "op 12" in msg


def test_cancel_raises_and_progress_counts(fixture_path):
    f, q = str(fixture_path("float")), str(fixture_path("int8"))
    seen = []
    res = compare_models(f, q, CompareOptions(samples=SampleSettings(count=4)), task=TaskState(lambda f, m: seen.append((f, m))))
    assert seen == [(k / 4, f"sample {k} of 4") for k in (1, 2, 3, 4)]
    assert res.samples == 4
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) > 2

    with pytest.raises(Cancelled):
        compare_models(f, q, CompareOptions(samples=SampleSettings(count=50)), task=TaskState(is_cancelled=cancel))
    assert len(calls) == 3


def test_equal_models_give_null_sqnr_not_a_crash(fixture_path):
    f = str(fixture_path("float"))
    res = compare_models(f, f, CompareOptions(samples=SampleSettings(count=2)))
    assert res.layers
    data = json.loads(to_json_text(res.to_json()))
    for layer in data["layers"]:
        assert layer["metrics"]["sqnr_db"] is None
        assert layer["metrics"]["mse"] == 0
    assert data["outputs"][0]["metrics"]["sqnr_db"] is None


def test_optimized_and_reference_are_both_recorded(fixture_path):
    f, q = str(fixture_path("float")), str(fixture_path("int8"))
    opt = compare_models(f, q, CompareOptions(samples=SampleSettings(count=2), runtime="optimized"))
    ref = compare_models(f, q, CompareOptions(samples=SampleSettings(count=2), runtime="reference"))
    assert opt.runtime == "optimized" and "XNNPACK" in opt.kernels
    assert ref.runtime == "reference" and "BUILTIN_WITHOUT_DEFAULT_DELEGATES" in ref.kernels
    # same layers, and both measure a real (finite, plausible) error
    assert [layer.quant_tensor for layer in opt.layers] == [layer.quant_tensor for layer in ref.layers]
    for a, b in zip(opt.layers, ref.layers, strict=True):
        if a.dtype == "int8":
            assert 15 < a.metrics.sqnr_db < 70 and 15 < b.metrics.sqnr_db < 70


def test_result_pickles_and_json_round_trips(fixture_path):
    f, q = str(fixture_path("float")), str(fixture_path("int8"))
    m = load_model(q)
    conv = next(op for op in m.main.ops if op.type == "CONV_2D").outputs[0]
    res = compare_models(f, q, CompareOptions(samples=SampleSettings(count=3), isolated=True, keep_values=frozenset({conv})))
    again = pickle.loads(pickle.dumps(res))
    assert again.to_json() == res.to_json()
    d = json.loads(to_json_text(res.to_json(include_per_sample=True)))
    back = type(res).from_json(d)
    assert back.to_json(include_per_sample=True) == d
    # kept values are real pairs of that tensor: their error is within the layer's max error
    kept = res.kept[conv]
    assert kept.float_values.size == kept.quant_values.size > 100
    layer = res.layer_for_tensor(conv)
    assert np.max(np.abs(kept.float_values - kept.quant_values)) <= layer.metrics.max_abs + 1e-6
    assert kept.total == 3 * layer.num_elements
    # per-sample outputs: the softmax outputs of both models for every sample
    pso = res.per_sample_outputs
    assert len(pso.float) == 3 and pso.float[0][0].shape == (1, 10)
    np.testing.assert_allclose(pso.float[0][0].sum(), 1.0, rtol=1e-5)
    e = np.concatenate([a[0] - b[0] for a, b in zip(pso.float, pso.quant, strict=True)]).ravel()
    np.testing.assert_allclose(np.mean(e * e), res.outputs[0].metrics.mse, rtol=1e-6)


@pytest.mark.parametrize("float_name, quant_name", [("multi_subgraph", "multi_subgraph"), ("stateful", "stateful_int8")])
def test_control_flow_and_stateful_models_compare(fixture_path, float_name, quant_name):
    res = compare_models(str(fixture_path(float_name)), str(fixture_path(quant_name)), CompareOptions(samples=SampleSettings(count=2), isolated=True))
    assert res.layers and res.outputs
    for layer in res.layers:
        if layer.op_type in ("WHILE", "READ_VARIABLE", "ASSIGN_VARIABLE", "VAR_HANDLE"):
            assert layer.isolated is None and layer.isolated_note
    if quant_name == "stateful_int8":
        assert 20 < res.outputs[0].metrics.sqnr_db < 80


@pytest.mark.parametrize("name", ["float", "int8", "a16w8", "dynamic", "float16", "int8_no_signature", "stateful", "stateful_int8", "sparse", "multi_subgraph"])
def test_patched_rewrite_equals_object_api_rewrite(fixture_path, name):
    """The in-place patch (one copy of the file) exposes exactly what the object-API rebuild does:
    same outputs in the interpreter, no signatures, every weight byte where it was."""
    from ai_edge_litert.interpreter import Interpreter

    from inspector.core.tflite.rewrite import _rebuild, exposed_outputs, patch_outputs

    path = str(fixture_path(name))
    data = open(path, "rb").read()
    outs = exposed_outputs(path, 0)
    patched = patch_outputs(data, 0, outs)
    assert patched is not None and patched[: len(data)] != data  # only the outputs field changed ...
    diff = [i for i in range(len(data)) if patched[i] != data[i]]
    assert len(diff) <= 8  # ... (4 bytes) and the signature count (4 bytes)
    rebuilt, rebuilt_outs = _rebuild(path, 0)
    assert outs == rebuilt_outs
    a, b = Interpreter(model_content=patched), Interpreter(model_content=rebuilt)
    assert [d["index"] for d in a.get_output_details()] == [d["index"] for d in b.get_output_details()] == list(outs)
    assert a.get_signature_list() == {}
    assert expose_intermediates(path, 0) == (patched, outs)
    assert open(path, "rb").read() == data  # the input file is untouched


def test_single_interpreter_set_for_big_models_gives_the_same_result(fixture_path, monkeypatch):
    """Above DOUBLE_BUFFER_MAX_BYTES one set of interpreters is used (memory); same numbers."""
    import inspector.core.compare.comparison as compare

    f, q = str(fixture_path("float")), str(fixture_path("int8"))
    opts = CompareOptions(samples=SampleSettings(count=5, seed=2))
    double = compare_models(f, q, opts)
    made = []
    real_slot = compare._Slot
    monkeypatch.setattr(compare, "_Slot", lambda *a: made.append(1) or real_slot(*a))
    monkeypatch.setattr(compare, "DOUBLE_BUFFER_MAX_BYTES", 0)
    compare._idle_slots.clear()  # not the interpreters the first run kept
    single = compare_models(f, q, opts)
    assert len(made) == 1
    for a, b in zip(double.layers, single.layers, strict=True):
        assert a.metrics == b.metrics
