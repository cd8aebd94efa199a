"""Signatures (prefill / decode with a KV-cache input) and dynamic dimensions ([-1, -1] inputs).

The reference side is independent of our runner: LiteRT's own signature runner on an
interpreter with `experimental_preserve_all_tensors=True` and builtin kernels, every tensor of
the signature's subgraph read back with the interpreter's own quantization parameters, the
MSE computed in float64 over all samples at once.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.errors import InputError
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model
from inspector.core.tflite.signatures import list_signatures, select_signature
from tests.helpers.reference import preserving_interpreter as _interpreter
from tests.helpers.shape_fixtures import DYN_WIDTH, cache_path

REPO = Path(__file__).resolve().parents[3]
CACHE = REPO / ".fixture-cache"
REL = 1e-5


@pytest.fixture(scope="module")
def sig_pair() -> tuple[Path, Path]:
    return cache_path(CACHE, "sig_float"), cache_path(CACHE, "sig_int8")


@pytest.fixture(scope="module")
def dyn_pair() -> tuple[Path, Path]:
    return cache_path(CACHE, "dyn_float"), cache_path(CACHE, "dyn_int8")


def _run_signature(path, key: str | None, samples: list[dict[str, np.ndarray]]) -> list[dict[int, np.ndarray]]:
    """Per sample: {tensor index: float64 value (dequantized)} of every tensor of the subgraph run."""
    it = _interpreter(path)
    if key is None:
        sg, runner = 0, None
    else:
        runner = it.get_signature_runner(key)
        sg = runner._subgraph_index
    out = []
    for s in samples:
        if runner is None:
            (d,) = it.get_input_details()
            value = next(iter(s.values()))
            it.resize_tensor_input(d["index"], list(value.shape))
            it.allocate_tensors()
            it.set_tensor(d["index"], value)
            it.invoke()
        else:
            runner(**s)
        vals = {}
        for d in it.get_tensor_details(sg):
            try:
                v = np.array(it.get_tensor(d["index"], sg))
            except ValueError:
                continue
            qp = d["quantization_parameters"]
            v = v.astype(np.float64)
            if len(qp["scales"]) == 1 and np.issubdtype(d["dtype"], np.integer):
                v = (v - qp["zero_points"][0]) * float(qp["scales"][0])
            vals[d["index"]] = v
        out.append(vals)
    return out


def _check_mse(result, fvals, qvals) -> int:
    checked = 0
    for layer in result.layers:
        if layer.scale is not None and len(layer.scale) > 1:
            continue  # per-channel activations do not occur here
        x = np.concatenate([f[layer.float_tensor].ravel() for f in fvals])
        y = np.concatenate([q[layer.quant_tensor].ravel() for q in qvals])
        ref = float(np.mean((x - y) ** 2))
        assert layer.metrics.mse == pytest.approx(ref, rel=REL, abs=1e-12), (layer.op_index, layer.op_type)
        checked += 1
    return checked


def test_signatures_listed_as_the_runtime_sees_them(sig_pair):
    from ai_edge_litert.interpreter import Interpreter

    fpath, _ = sig_pair
    it = Interpreter(model_path=str(fpath))
    want = it.get_signature_list()
    got = list_signatures(load_model(fpath))
    assert sorted(s.key for s in got) == sorted(want)
    for s in got:
        assert sorted(n for n, _, _ in s.inputs) == sorted(want[s.key]["inputs"])
        assert sorted(n for n, _, _ in s.outputs) == sorted(want[s.key]["outputs"])
        assert s.subgraph == it.get_signature_runner(s.key)._subgraph_index
    assert {s.key for s in got} == {"prefill", "decode"}
    # One of them is not subgraph 0: the comparison must run a non-main subgraph.
    assert any(s.subgraph != 0 for s in got)


@pytest.mark.parametrize("key", ["prefill", "decode"])
def test_each_signature_compares(sig_pair, tmp_path, key):
    fpath, qpath = sig_pair
    fm = select_signature(load_model(fpath), key)
    rng = np.random.default_rng(4)
    names = {n: fm.main.tensors[t] for n, t in next(s for s in fm.signatures if s.key == key).inputs.items()}
    samples = [{n: rng.uniform(-1, 1, t.shape).astype(np.float32) for n, t in names.items()} for _ in range(3)]
    # An .npz keyed by the signature's input names (not tensor names), samples along axis 0.
    npz = tmp_path / f"{key}.npz"
    np.savez(npz, **{n: np.concatenate([s[n] for s in samples]) for n in names})
    r = compare_models(str(fpath), str(qpath), CompareOptions(signature=key, samples=SampleSettings(count=None, source=str(npz)), runtime="reference"))
    assert r.samples == 3 and r.signature == key
    sig_outputs = next(s for s in fm.signatures if s.key == key).outputs
    assert {o.name for o in r.outputs} == set(sig_outputs)
    fvals, qvals = _run_signature(fpath, key, samples), _run_signature(qpath, key, samples)
    assert _check_mse(r, fvals, qvals) >= 4
    for o in r.outputs:  # the signature's outputs, compared as the runtime computes them
        x = np.concatenate([f[o.float_tensor].ravel() for f in fvals])
        y = np.concatenate([q[o.quant_tensor].ravel() for q in qvals])
        assert o.metrics.mse == pytest.approx(float(np.mean((x - y) ** 2)), rel=REL)


def test_signatures_differ_and_random_samples_follow_the_signature(sig_pair):
    fpath, qpath = sig_pair
    a = compare_models(str(fpath), str(qpath), CompareOptions(signature="prefill", samples=SampleSettings(count=2)))
    b = compare_models(str(fpath), str(qpath), CompareOptions(signature="decode", samples=SampleSettings(count=2)))
    assert [o.name for o in b.outputs] == ["logits"]
    assert sorted(o.name for o in a.outputs) == ["hidden", "kv_cache"]
    assert "SOFTMAX" in {x.op_type for x in b.layers} and "SOFTMAX" not in {x.op_type for x in a.layers}


def test_unknown_signature_names_the_available_keys(sig_pair):
    fpath, qpath = sig_pair
    with pytest.raises(InputError) as e:
        compare_models(str(fpath), str(qpath), CompareOptions(signature="generate"))
    assert "'generate'" in str(e.value) and "'prefill'" in str(e.value) and "'decode'" in str(e.value)
    assert str(fpath) in str(e.value)


def test_cli_bad_signature_exits_2(sig_pair):
    fpath, qpath = sig_pair
    p = subprocess.run(
        [sys.executable, "-m", "inspector", "compare", str(fpath), str(qpath), "--signature", "nope"],
        capture_output=True, text=True, cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert p.returncode == 2, p.stderr
    assert "'nope'" in p.stderr and "'prefill'" in p.stderr and "'decode'" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_dynamic_input_resized_to_the_samples(dyn_pair, tmp_path):
    fpath, qpath = dyn_pair
    fm = load_model(fpath)
    assert fm.main.tensors[fm.main.inputs[0]].shape_signature == (-1, -1)
    rng = np.random.default_rng(9)
    samples = [{"audio": rng.uniform(-1, 1, (1, DYN_WIDTH)).astype(np.float32)} for _ in range(3)]
    npz = tmp_path / "audio.npz"
    np.savez(npz, audio=np.concatenate([s["audio"] for s in samples]))
    r = compare_models(str(fpath), str(qpath), CompareOptions(samples=SampleSettings(count=None, source=str(npz)), runtime="reference"))
    assert r.samples == 3
    fvals, qvals = _run_signature(fpath, None, samples), _run_signature(qpath, None, samples)
    assert _check_mse(r, fvals, qvals) >= 5
    (out,) = r.outputs
    x = np.concatenate([f[out.float_tensor].ravel() for f in fvals])
    assert x.size == 3 * DYN_WIDTH  # every element of the resized tensors was compared
    assert out.metrics.mse == pytest.approx(
        float(np.mean((x - np.concatenate([q[out.quant_tensor].ravel() for q in qvals])) ** 2)), rel=REL
    )


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "inspector", *map(str, args)],
        capture_output=True, text=True, cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip


def test_requantize_and_report_on_a_signature(sig_pair, tmp_path):
    import json

    fpath, qpath = sig_pair
    out = tmp_path / "prefill_int8.tflite"
    p = _cli("requantize", fpath, "--out", out, "--signature", "prefill", "--samples", 4)
    assert p.returncode == 0, p.stderr
    assert "signature 'decode' calibrated on 4 random samples" in p.stdout
    r = compare_models(str(fpath), str(out), CompareOptions(signature="prefill", samples=SampleSettings(count=2)))
    assert {x.op_type for x in r.layers} >= {"FULLY_CONNECTED"}
    assert all(x.dtype == "int8" for x in r.layers if x.op_type == "FULLY_CONNECTED")
    rep = tmp_path / "rep.json"
    p = _cli("report", fpath, qpath, "--signature", "prefill", "--json", rep)
    assert p.returncode == 0, p.stderr
    data = json.loads(rep.read_text())
    assert data["comparison"]["signature"] == "prefill"
    assert sorted(o["name"] for o in data["comparison"]["outputs"]) == ["hidden", "kv_cache"]
    assert _cli("requantize", fpath, "--out", tmp_path / "x.tflite", "--signature", "nope").returncode == 2
