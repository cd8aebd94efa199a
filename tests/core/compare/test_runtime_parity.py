"""Runtime parity: per-layer differences between two runtimes equal an independent numpy diff of
`experimental_preserve_all_tensors` values from two interpreters, and the integer recomputation
of conv / depthwise / FC / ADD agrees bit for bit with the BUILTIN_REF kernels."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter, OpResolverType

from inspector.core.compare.runtime_parity import ParityOptions, compare_runtimes
from inspector.core.quantmath.integer_kernels import SPEC_OPS, integer_output, supports
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model

REPO = Path(__file__).resolve().parents[3]
RESOLVERS = {"builtin_ref": OpResolverType.BUILTIN_REF, "reference": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES}


def _images(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.normal(0, 1, (n, 8, 8, 3))
    return np.tanh(np.repeat(np.repeat(base, 4, 1), 4, 2) + 0.3 * rng.normal(0, 1, (n, 32, 32, 3))).astype(np.float32)


def _preserved(path: Path, resolver, x: np.ndarray) -> dict[int, np.ndarray]:
    """Every tensor of one invocation, read straight from an interpreter of the unmodified file."""
    it = Interpreter(model_path=str(path), experimental_op_resolver_type=resolver, experimental_preserve_all_tensors=True)
    it.allocate_tensors()
    d = it.get_input_details()[0]
    if d["dtype"] == np.int8:  # int8 input: quantize as the spec says
        s, z = d["quantization"]
        x = np.clip(np.round(x / s) + z, -128, 127).astype(np.int8)
    it.set_tensor(d["index"], x[None].astype(d["dtype"]))
    it.invoke()
    out = {}
    for t in it.get_tensor_details():
        try:
            out[t["index"]] = it.get_tensor(t["index"]).copy()
        except ValueError:
            continue
    return out


@pytest.fixture(scope="module")
def npz(tmp_path_factory) -> tuple[Path, np.ndarray]:
    x = _images(4, seed=5)
    p = tmp_path_factory.mktemp("parity") / "inputs.npz"
    np.savez(p, image=x)
    return p, x


@pytest.mark.parametrize("name", ["int8", "int8_io"])
def test_layer_differences_equal_independent_preserved_tensor_diff(fixture_path, npz, name):
    path = fixture_path(name)
    p, xs = npz
    result = compare_runtimes(str(path), ParityOptions(runtimes=("builtin_ref", "reference"), samples=SampleSettings(count=None, source=str(p))))
    assert result.samples == len(xs) and result.labels == ("builtin_ref", "reference")
    runs = [(_preserved(path, RESOLVERS["builtin_ref"], x), _preserved(path, RESOLVERS["reference"], x)) for x in xs]
    m = load_model(str(path))
    checked = differing = 0
    for layer in result.layers:
        op = m.main.ops[layer.op_index]
        t = op.outputs[0]
        diffs = [np.abs(a[t].astype(np.float64) - b[t].astype(np.float64)).ravel() for a, b in runs]
        d = np.concatenate(diffs)
        assert layer.differ_share == np.count_nonzero(d) / d.size, (layer.op_index, layer.op_type)
        if m.main.tensors[t].dtype == "int8":
            assert layer.max_lsb == d.max(), (layer.op_index, layer.op_type)
        differing += layer.differ_share > 0
        checked += 1
    assert checked >= 10
    # these converter-built models do diverge (the builtin 1x1 conv rounds differently), so the
    # comparison is not vacuous; the first divergence is marked once, and traced to the kernel
    assert differing > 0
    firsts = [layer for layer in result.layers if layer.first_divergence]
    assert len(firsts) == 1 and firsts[0] == next(la for la in result.layers if la.differ_share > 0)
    spec = firsts[0].spec_mismatch
    assert spec is not None and spec["reference"].differ_share > 0 and spec["builtin_ref"].differ_share == 0
    # the BUILTIN_REF side is the spec: the integer recomputation matches it everywhere
    for layer in result.layers:
        if layer.spec_mismatch is not None:
            assert layer.spec_mismatch["builtin_ref"].differ_share == 0, layer


def test_outputs_optimized_vs_reference_equal_independent_interpreters(fixture_path, npz):
    path = fixture_path("int8")
    p, xs = npz
    result = compare_runtimes(str(path), ParityOptions(runtimes=("reference", "optimized"), samples=SampleSettings(count=None, source=str(p))))
    m = load_model(str(path))
    (out_t,) = m.main.outputs
    deq = m.main.producers()[out_t]
    assert deq.type == "DEQUANTIZE"
    step = m.main.tensors[deq.inputs[0]].quantization.scales[0]
    outs = {}
    for rt, res in (("reference", OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES), ("optimized", OpResolverType.AUTO)):
        it = Interpreter(model_path=str(path), experimental_op_resolver_type=res, num_threads=1)
        it.allocate_tensors()
        d, o = it.get_input_details()[0], it.get_output_details()[0]
        vals = []
        for x in xs:
            it.set_tensor(d["index"], x[None])
            it.invoke()
            vals.append(it.get_tensor(o["index"]).astype(np.float64))
        outs[rt] = np.concatenate(vals)
    diff = np.abs(outs["reference"] - outs["optimized"])
    (o,) = result.outputs
    assert o.differ_share == np.count_nonzero(diff) / diff.size
    assert o.max_lsb == pytest.approx(diff.max() / step, abs=1e-6)


SPEC_MODELS = ["int8", "int8_per_tensor", "int8_io"]


def test_integer_recomputation_is_bit_exact_with_builtin_ref(fixture_path, example_pair):
    from tests.helpers.task_fixtures import TaskFixtures

    seen = set()
    paths = [fixture_path(n) for n in SPEC_MODELS] + [example_pair[1]]
    paths.append(TaskFixtures(REPO / ".fixture-cache").models()["cls_int8"])
    for path in paths:
        m = load_model(str(path))
        sg = m.main
        shape = tuple(sg.tensors[sg.inputs[0]].shape[1:])
        xs = [np.random.default_rng(k).uniform(-1, 1, shape).astype(np.float32) for k in range(8)]
        if shape == (32, 32, 3):
            xs += list(_images(4, seed=11))
        for x in xs:
            values = _preserved(path, OpResolverType.BUILTIN_REF, x)
            for op in sg.ops:
                if not supports(sg, op):
                    continue
                ins = {i: values[i] for i in op.inputs if i >= 0 and not sg.tensors[i].is_constant}
                mine = integer_output(m, op, ins, sg)
                ref = values[op.outputs[0]]
                assert mine.dtype == ref.dtype and mine.shape == ref.shape
                assert np.array_equal(mine, ref), (path.name, op.index, op.type, int(np.abs(mine.astype(int) - ref).max()))
                seen.add(op.type)
    assert seen == SPEC_OPS


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})  # fmt: skip


def test_cli_json_contract(example_pair):
    q = str(example_pair[1])
    proc = _cli("compare-runtimes", q, "--samples", "2", "--json", "-")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    contract = ["model", "runtimes", "threads", "samples", "layers", "outputs"]  # issue 14; extended, never renamed
    assert list(d)[: len(contract)] == contract and list(d)[len(contract) :] == ["labels", "samples_are_random", "inputs", "signature", "subgraph"]
    assert d["runtimes"] == ["reference", "optimized"] and d["threads"] == [1, 1] and d["samples"] == 2
    assert set(d["layers"][0]) == {"op_index", "op_type", "tensor_name", "differ_share", "max_lsb",
                                   "first_divergence", "spec_mismatch", "tensor_index"}  # fmt: skip
    conv = next(la for la in d["layers"] if la["op_type"] == "CONV_2D")
    assert set(conv["spec_mismatch"]) == {"reference", "optimized"}
    assert set(d["outputs"][0]) == {"name", "differ_share", "max_lsb", "tensor_index"}
    proc = _cli("compare-runtimes", q, "--threads", "1,2", "--samples", "1", "--json", "-")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert d["runtimes"] == ["optimized", "optimized"] and d["threads"] == [1, 2]
    conv = next(la for la in d["layers"] if la["op_type"] == "CONV_2D")  # (the example's op 1 is a RESHAPE: no spec kernel)
    assert set(conv["spec_mismatch"]) == {"optimized@1", "optimized@2"}


@pytest.mark.parametrize("args, words", [
    (["--runtimes", "fast,slow"], "unknown runtime 'fast'"),
    (["--runtimes", "optimized"], "nothing to compare"),
    (["--threads", "0,2"], "at least 1"),
    (["--runtimes", "a,b,c"], "one or two"),
])  # fmt: skip
def test_cli_bad_arguments_exit_2_with_one_line(example_pair, args, words):
    proc = _cli("compare-runtimes", str(example_pair[1]), *args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0]


def test_result_json_round_trip(example_pair):
    """What a session saves reads back as the same result; the issue-14 keys are all there."""
    from inspector.core.compare.parity_result import RuntimeParityResult

    r = compare_runtimes(str(example_pair[1]), ParityOptions(("reference", "builtin_ref"), (1, 1), SampleSettings(count=2)))
    d = json.loads(json.dumps(r.to_json()))
    assert {"model", "runtimes", "threads", "samples", "layers", "outputs"} <= set(d)
    assert RuntimeParityResult.from_json(d) == r
    assert any(layer.spec_mismatch for layer in r.layers)  # the nested differences round-trip too
    with pytest.raises((KeyError, TypeError, ValueError)):
        RuntimeParityResult.from_json({**d, "threads": [1]})
