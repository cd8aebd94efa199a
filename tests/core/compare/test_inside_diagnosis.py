"""Inside the tensor (issue 25): a detector head whose scores vanish behind pixel boxes in one
concatenation, and a function-preserving outlier channel (one conv output channel x60, the
consumer's matching weights /60), both built with the TF converter at test time.

Independent references: per-channel and per-slice SQNR from numpy on LiteRT's own tensors
(`experimental_preserve_all_tensors`, reference kernels, the same samples), to 0.01 dB; the
diagnosis and the audit are checked against the planted cause; healthy converter-built twins (a
trained CNN, a MobileNetV2-like net, a transformer) raise neither cause, and the thresholds sit
between the figures they show and the plants'.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.diagnosis import CAUSES, EDITS, THRESHOLDS
from inspector.core.compare.result import ComparisonResult
from inspector.core.requantize.surgical import apply_plan
from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan
from inspector.core.review.audit import audit_model
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model
from inspector.core.writing import to_json_text
from tests.helpers import inside_fixtures as ix
from tests.helpers.paths import REPO
from tests.helpers.reference import preserving_interpreter
from tests.helpers.task_fixtures import TaskFixtures, make_dataset

CACHE = REPO / ".fixture-cache"
INSIDE = ("mixed_ranges", "channel_imbalance")


@pytest.fixture(scope="module")
def det(tmp_path_factory):
    paths = ix.detector_models(CACHE)
    folder = tmp_path_factory.mktemp("det")
    images = ix.detector_images(16, seed=3)
    np.savez(folder / "images.npz", image=images)
    return {**paths, "images": images, "npz": folder / "images.npz", "dir": folder}


@pytest.fixture(scope="module")
def outl(tmp_path_factory):
    paths = ix.outlier_models(CACHE)
    folder = tmp_path_factory.mktemp("outlier")
    images = make_dataset(24, seed=5)[0]
    np.savez(folder / "images.npz", image=images)
    return {**paths, "images": images, "npz": folder / "images.npz", "dir": folder}


def _compare(f, q, npz, isolated=False, runtime="reference"):
    opts = CompareOptions(samples=SampleSettings(count=None, source=str(npz)), isolated=isolated, runtime=runtime)
    return compare_models(str(f), str(q), opts)


def _layer(res, op_type=None, op=None):
    return next(lay for lay in res.layers if (op is None or lay.op_index == op) and (op_type is None or lay.op_type == op_type))


def _preserved(path, images, tensors):
    """{tensor: [value per sample]} from LiteRT's reference kernels, every tensor preserved."""
    it = preserving_interpreter(path)
    inp = it.get_input_details()[0]
    out = {t: [] for t in tensors}
    for i in range(len(images)):
        x = images[i : i + 1]
        if inp["dtype"] == np.int8:
            s, z = inp["quantization"]
            x = np.clip(np.round(x / s) + z, -128, 127).astype(np.int8)
        it.set_tensor(inp["index"], x)
        it.invoke()
        for t in tensors:
            out[t].append(it.get_tensor(t).copy())
    return out


def _dequantized(qm, t, values):
    q = qm.main.tensors[t].quantization
    if q is None or values[0].dtype == np.float32:
        return [v.astype(np.float64) for v in values]
    return [(v.astype(np.float64) - q.zero_points[0]) * q.scales[0] for v in values]


def _sqnr(x, y):
    e = float(np.sum((x - y) ** 2))
    return math.inf if e == 0 else 10 * math.log10(float(np.sum(x * x)) / e)


def _numpy_parts(fpath, qpath, images, lay, axis, bounds):
    """Per [start, stop) along `axis` of the layer's tensor: SQNR and float range, from numpy."""
    qm = load_model(qpath)
    xs = _preserved(fpath, images, [lay.float_tensor])[lay.float_tensor]
    ys = _dequantized(qm, lay.quant_tensor, _preserved(qpath, images, [lay.quant_tensor])[lay.quant_tensor])
    x = np.concatenate([np.moveaxis(v.astype(np.float64), axis, 0).reshape(v.shape[axis], -1) for v in xs], 1)
    y = np.concatenate([np.moveaxis(v, axis, 0).reshape(v.shape[axis], -1) for v in ys], 1)
    return [(_sqnr(x[a:b], y[a:b]), float(x[a:b].max() - x[a:b].min())) for a, b in bounds]


def test_the_detector_head_score_slice_is_seen_and_equals_numpy(det):
    res = _compare(det["det_float"], det["det_int8"], det["npz"])
    cat = _layer(res, "CONCATENATION")
    qm = load_model(det["det_int8"])
    assert cat.metrics.sqnr_db > 40  # the whole tensor reads healthy: the failure the issue reports
    assert [(s.input, s.start, s.stop) for s in cat.slices] == [(0, 0, 4), (1, 4, 7)]
    score = cat.slices[1]
    assert score.producer_type == "LOGISTIC" and qm.main.ops[score.producer_op].type == "LOGISTIC"
    ref = _numpy_parts(det["det_float"], det["det_int8"], det["images"], cat, 2, [(0, 4), (4, 7)])
    for s, (sq, rng) in zip(cat.slices, ref, strict=True):
        assert s.sqnr_db == pytest.approx(sq, abs=0.01)
        assert s.steps_used == pytest.approx(rng / cat.scale[0], rel=1e-6)
    assert cat.metrics.sqnr_db - score.sqnr_db >= 20 and score.steps_used < 1
    # per channel too: the same figures on each of the 7 channels
    ref_ch = _numpy_parts(det["det_float"], det["det_int8"], det["images"], cat, 2, [(c, c + 1) for c in range(7)])
    assert cat.channels.axis == 2 and cat.channels.count == 7
    np.testing.assert_allclose(cat.channels.sqnr_db, [v for v, _ in ref_ch], atol=0.01)
    assert cat.channels.worst in (4, 5, 6)
    # the model output (through DEQUANTIZE) carries the same slices
    out = res.outputs[0]
    assert [(s.start, s.stop) for s in out.slices] == [(0, 4), (4, 7)]
    assert out.slices[1].sqnr_db == pytest.approx(score.sqnr_db, abs=0.01)


@pytest.mark.parametrize("model, edit", [("det_int8", "keep_float"), ("det_int8_io", None)])
def test_the_detector_head_is_diagnosed_mixed_ranges(det, model, edit):
    res = _compare(det["det_float"], det[model], det["npz"], runtime="optimized")
    cat = _layer(res, "CONCATENATION")
    d = cat.diagnosis
    assert d.cause == "mixed_ranges", d
    assert "slice 4:7" in d.evidence and "LOGISTIC" in d.evidence
    if edit is None:  # int8 output: not B's final float output, and no 16x8 CONCATENATION edit
        assert d.fix is None and "16x8" in d.evidence
        return
    assert d.fix.edit == "keep_float" and cat.op_index in d.fix.ops
    # the reshape carrying the scores into the concatenation points at it, not at its own range
    path = [lay for lay in res.layers if lay.op_index in d.fix.ops and lay.op_index != cat.op_index]
    assert path and all(lay.diagnosis.cause == "mixed_ranges" and lay.diagnosis.source_op == cat.op_index for lay in path)
    # the proposed fix raises the damaged slice by >= 20 dB on held-out samples
    new = det["dir"] / "fixed.tflite"
    plan = SurgicalPlan(tuple(Edit("keep_float", f"op:{op}") for op in d.fix.ops))
    new.write_bytes(apply_plan(str(det["det_float"]), str(det[model]), plan).model_bytes)
    held = det["dir"] / "held.npz"
    np.savez(held, image=ix.detector_images(16, seed=11))
    before = _compare(det["det_float"], det[model], held).outputs[0].slices[1].sqnr_db
    after = _compare(det["det_float"], new, held).outputs[0].slices[1].sqnr_db
    print(f"detector score slice: {before:.1f} dB -> {after:.1f} dB")
    assert after - before >= 20


def test_the_outlier_channel_is_diagnosed_at_the_producer_and_the_consumer_points_at_it(outl):
    res = _compare(outl["out_float"], outl["out_int8"], outl["npz"], isolated=True)
    qm = load_model(outl["out_int8"])
    convs = [lay for lay in res.layers if lay.op_type == "CONV_2D"]
    producer, consumer = convs[1], convs[2]
    d = producer.diagnosis
    assert d.cause == "channel_imbalance", d
    assert d.fix is not None and d.fix.edit == "equalize" and d.fix.ops == (producer.op_index, consumer.op_index)
    assert qm.main.ops[consumer.op_index].inputs[0] == qm.main.ops[producer.op_index].outputs[0]
    c = consumer.diagnosis
    assert c.cause == "channel_imbalance" and c.source_op == producer.op_index and c.fix == d.fix, c
    assert f"op {producer.op_index}" in c.evidence
    # downstream layers inheriting the error point at the same fix
    for lay in res.layers:
        if lay.diagnosis.cause == "inherited":
            assert lay.diagnosis.fix == d.fix
    # the figures: the outlier channel sets the scale; per-channel SQNR and steps equal numpy
    ch = producer.channels
    assert ch.range_ratio > THRESHOLDS.imbalance_ratio
    assert int(np.argmax(ch.ranges())) == 0
    ref = _numpy_parts(outl["out_float"], outl["out_int8"], outl["images"], producer, 3, [(k, k + 1) for k in range(16)])
    np.testing.assert_allclose(ch.sqnr_db, [v for v, _ in ref], atol=0.01)
    np.testing.assert_allclose(ch.steps_used(), [r / producer.scale[0] for _, r in ref], rtol=1e-6)
    # without the isolated error (the accumulated one only) the same causes
    acc = _compare(outl["out_float"], outl["out_int8"], outl["npz"])
    assert _layer(acc, op=producer.op_index).diagnosis.cause == "channel_imbalance"
    assert _layer(acc, op=consumer.op_index).diagnosis.source_op == producer.op_index


def _healthy_results():
    from tests.helpers import diagnosis_fixtures as dx
    from tests.helpers.surgical_fixtures import cache_paths, npz
    from tests.helpers.transformer_fixtures import transformer_path

    tf = TaskFixtures(CACHE)
    cls = tf.models()
    diag = dx.models(CACHE)
    mnv2 = cache_paths(CACHE)
    tf_f, tf_q = transformer_path(CACHE, "float"), transformer_path(CACHE, "int8")
    opts = CompareOptions(samples=SampleSettings(count=8, seed=0))
    return {
        "trained cnn": _compare(cls["cls_float"], cls["cls_int8"], tf.npz(40), runtime="optimized"),
        "trained diag cnn": _compare(diag["diag_float"], diag["diag_int8"], tf.npz(40), runtime="optimized"),
        "mobilenetv2-like": _compare(mnv2["mnv2_float"], mnv2["mnv2_int8"], npz(CACHE, "eval", 8, 2), runtime="optimized"),
        "transformer": compare_models(str(tf_f), str(tf_q), opts),
    }


def test_healthy_twins_raise_neither_cause_and_the_thresholds_are_measured(det, outl):
    healthy = _healthy_results()
    worst_ratio, worst_share = 0.0, 0.0
    for name, res in healthy.items():
        for lay in res.layers:
            assert lay.diagnosis.cause not in INSIDE, (name, lay.op_index, lay.op_type, lay.diagnosis)
            c = lay.channels
            if c is None or c.scales is None or lay.scale is None or len(lay.scale) != 1:
                continue
            share = float((c.steps_used() < THRESHOLDS.imbalance_steps).mean())
            if math.isfinite(c.range_ratio):
                worst_ratio = max(worst_ratio, c.range_ratio if share > THRESHOLDS.imbalance_share else 0.0)
            worst_share = max(worst_share, share if c.range_ratio > THRESHOLDS.imbalance_ratio else 0.0)
        assert not [f for f in audit_model(load_model(res.quant_path), res) if f.rule == "mixed-ranges"], name
    planted = _layer(_compare(outl["out_float"], outl["out_int8"], outl["npz"]), op=2).channels
    print(f"healthy: largest range ratio among starved tensors {worst_ratio:.1f}, largest starved share among "
          f"imbalanced tensors {worst_share:.2f}; planted: ratio {planted.range_ratio:.1f}")
    assert worst_ratio <= THRESHOLDS.imbalance_ratio < planted.range_ratio
    cat = _layer(_compare(det["det_float"], det["det_int8"], det["npz"]), "CONCATENATION")
    spans = [s.float_max - s.float_min for s in cat.slices]
    assert max(spans) / min(spans) > THRESHOLDS.mixed_ratio


def test_audit_names_the_mixed_inputs(det):
    qm = load_model(det["det_int8"])
    static = [f for f in audit_model(qm) if f.rule == "mixed-ranges"]
    assert len(static) == 1 and static[0].op_type == "CONCATENATION" and static[0].severity == "warning"
    assert "LOGISTIC" in static[0].message and "MUL" in static[0].message and "0.5 steps" in static[0].message
    res = _compare(det["det_float"], det["det_int8"], det["npz"])
    observed = [f for f in audit_model(qm, res) if f.rule == "mixed-ranges"]
    assert len(observed) == 1 and "input 1 (op" in observed[0].message and " spans " in observed[0].message


def test_json_contract_and_round_trip(det, tmp_path):
    res = _compare(det["det_float"], det["det_int8"], det["npz"])
    d = json.loads(to_json_text(res.to_json(include_per_sample=True)))  # strict JSON, as sessions write it
    cat = next(x for x in d["layers"] if x["op_type"] == "CONCATENATION")
    assert {"axis", "count", "worst", "range_ratio"} <= set(cat["channels"])
    assert set(cat["channels"]["worst"]) == {"index", "sqnr_db", "range_use"}
    assert isinstance(cat["channels"]["axis"], int) and cat["channels"]["count"] == 7
    for s in cat["slices"]:
        assert {"input", "start", "stop", "sqnr_db", "range_use", "steps_used"} <= set(s)
    assert "slices" in d["outputs"][0] and d["outputs"][0]["channels"]["count"] == 7
    assert all("slices" not in x for x in d["layers"] if x["op_type"] not in ("CONCATENATION", "PACK"))
    back = ComparisonResult.from_json(d)  # sessions store this form
    for a, b in zip(back.layers, res.layers, strict=True):
        assert a.slices == b.slices
        if b.channels is not None:
            assert a.channels.worst == b.channels.worst and a.channels.range_ratio == pytest.approx(b.channels.range_ratio)
            np.testing.assert_allclose(a.channels.sqnr_db, b.channels.sqnr_db)
    assert back.outputs[0].slices == res.outputs[0].slices
    # the layers pointing at the concatenation keep their source op through the JSON
    assert [lay.diagnosis for lay in back.layers] == [lay.diagnosis for lay in res.layers]
    assert any(lay.diagnosis.cause == "mixed_ranges" and lay.diagnosis.source_op is not None for lay in back.layers)
    assert "mixed_ranges" in CAUSES and "channel_imbalance" in CAUSES and "equalize" in EDITS


def test_a_yolo_layout_head_and_a_pack_are_measured_along_their_axis(tmp_path):
    """YOLOv8's layout: the concatenation runs along axis 1 of (1, 7, 64), not the channel axis,
    and a PACK stacks a pixel map with a score map on a new axis 1: their slices come from the
    sums along that axis (native kernel), equal to numpy on LiteRT's tensors; both are diagnosed."""
    from tests.helpers.inside_head_fixtures import yolo_models

    paths = yolo_models(CACHE)
    images = ix.detector_images(12, seed=4)
    np.savez(tmp_path / "images.npz", image=images)
    res = _compare(paths["yolo_float"], paths["yolo_int8"], tmp_path / "images.npz")
    cat, pack = _layer(res, "CONCATENATION"), next(lay for lay in res.layers if lay.op_type == "PACK" and lay.slices
                                                      and lay.dtype == "int8")
    assert [(s.start, s.stop) for s in cat.slices] == [(0, 4), (4, 7)] and cat.slices[0].axis == 1
    assert [(s.start, s.stop) for s in pack.slices] == [(0, 1), (1, 2)] and pack.slices[0].axis == 1
    for lay, bounds in ((cat, [(0, 4), (4, 7)]), (pack, [(0, 1), (1, 2)])):
        ref = _numpy_parts(paths["yolo_float"], paths["yolo_int8"], images, lay, 1, bounds)
        for s, (sq, rng) in zip(lay.slices, ref, strict=True):
            assert s.sqnr_db == pytest.approx(sq, abs=0.01), (lay.op_type, s)
            assert s.steps_used == pytest.approx(rng / lay.scale[0], rel=1e-6)
        assert lay.diagnosis.cause == "mixed_ranges", lay.diagnosis
        assert lay.metrics.sqnr_db - min(s.sqnr_db for s in lay.slices) >= 20
    # both model outputs (read through DEQUANTIZE) carry the same slices
    assert len(res.outputs) == 2 and all(o.slices and o.slices[0].axis == 1 for o in res.outputs)
