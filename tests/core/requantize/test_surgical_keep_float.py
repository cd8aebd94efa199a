"""Keep float, surgically: only the selected op of B changes, everything else is byte-identical.

Checked on converter-built pairs (the small CNN, the trained classifier, MobileNetV2 160x160)
with an independent flatbuffer parse (`tflite` package), numpy SQNR of the model output on
held-out samples, and both runtimes (reference kernels and XNNPACK).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tflite

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.errors import InputError
from inspector.core.requantize.surgical import apply_plan
from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import Model
from tests.helpers.fixture_models import representative_images
from tests.helpers.paths import REPO
from tests.helpers.surgical_fixtures import cache_paths, mnv2_images
from tests.helpers.surgical_helpers import (
    assert_untouched,
    edited_names,
    op_records,
    run_both,
    sqnr,
)
from tests.helpers.task_fixtures import TaskFixtures, make_dataset

DQ, Q, FC = tflite.BuiltinOperator.DEQUANTIZE, tflite.BuiltinOperator.QUANTIZE, tflite.BuiltinOperator.FULLY_CONNECTED


def _pairs(fixture_path):
    task = TaskFixtures(REPO / ".fixture-cache").models()
    mnv2 = cache_paths(REPO / ".fixture-cache")
    return {
        "cnn": (fixture_path("float"), fixture_path("int8"), representative_images(6, seed=5)),
        "classifier": (task["cls_float"], task["cls_int8"], make_dataset(6, seed=77)[0]),
        "mobilenetv2": (mnv2["mnv2_float"], mnv2["mnv2_int8"], mnv2_images(4, seed=5)),
    }


def _worst_isolated(fpath: Path, qpath: Path) -> int:
    res = compare_models(str(fpath), str(qpath), CompareOptions(samples=SampleSettings(count=4), isolated=True))
    cands = [lay for lay in res.layers if lay.isolated is not None and lay.op_type != "SOFTMAX"]
    return min(cands, key=lambda lay: lay.isolated.sqnr_db).op_index


@pytest.mark.parametrize("pair", ["cnn", "classifier", "mobilenetv2"])
def test_keep_float_of_the_worst_layer(fixture_path, pair):
    fpath, qpath, xs = _pairs(fixture_path)[pair]
    worst = _worst_isolated(fpath, qpath)
    r = apply_plan(str(fpath), str(qpath), SurgicalPlan((Edit("keep_float", f"op:{worst}"),), samples=SampleSettings(count=2)))
    before, after = qpath.read_bytes(), r.model_bytes
    assert r.edited_ops == (worst,)
    outs, consts = edited_names(before, [worst])
    assert_untouched(before, after, outs, consts)
    # Exactly one op more at each side (DEQUANTIZE per quantized activation input, one QUANTIZE).
    recs = op_records(after)
    k = next(i for i, rec in enumerate(recs) if any(o.endswith("/float") for o in rec[2]))
    assert recs[k - 1][0] == DQ and recs[k + 1][0] == Q
    assert recs[k + 1][2] == op_records(before)[worst][2]  # back into B's own output tensor
    ref = run_both(fpath.read_bytes(), xs)["reference"]
    got_b = run_both(before, xs)
    got_new = run_both(after, xs)
    for runtime in ("reference", "xnnpack"):
        assert np.all(np.isfinite(got_new[runtime]))
        assert sqnr(ref, got_new[runtime]) >= sqnr(ref, got_b[runtime]) - 0.05, runtime


def test_a_run_of_float_ops_has_no_conversions_inside(fixture_path):
    fpath, qpath = fixture_path("float"), fixture_path("int8")
    r = apply_plan(str(fpath), str(qpath), SurgicalPlan((Edit("keep_float", "op:11"), Edit("keep_float", "op:12")), samples=SampleSettings(count=2)))
    recs = op_records(r.model_bytes)
    codes = [c for c, _, _ in recs]
    i = codes.index(FC)
    assert codes[i - 1 : i + 3] == [DQ, FC, FC, Q]
    assert recs[i][2][0] in recs[i + 1][1]  # the second FC reads the first one's float output
    outs, consts = edited_names(qpath.read_bytes(), [11, 12])
    assert_untouched(qpath.read_bytes(), r.model_bytes, outs, consts)


def test_kept_float_op_computes_with_the_float_weights(fixture_path):
    """The float FC's output equals numpy x_deq @ W_A^T (+ b) on the dequantized input."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    from inspector.core.tflite.model import load_model

    fpath, qpath = fixture_path("float"), fixture_path("int8")
    r = apply_plan(str(fpath), str(qpath), SurgicalPlan((Edit("keep_float", "logits"),), samples=SampleSettings(count=2)))
    fm = load_model(fpath)
    fc = next(op for op in fm.main.ops if op.type == "FULLY_CONNECTED" and "logits" in fm.main.tensors[op.outputs[0]].name)
    w = fm.tensor_data(fm.main.tensors[fc.inputs[1]]).reshape(fm.main.tensors[fc.inputs[1]].shape)
    it = Interpreter(model_content=r.model_bytes, experimental_preserve_all_tensors=True,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)  # fmt: skip
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], representative_images(1, seed=3))
    it.invoke()
    names = {d["name"]: d["index"] for d in it.get_tensor_details()}
    x = it.get_tensor(next(i for n, i in names.items() if n.endswith("/dequantized") and "fc1" in n))
    y = it.get_tensor(next(i for n, i in names.items() if n.endswith("/float") and "logits" in n))
    assert x.dtype == np.float32 and y.dtype == np.float32 and np.abs(y).max() > 0
    np.testing.assert_allclose(y, x.astype(np.float64) @ w.T.astype(np.float64), rtol=1e-4, atol=1e-6)


def test_ops_without_a_float_twin_and_conflicts_are_refused(fixture_path):
    fpath, qpath = fixture_path("float"), fixture_path("int8")
    with pytest.raises(InputError, match="QUANTIZE"):
        apply_plan(str(fpath), str(qpath), SurgicalPlan((Edit("keep_float", "op:0"),)))
    with pytest.raises(InputError, match="matches no op"):
        apply_plan(str(fpath), str(qpath), SurgicalPlan((Edit("keep_float", "no-such-layer"),)))
    with pytest.raises(InputError, match="choose one"):
        apply_plan(str(fpath), str(qpath), SurgicalPlan((Edit("keep_float", "op:12"), Edit("per_channel", "op:12"))))


def test_unpaired_op_is_refused(fixture_path, monkeypatch):
    """An op pairing could not match gets one clear error naming it."""
    import dataclasses

    from inspector.core.requantize import surgical

    real = surgical.pair_models

    def without_logits(fm, qm):
        p = real(fm, qm)
        return dataclasses.replace(p, _qop2f={k: v for k, v in p._qop2f.items() if k != 12})

    monkeypatch.setattr(surgical, "pair_models", without_logits)
    with pytest.raises(InputError, match=r"op 12 \(FULLY_CONNECTED, .*logits.*\) has no float counterpart"):
        apply_plan(str(fixture_path("float")), str(fixture_path("int8")), SurgicalPlan((Edit("keep_float", "op:12"),)))


@pytest.mark.parametrize("pair", ["cnn", "classifier"])
def test_keeping_the_last_layer_float_reaches_the_float_output(fixture_path, pair):
    """The model's last quantized op (SOFTMAX / the logits) whose output only a DEQUANTIZE reads
    (float I/O): kept float, it writes the graph's float output itself (no QUANTIZE/DEQUANTIZE
    round trip through 8 bits), so the output takes the float op's precision; the other ops and
    tensors are untouched, the graph output keeps its name, and both runtimes agree."""
    fpath, qpath, xs = _pairs(fixture_path)[pair]
    before = qpath.read_bytes()
    recs = op_records(before)
    assert recs[-1][0] == DQ  # float output: the model ends with a DEQUANTIZE
    last = len(recs) - 2  # the op that DEQUANTIZE reads
    r = apply_plan(str(fpath), str(qpath), SurgicalPlan((Edit("keep_float", f"op:{last}"),), samples=SampleSettings(count=2)))
    after = r.model_bytes
    new = op_records(after)
    assert new[-1][2] == recs[-1][2] and new[-1][0] != DQ and Q not in [rec[0] for rec in new[-2:]]  # the float op writes the output
    added_dq = sum(1 for rec in new if rec[2] and rec[2][0].endswith("/dequantized"))
    assert added_dq >= 1 and len(new) == len(recs) + added_dq - 1  # its inputs dequantized; the final DEQUANTIZE gone
    outs, consts = edited_names(before, [last, last + 1])
    assert_untouched(before, after, outs, consts)
    ref = run_both(fpath.read_bytes(), xs)["reference"]
    got_b, got_new = run_both(before, xs), run_both(after, xs)
    for runtime in ("reference", "xnnpack"):
        assert sqnr(ref, got_new[runtime]) >= sqnr(ref, got_b[runtime]) - 0.05, runtime
    # Independent: B's own input to that op (read with preserve_all_tensors), dequantized, through
    # numpy's softmax, is the new output to float32 rounding: no 8-bit step after the float op.
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    assert Model(qpath).main.ops[last].type == "SOFTMAX"
    it = Interpreter(model_content=before, experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
                     experimental_preserve_all_tensors=True)  # fmt: skip
    it.allocate_tensors()
    inp = it.get_input_details()[0]
    logits_t = Model(qpath).main.tensors[Model(qpath).main.ops[last].inputs[0]]
    want = []
    for x in xs:
        it.set_tensor(inp["index"], x[None].astype(np.float32))
        it.invoke()
        z = (it.get_tensor(logits_t.index).astype(np.float64) - logits_t.quantization.zero_points[0]) * logits_t.quantization.scales[0]
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        want.append(e / e.sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(got_new["reference"], np.concatenate(want), atol=2e-6)
    assert not np.allclose(got_b["reference"], np.concatenate(want), atol=1e-3)  # B's output was 8-bit (steps of 1/256)
