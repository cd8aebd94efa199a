"""Requantize: plan -> litert-quantizer -> a checked model; values checked against LiteRT + numpy."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from inspector.core.errors import Cancelled, InputError, InspectorError, RuntimeFailure
from inspector.core.progress import TaskState
from inspector.core.requantize.plan import Override, Plan
from inspector.core.requantize.quantizer_route import (
    load_recipe,
    requantize,
    save_model,
    save_recipe,
)
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model
from tests.helpers.fixture_models import representative_images
from tests.helpers.reference import sqnr_db as _sqnr
from tests.helpers.requant_fixtures import cache_path

REPO = Path(__file__).resolve().parents[3]
HEAD = "StatefulPartitionedCall_1:0"  # output of the fcn's last conv ("head")


def _sha(p: Path) -> str:
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


def _run(data: bytes, xs: np.ndarray, key: str = "image") -> np.ndarray:
    from ai_edge_litert.interpreter import Interpreter

    runner = Interpreter(model_content=data).get_signature_runner()
    return np.concatenate(
        [next(iter(runner(**{key: xs[i : i + 1]}).values())) for i in range(len(xs))]
    )


@pytest.fixture(scope="module")
def fcn() -> Path:
    return cache_path(REPO / ".fixture-cache", "fcn")


@pytest.fixture(scope="module")
def calib() -> np.ndarray:
    return representative_images(8, 0, (16, 16, 3))


@pytest.fixture(scope="module")
def evals() -> np.ndarray:
    return representative_images(16, 1, (16, 16, 3))


@pytest.fixture(scope="module")
def all_int8(fcn, calib):
    return requantize(fcn, Plan(), calib)


@pytest.fixture(scope="module")
def head_float(fcn, calib):
    return requantize(fcn, Plan(overrides=(Override("op:5", "keep_float"),)), calib)


def _saved(result, tmp_path: Path, name: str):
    p = tmp_path / name
    save_model(result, p)
    return load_model(p)


def test_keep_float_conv_stays_float_and_the_rest_is_int8(fcn, head_float, tmp_path):
    m = _saved(head_float, tmp_path, "head_float.tflite")
    sg = m.main
    float_model = load_model(fcn)
    types = [op.type for op in sg.ops]
    # the float model's ops plus QUANTIZE/DEQUANTIZE at the edges; an op code with a stale
    # legacy field would show up here as a second ADD
    assert types.count("ADD") == 1 and "DEQUANTIZE" in types and "QUANTIZE" in types
    convs = [op for op in sg.ops if op.type == "CONV_2D"]
    assert len(convs) == 4
    for op in convs:
        x, w, b = (sg.tensors[i] for i in op.inputs)
        y = sg.tensors[op.outputs[0]]
        if y.name == HEAD:
            assert (x.dtype, w.dtype, b.dtype, y.dtype) == ("float32",) * 4
            fw = float_model.main.tensor_by_name(w.name)
            assert np.array_equal(m.tensor_data(w), float_model.tensor_data(fw))
        else:
            assert (x.dtype, w.dtype, b.dtype, y.dtype) == ("int8", "int8", "int32", "int8")
            assert w.quantization.per_channel and w.quantization.num_channels == w.shape[0]
            assert set(w.quantization.zero_points) == {0}
    for op in sg.ops:
        if op.type in ("ADD", "CONCATENATION"):
            assert {sg.tensors[i].dtype for i in (*op.inputs, *op.outputs)} == {"int8"}
    assert [c.ok for c in head_float.checks] == [True]
    assert head_float.treatments[5] == "keep_float"
    assert {head_float.treatments[i] for i in (0, 1, 3)} == {"int8 (per-channel)"}


def test_keep_float_output_runs_and_beats_all_int8(fcn, all_int8, head_float, evals):
    ref = _run(fcn.read_bytes(), evals)
    s_int8 = _sqnr(ref, _run(all_int8.model_bytes, evals))
    s_keep = _sqnr(ref, _run(head_float.model_bytes, evals))
    assert 15 < s_int8 < s_keep - 2, (s_int8, s_keep)


def test_saved_recipe_reproduces_the_model(fcn, calib, head_float, tmp_path):
    path = tmp_path / "recipe.json"
    save_recipe(head_float, path)
    again = requantize(fcn, samples=calib, recipe=load_recipe(path))
    assert again.model_bytes == head_float.model_bytes
    assert again.plan is None and again.recipe == head_float.recipe








def test_save_model_refuses_input_paths(fcn, head_float, tmp_path):
    with pytest.raises(InputError, match="overwrite an input"):
        save_model(head_float, fcn)
    other = tmp_path / "quant.tflite"
    other.write_bytes(b"x")
    with pytest.raises(InputError):
        save_model(head_float, other, protect=[other])
    assert other.read_bytes() == b"x"


@pytest.mark.parametrize("name", ["float16", "no_signature"])
def test_float16_and_unsigned_models(fixture_path, name, tmp_path):
    src = fixture_path(name)
    before = _sha(src)
    xs = representative_images(6, 2)
    r = requantize(src, Plan(), representative_images(6, 0))
    assert _sha(src) == before
    m = _saved(r, tmp_path, f"{name}_q.tflite")
    assert not any(t.dtype == "float16" for t in m.main.tensors)
    weights = [
        m.main.tensors[op.inputs[1]]
        for op in m.main.ops
        if op.type in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")
    ]
    assert len(weights) == 6 and {w.dtype for w in weights} == {"int8"}
    if name == "float16":
        assert any("float16" in n for n in r.notes)
        key = "image"
    else:
        assert any("no signature" in n for n in r.notes)
        assert [s.key for s in m.signatures] == ["serving_default"]
        key = load_model(src).main.tensors[0].name
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_path=str(src))
    it.allocate_tensors()
    ref = []
    for i in range(len(xs)):
        it.set_tensor(it.get_input_details()[0]["index"], xs[i : i + 1])
        it.invoke()
        ref.append(it.get_tensor(it.get_output_details()[0]["index"]).copy())
    assert _sqnr(np.concatenate(ref), _run(r.model_bytes, xs, key)) > 25


def test_asymmetric_weights_are_made_symmetric(fcn, calib, all_int8, evals):
    recipe = [dict(rule) for rule in all_int8.recipe]
    cfg = dict(recipe[0]["op_config"])
    cfg["weight_tensor_config"] = dict(cfg["weight_tensor_config"], symmetric=False)
    cfg["skip_checks"] = True  # the quantizer's own policy would otherwise silently skip the ops
    recipe[0] = dict(recipe[0], op_config=cfg)
    r = requantize(fcn, samples=calib, recipe=recipe)
    assert any("refused" in n and "zero points" in n for n in r.notes)
    assert sum(n.startswith("fixed: requantized the int8 weights") for n in r.notes) == 4
    ref = _run(fcn.read_bytes(), evals)
    assert _sqnr(ref, _run(r.model_bytes, evals)) > 15
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.tflite"
        p.write_bytes(r.model_bytes)
        m, f = load_model(p), load_model(fcn)
        for op in (o for o in m.main.ops if o.type == "CONV_2D"):
            w = m.main.tensors[op.inputs[1]]
            q = w.quantization
            assert set(q.zero_points) == {0}
            fw = f.tensor_data(f.main.tensor_by_name(w.name)).astype(np.float64)
            scales = np.asarray(q.scales).reshape(-1, 1, 1, 1)
            deq = m.tensor_data(w).astype(np.float64) * scales
            # two roundings (asymmetric, then symmetric), each at most half a step, and the
            # asymmetric step (max-min)/255 is never larger than the symmetric 2*max|w|/254
            assert np.all(np.abs(deq - fw) <= scales * (1 + 1e-6))
            amax = np.max(np.abs(fw), axis=(1, 2, 3))
            assert np.all(
                np.abs(127 * scales.reshape(-1) - amax) <= 0.5 * scales.reshape(-1) + 1e-9
            )


def test_stateful_signature_output_is_repointed(fixture_path):
    r = requantize(fixture_path("stateful"), Plan(), sample_settings=SampleSettings(3))
    assert any("re-pointed" in n for n in r.notes)
    from ai_edge_litert.interpreter import Interpreter

    out = Interpreter(model_content=r.model_bytes).get_signature_runner()(
        frame=np.ones((1, 16), np.float32)
    )
    assert out["state_out"].dtype == np.float32 and np.all(np.isfinite(out["state_out"]))


def test_sparse_weights_are_densified(fixture_path):
    from inspector.core.requantize.model_prep import prepare

    src = fixture_path("sparse")
    prep = prepare(src.read_bytes())
    xs = np.random.default_rng(0).normal(0, 1, (4, 64)).astype(np.float32)
    ref = _run(src.read_bytes(), xs, "features")
    np.testing.assert_allclose(_run(prep.data, xs, "features"), ref, rtol=1e-5, atol=1e-6)
    r = requantize(src, Plan(), sample_settings=SampleSettings(4))
    assert any("densified" in n for n in r.notes) and set(r.treatments.values()) == {
        "int8 (per-channel)"
    }


def test_densify_block_csr_by_hand():
    from inspector.core.tflite.sparse_densify import DENSE, SPARSE_CSR, DimLevel, densify

    # 4x4 matrix, 1x2 blocks along dim 1: row 0 keeps block 1, row 2 keeps block 0
    levels = [
        DimLevel(DENSE, 4),
        DimLevel(SPARSE_CSR, 0, np.array([0, 1, 1, 2, 2]), np.array([1, 0])),
        DimLevel(DENSE, 2),
    ]
    dense = densify(np.array([1.0, 2.0, 3.0, 4.0], np.float32), (4, 4), (0, 1, 2), (1,), levels)
    expected = np.zeros((4, 4), np.float32)
    expected[0, 2:4] = [1, 2]
    expected[2, 0:2] = [3, 4]
    np.testing.assert_array_equal(dense, expected)


def test_models_the_quantizer_cannot_take_are_explained(fixture_path):
    with pytest.raises(InspectorError, match="WHILE"):
        requantize(fixture_path("multi_subgraph"), Plan(), sample_settings=SampleSettings(2))
    with pytest.raises(RuntimeFailure, match="MyCustomSoftmax"):
        requantize(fixture_path("custom_op"), Plan(), sample_settings=SampleSettings(2))
    with pytest.raises(InputError, match="already quantized"):
        requantize(fixture_path("int8"), Plan(), sample_settings=SampleSettings(2))


def test_progress_and_cancel(fcn, calib):
    seen = []
    requantize(fcn, Plan(), calib[:3], task=TaskState(lambda f, m: seen.append(f)))
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) >= 5
    with pytest.raises(Cancelled):
        requantize(fcn, Plan(), calib[:3], task=TaskState(is_cancelled=lambda: True))


def test_recipe_rules_match_exactly_one_op_scope():
    import re

    from inspector.core.requantize.plan import OpRef, build_recipe, select

    ops = [
        OpRef(0, 0, "CONV_2D", ("m/conv(1)+x;m/relu",), ("in",), "m/conv(1)+x;m/relu;"),
        OpRef(
            0,
            1,
            "CONV_2D",
            ("m/conv(1)+x;m/relu_1",),
            ("m/conv(1)+x;m/relu",),
            "m/conv(1)+x;m/relu_1;",
        ),
        OpRef(0, 2, "ADD", ("m/add",), ("a", "b"), "m/add;"),
    ]
    plan = Plan(
        overrides=(
            Override("op:0", "keep_float"),
            Override(r"relu_\d$", "a16w8"),
            Override("op:0", "dynamic"),
        )
    )
    chosen = select(plan, ops, subgraph=0)
    assert {k: s.treatment for k, s in chosen.items()} == {
        (0, 0): "dynamic",
        (0, 1): "a16w8",
    }  # last wins
    rules = build_recipe(plan, chosen, forced_float=[])
    assert rules[0]["regex"] == ".*" and rules[-1]["operation"] == "OUTPUT"
    for rule, op in zip(rules[1:3], (ops[0], ops[1]), strict=True):
        hits = [o.index for o in ops if re.search(rule["regex"], o.scope)]
        assert hits == [op.index]




def test_silent_quantizer_fallbacks_are_reported(fcn, calib, tmp_path):
    # MSE has no rule for ADD: the quantizer silently uses the base rule; we say so and the
    # per-op check shows what the op really got
    plan = Plan(
        overrides=(
            Override("op:2", "a16w8", algorithm="mse"),
            Override("op:3", "int8", algorithm="mse"),
        )
    )
    r = requantize(fcn, plan, calib[:3])
    assert any("no 'mse' rule for ADD" in n for n in r.notes)
    checks = {c.op.split(" ")[1]: c for c in r.checks}
    assert not checks["2"].ok and checks["2"].observed == "int8"
    assert checks["3"].ok
    m = _saved(r, tmp_path, "mse.tflite")
    add = next(op for op in m.main.ops if op.type == "ADD")
    assert m.main.tensors[add.outputs[0]].dtype == "int8"


