"""The surgical edit `equalize` (cross-layer equalization, Nagel et al. 2019, DFQ §4.1).

Cases are built at test time (`tests/helpers/equalize_fixtures.py`): one output channel of a conv
(or Dense) ×60 with the consumer's matching input weights ÷60, so the float model is unchanged
while the converter's per-tensor activation scale starves the other channels. Checked against
independent computations: the scales s from A's weights in numpy, the float function of A with
the rescaled weights (LiteRT on a rewritten A), the edited weights and biases against
round(w/S), P's new output range against A's tensor values (`experimental_preserve_all_tensors`),
the held-out output SQNR against numpy on interpreter outputs, and every other tensor and op of B
byte-identical through an independent `tflite` parse.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from inspector.core.compare.diagnosis_types import Fix
from inspector.core.compare.pairing import pair_models
from inspector.core.errors import InputError
from inspector.core.progress import NO_TASK
from inspector.core.requantize import equalize as eq
from inspector.core.requantize.diagnosis_fix import fix_plan
from inspector.core.requantize.jobs import surgical_job
from inspector.core.requantize.surgical import apply_plan
from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model
from tests.helpers.equalize_fixtures import CHANNEL, K, cache_paths, fc_vectors, samples_npz
from tests.helpers.fixture_models import representative_images
from tests.helpers.paths import REPO
from tests.helpers.reference import output_rows, preserving_interpreter, sqnr_db
from tests.helpers.surgical_helpers import describe

CNN = (24, 24, 3)
N, SEED = 48, 3  # 32 calibrate, 16 held out (samples.holdout)


@pytest.fixture(scope="module")
def eqp() -> dict[str, Path]:
    root = REPO / ".fixture-cache"
    paths = dict(cache_paths(root))
    paths["cnn_npz"] = samples_npz(root, "cnn", N, SEED)
    paths["fc_npz"] = samples_npz(root, "fc", N, SEED)
    return paths


def _data(kind: str) -> np.ndarray:
    return representative_images(N, SEED, CNN) if kind == "cnn" else fc_vectors(N, SEED)


def _plan(eqp, kind: str, *edits: Edit) -> SurgicalPlan:
    return SurgicalPlan(tuple(edits), samples=SampleSettings(count=N, source=str(eqp[f"{kind}_npz"])))


def _run(eqp, kind: str, *edits: Edit):
    f, q = eqp[f"eq_{kind}_float"], eqp[f"eq_{kind}_int8"]
    return f, q, surgical_job(str(f), str(q), _plan(eqp, kind, *edits), task=NO_TASK).result


def _changed(before: bytes, after: bytes) -> tuple[set[str], bool]:
    """(names of the tensors whose type, shape, quantization or bytes differ; are all ops equal).
    Beyond the graph, the one difference allowed is B's metadata entry recording the equalization."""
    a, b = describe(before), describe(after)
    assert set(a["tensors"]) == set(b["tensors"]) and a["inputs"] == b["inputs"] and a["outputs"] == b["outputs"]
    ma, mb = _model_level(before), _model_level(after)
    assert set(mb["metadata"]) - set(ma["metadata"]) == {EQ_RECORD}
    assert {k: mb["metadata"][k] for k in ma["metadata"]} == ma["metadata"]
    assert {k: v for k, v in mb.items() if k != "metadata"} == {k: v for k, v in ma.items() if k != "metadata"}
    return {n for n, rec in a["tensors"].items() if b["tensors"][n] != rec}, a["ops"] == b["ops"]


EQ_RECORD = "tflite_inspector.equalize"


def _model_level(data: bytes) -> dict:
    """Version, description, subgraph and signature counts, operator codes and metadata (name ->
    bytes) of a model, read with the `tflite` package."""
    import tflite

    m = tflite.Model.GetRootAsModel(data, 0)
    codes = [(m.OperatorCodes(i).BuiltinCode(), m.OperatorCodes(i).DeprecatedBuiltinCode(), m.OperatorCodes(i).Version())
             for i in range(m.OperatorCodesLength())]  # fmt: skip
    meta = {m.Metadata(i).Name().decode(): m.Buffers(m.Metadata(i).Buffer()).DataAsNumpy().tobytes() for i in range(m.MetadataLength())}
    return {"version": m.Version(), "description": m.Description(), "subgraphs": m.SubgraphsLength(),
            "signatures": m.SignatureDefsLength(), "codes": codes, "metadata": meta}  # fmt: skip


def _record_pairs(data: bytes) -> list[tuple[int, int]]:
    return [(r["producer"], r["consumer"]) for r in json.loads(_model_level(data)["metadata"][EQ_RECORD])["pairs"]]


def _const(model, op: int, pos: int) -> tuple[np.ndarray, object]:
    t = model.main.tensors[model.main.ops[op].inputs[pos]]
    return np.asarray(model.tensor_data(t), np.float64).reshape(t.shape), t


# ---- independent numpy: s from A's weights, the float model with the rescaled weights ----------
def _in_ranges(w: np.ndarray, c_type: str, channels: int) -> np.ndarray:
    """max|w| of the consumer per input channel (conv: dim 3, FC: dim 1, depthwise: dim 3 by multiplier)."""
    if c_type == "FULLY_CONNECTED":
        return np.abs(w).max(axis=0)
    if c_type == "CONV_2D":
        return np.abs(w).max(axis=(0, 1, 2))
    return np.abs(w).max(axis=(0, 1, 2)).reshape(channels, -1).max(axis=1)


def _out_ranges(w: np.ndarray, p_type: str) -> np.ndarray:
    return np.abs(w).max(axis=(0, 1, 2)) if p_type == "DEPTHWISE_CONV_2D" else np.abs(w.reshape(w.shape[0], -1)).max(axis=1)


def _equalized_floats(fm, qm, pairs) -> tuple[dict[int, list[np.ndarray]], dict[int, np.ndarray]]:
    """{A op: [weights, bias]} after equalizing `pairs` (B ops) in order, and s per producer (B op)."""
    pairing = pair_models(fm, qm)
    cur: dict[int, list[np.ndarray]] = {}
    scales = {}
    for p, c in pairs:
        fp, fc = pairing.float_op_for(p), pairing.float_op_for(c)
        for f in (fp, fc):
            cur.setdefault(f, [_const(fm, f, 1)[0], _const(fm, f, 2)[0]])
        p_type, c_type = fm.main.ops[fp].type, fm.main.ops[fc].type
        wp, bp = cur[fp]
        wc = cur[fc][0]
        r1, r2 = _out_ranges(wp, p_type), _in_ranges(wc, c_type, len(bp))
        s = np.sqrt(r1 * r2) / r2
        if p_type == "DEPTHWISE_CONV_2D":
            cur[fp] = [wp / s[None, None, None, :], bp / s]
        else:
            cur[fp] = [wp / s.reshape(-1, *[1] * (wp.ndim - 1)), bp / s]
        if c_type == "FULLY_CONNECTED":
            cur[fc][0] = wc * s[None, :]
        elif c_type == "CONV_2D":
            cur[fc][0] = wc * s
        else:
            cur[fc][0] = wc * np.repeat(s, wc.shape[3] // len(s))
        scales[p] = s
    return cur, scales


def _rewrite_float(fpath: Path, floats: dict[int, list[np.ndarray]]) -> bytes:
    """Model A with the given float weights and biases (flatbuffer object API, buffers in place)."""
    from ai_edge_litert.tools import flatbuffer_utils as fu

    m = fu.convert_bytearray_to_object(bytearray(fpath.read_bytes()))
    sg = m.subgraphs[0]
    for op, values in floats.items():
        for pos, v in zip((1, 2), values, strict=True):
            t = sg.tensors[sg.operators[op].inputs[pos]]
            raw = np.ascontiguousarray(v.astype(np.float32)).tobytes()
            assert len(raw) == len(m.buffers[t.buffer].data)
            m.buffers[t.buffer].data = np.frombuffer(raw, np.uint8).copy()
    return bytes(fu.convert_object_to_bytearray(m))


def _check_pair_values(fm, qm, em, floats, p: int, c: int, s: np.ndarray, calib: np.ndarray) -> None:
    """B's edited P and C against the equalized float weights (within half a step, symmetric
    per-channel, [-127, 127]), both biases at S_in·S_w, and P's output scale from A's values ÷ s."""
    pairing = pair_models(fm, qm)
    for op in (p, c):
        w_float, b_float = floats[pairing.float_op_for(op)]
        wq, wt = _const(em, op, 1)
        dim = 3 if em.main.ops[op].type == "DEPTHWISE_CONV_2D" else 0
        sw = np.asarray(wt.quantization.scales)
        amax = np.abs(np.moveaxis(w_float, dim, 0).reshape(w_float.shape[dim], -1)).max(axis=1)
        np.testing.assert_allclose(sw, amax / 127, rtol=1e-5)
        assert wt.quantization.quantized_dimension == dim and set(wt.quantization.zero_points) == {0}
        assert wq.min() >= -127 and wq.max() <= 127
        shape = [1] * wq.ndim
        shape[dim] = len(sw)
        assert np.abs(wq * sw.reshape(shape) - w_float).max() <= 0.5001 * sw.max()
        s_in = em.main.tensors[em.main.ops[op].inputs[0]].quantization.scales[0]
        bq, _ = _const(em, op, 2)
        assert np.abs(bq - b_float / (s_in * sw)).max() <= 0.5001
    # P's output (C's input): min/max of A's tensor on the calibration samples, ÷ s per channel
    it = preserving_interpreter(fm.path)
    a_out = fm.main.ops[pairing.float_op_for(p)].outputs[0]
    lo, hi = np.full(len(s), np.inf), np.full(len(s), -np.inf)
    for x in calib:
        it.set_tensor(it.get_input_details()[0]["index"], x[None])
        it.invoke()
        v = it.get_tensor(a_out).reshape(-1, len(s)).astype(np.float64)
        lo, hi = np.minimum(lo, v.min(axis=0)), np.maximum(hi, v.max(axis=0))
    lo_t, hi_t = min(0.0, (lo / s).min()), max(0.0, (hi / s).max())
    q = em.main.tensors[em.main.ops[p].outputs[0]].quantization
    assert q.scales[0] == pytest.approx((hi_t - lo_t) / 255, rel=1e-5)
    assert em.main.tensors[em.main.ops[c].inputs[0]].quantization.scales[0] == q.scales[0]


def _function_preserved(fpath: Path, floats, x: np.ndarray) -> float:
    """Largest |A' - A| ÷ max|A| of the outputs, A' being A with the equalized float weights."""
    ref = output_rows(fpath.read_bytes(), x)
    new = output_rows(_rewrite_float(fpath, floats), x)
    return float(np.abs(new - ref).max() / np.abs(ref).max())


def _held_out_sqnr(fpath: Path, data: bytes, x: np.ndarray) -> tuple[float, float]:
    """Output SQNR on the held-out samples (16 of 48), reference kernels and XNNPACK (numpy)."""
    from ai_edge_litert.interpreter import OpResolverType

    ref = output_rows(fpath.read_bytes(), x[32:])
    return tuple(sqnr_db(ref, output_rows(data, x[32:], r)) for r in (None, OpResolverType.AUTO))  # type: ignore[return-value]


# ---- the planted outlier channel ---------------------------------------------------------------
@pytest.mark.parametrize("kind,producer,consumer", [("cnn", 2, 3), ("fc", 2, 3)])
def test_equalize_repairs_the_planted_outlier_channel(eqp, kind, producer, consumer):
    f, q, r = _run(eqp, kind, Edit("equalize", f"op:{producer}"))
    fm, qm = load_model(f), load_model(q)
    assert [e.ops for e in r.plan.edits] == [(producer, consumer)] and r.edited_ops == (producer, consumer)
    # held-out gain, as reported and as numpy measures it on both runtimes
    x = _data(kind)
    before, after = _held_out_sqnr(f, q.read_bytes(), x), _held_out_sqnr(f, r.model_bytes, x)
    assert r.gain.split.evaluation == "held-out" and r.gain.split.evaluation_count == 16
    assert r.gain.before_db == pytest.approx(before[1], abs=0.05) and r.gain.after_db == pytest.approx(after[1], abs=0.05)
    assert min(a - b for a, b in zip(after, before, strict=True)) >= 6.0, (before, after)
    # the scales s: numpy from A's weights; the planted channel gets the largest
    floats, scales = _equalized_floats(fm, qm, [(producer, consumer)])
    s = scales[producer]
    assert int(np.argmax(s)) == CHANNEL and s[CHANNEL] > K / 4
    pairing = pair_models(fm, qm)
    wp, _ = _const(fm, pairing.float_op_for(producer), 1)
    wc, _ = _const(fm, pairing.float_op_for(consumer), 1)
    core_s = eq.equalization_scales(eq.producer_ranges(wp, qm.main.ops[producer].type),
                                    eq.consumer_ranges(wc, qm.main.ops[consumer].type, len(s)))  # fmt: skip
    np.testing.assert_allclose(core_s, s, rtol=1e-12)
    # the float function is unchanged by the rescaling
    assert _function_preserved(f, floats, x[:8]) < 1e-4
    # the edited values, and nothing else changed
    em_path = Path(eqp[f"eq_{kind}_int8"]).parent / f"eq_{kind}_edited_test.tflite"
    em_path.write_bytes(r.model_bytes)
    _check_pair_values(fm, qm, load_model(em_path), floats, producer, consumer, s, x[:32])
    em_path.unlink()
    names = lambda i, pos: qm.main.tensors[qm.main.ops[i].inputs[pos]].name  # noqa: E731
    expected = {names(producer, 1), names(producer, 2), names(consumer, 1), names(consumer, 2), qm.main.tensors[qm.main.ops[producer].outputs[0]].name}
    changed, ops_equal = _changed(q.read_bytes(), r.model_bytes)
    assert changed == expected and ops_equal
    assert _record_pairs(r.model_bytes) == [(producer, consumer)]


def test_chained_pairs_with_depthwise_consumer_and_producer(eqp, tmp_path):
    """conv2 -> conv3 -> depthwise -> conv4: three pairs in order (an op is the consumer of one and
    the producer of the next); a depthwise consumer scales its channel, a depthwise producer too."""
    pairs = [(2, 3), (3, 4), (4, 5)]
    f, q, r = _run(eqp, "cnn", *(Edit("equalize", f"op:{p}") for p, _ in pairs))
    fm, qm = load_model(f), load_model(q)
    assert [e.ops for e in r.plan.edits] == pairs
    assert [qm.main.ops[i].type for i in (4,)] == ["DEPTHWISE_CONV_2D"]
    floats, scales = _equalized_floats(fm, qm, pairs)
    x = _data("cnn")
    assert _function_preserved(f, floats, x[:8]) < 1e-4
    em_path = tmp_path / "chain.tflite"
    em_path.write_bytes(r.model_bytes)
    em = load_model(em_path)
    for p, c in pairs:
        _check_pair_values(fm, qm, em, floats, p, c, scales[p], x[:32])
    changed, ops_equal = _changed(q.read_bytes(), r.model_bytes)
    touched = {qm.main.tensors[qm.main.ops[i].inputs[k]].name for i in range(2, 6) for k in (1, 2)}
    touched |= {qm.main.tensors[qm.main.ops[p].outputs[0]].name for p, _ in pairs}
    assert changed == touched and ops_equal
    assert _record_pairs(r.model_bytes) == pairs
    assert r.gain.gain_db >= 6.0


# ---- refusals, conflicts, the plan and the diagnosis' fix ---------------------------------------
@pytest.mark.parametrize("op,reason", [
    (1, "ends in RELU6, which is not positively homogeneous"),
    (2, "its output has 2 consumers; equalization needs exactly one"),
    (3, "its consumer op 5 (ADD"),
    (5, "is not a conv, depthwise conv or fully connected op"),
])  # fmt: skip
def test_refusals_name_the_reason(eqp, op, reason):
    f, q = eqp["eq_refuse_float"], eqp["eq_refuse_int8"]
    with pytest.raises(InputError, match=reason.replace("(", r"\(")) as e:
        apply_plan(str(f), str(q), SurgicalPlan((Edit("equalize", f"op:{op}"),), samples=SampleSettings(count=2)))
    assert "\n" not in str(e.value)


def test_a_non_weight_consumer_and_conflicts_are_refused(eqp):
    f, q = eqp["eq_cnn_float"], eqp["eq_cnn_int8"]
    bad = [
        ((Edit("equalize", "op:5"),), r"its consumer op 6 \(DEQUANTIZE"),
        ((Edit("equalize", "op:2"), Edit("per_channel", "op:3")), "op 3 is selected for equalize and per_channel"),
        ((Edit("equalize", "op:2"), Edit("keep_float", "op:2")), "op 2 is selected for equalize and keep_float"),
        ((Edit("equalize", "op:2"), Edit("recalibrate", "op:2")), "op 2 is selected for equalize and recalibrate"),
        ((Edit("equalize", "op:2", None, (2, 4)),), "op 4 is not the consumer of op 2 \\(op 3 is\\)"),
    ]
    for edits, message in bad:
        with pytest.raises(InputError, match=message):
            apply_plan(str(f), str(q), SurgicalPlan(edits, samples=SampleSettings(count=2)))


def test_plan_json_and_the_diagnosis_fix_make_the_same_bytes(eqp):
    f, q = eqp["eq_cnn_float"], eqp["eq_cnn_int8"]
    samples = SampleSettings(count=N, source=str(eqp["cnn_npz"]))
    by_flag = apply_plan(str(f), str(q), SurgicalPlan((Edit("equalize", "conv2_1/Relu"),), samples=samples))
    d = by_flag.plan.to_json()
    assert d["edits"] == [{"kind": "equalize", "edit": "equalize", "pattern": "conv2_1/Relu", "ops": [2, 3]}]
    assert SurgicalPlan.from_json(d).edits == by_flag.plan.edits  # as sessions and --save-plan keep it
    with pytest.raises(InputError, match="not a valid surgical plan"):
        SurgicalPlan.from_json({"edits": [{"edit": "equalize"}]})  # neither pattern nor ops
    bare = {"route": "surgical", "edits": [{"edit": "equalize", "ops": [2, 3]}], "samples": samples.to_json()}
    from_file = apply_plan(str(f), str(q), SurgicalPlan.from_json(bare))
    plan = fix_plan(Fix("equalize", (2, 3)), samples)
    assert [(e.kind, e.ops) for e in plan.edits] == [("equalize", (2, 3))]
    from_fix = apply_plan(str(f), str(q), plan)
    assert by_flag.model_bytes == from_file.model_bytes == from_fix.model_bytes
    assert plan.needs_samples()
