"""Edits that calibrate do so on the first 2/3 of the samples; their gain is measured on the
held-out rest, or said to be in-sample when fewer than 8 would be held out (issue 18 §5).

References: the float model's tensors read with the LiteRT interpreter (preserve all tensors)
on the calibration samples only; the output SQNR of B and of the edited model computed with
numpy from interpreter runs on the held-out samples only.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter, OpResolverType

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.pairing import pair_models
from inspector.core.requantize.jobs import surgical_job
from inspector.core.requantize.recalibrate import int8_params
from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan
from inspector.core.samples.holdout import split_samples
from inspector.core.samples.settings import SampleSettings
from inspector.core.samples.sources import open_source
from inspector.core.tflite.model import load_model

N = 24  # 16 calibrate, 8 held out


def test_split_counts():
    assert (split_samples(24).calibration_count, split_samples(24).evaluation_start, split_samples(24).evaluation) == (16, 16, "held-out")
    s = split_samples(30)
    assert s.calibration(list(range(30))) == list(range(20)) and s.evaluation_of(list(range(30))) == list(range(20, 30))
    for n in (1, 8, 23):
        s = split_samples(n)
        assert s.evaluation == "in-sample" and s.calibration_count == s.evaluation_count == n and "in-sample" in s.note


def _samples(f, q, n=N):
    return list(open_source(load_model(f), load_model(q), SampleSettings(count=n)))


def _float_values(path, samples, tensor):
    it = Interpreter(model_path=str(path), experimental_preserve_all_tensors=True,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)  # fmt: skip
    it.allocate_tensors()
    out = []
    for s in samples:
        it.set_tensor(it.get_input_details()[0]["index"], s.inputs[0])
        it.invoke()
        out.append(it.get_tensor(tensor).reshape(-1).astype(np.float64))
    return np.concatenate(out)


def test_recalibration_uses_the_calibration_samples_only(fixture_path):
    f, q = fixture_path("float"), fixture_path("int8")
    plan = SurgicalPlan((Edit("recalibrate", "op:5", "percentile:99.9"),), samples=SampleSettings(count=N))
    r = surgical_job(str(f), str(q), plan, task=_task()).result
    assert r.split is not None and r.split.to_json()["evaluation"] == "held-out"
    assert r.to_json()["calibration"]["calibration_samples"] == 16 and r.to_json()["calibration"]["evaluation_samples"] == 8
    fm, qm = load_model(f), load_model(q)
    t5 = qm.main.ops[5].outputs[0]
    ft = pair_models(fm, qm).float_for_quant(t5)
    samples = _samples(f, q)
    cal = _float_values(f, samples[:16], ft)
    every = _float_values(f, samples, ft)
    from tests.helpers.surgical_helpers import describe

    after = describe(r.model_bytes)["tensors"][qm.main.tensors[t5].name]
    want, zp = int8_params(np.percentile(cal, 0.1), np.percentile(cal, 99.9))
    not_want, _ = int8_params(np.percentile(every, 0.1), np.percentile(every, 99.9))
    assert abs(want / not_want - 1) > 2e-5, "the held-out samples must change the range for the test to mean anything"
    scale = after[2][0][0]  # (type, shape, (scales, zero points, dim), ...): an independent flatbuffer read
    assert scale == pytest.approx(want, rel=1e-6) and scale != pytest.approx(not_want, rel=1e-5) and after[2][1][0] == zp


def _output_sqnr(path_or_bytes, f, samples):
    kw = {"model_content": path_or_bytes} if isinstance(path_or_bytes, bytes) else {"model_path": str(path_or_bytes)}
    ref, it = Interpreter(model_path=str(f)), Interpreter(**kw)
    for x in (ref, it):
        x.allocate_tensors()
    num = den = 0.0
    for s in samples:
        for x in (ref, it):
            x.set_tensor(x.get_input_details()[0]["index"], s.inputs[0])
            x.invoke()
        a = ref.get_tensor(ref.get_output_details()[0]["index"]).astype(np.float64)
        b = it.get_tensor(it.get_output_details()[0]["index"]).astype(np.float64)
        num += float(np.sum(a**2))
        den += float(np.sum((a - b) ** 2))
    return 10 * math.log10(num / den)


def test_gain_is_measured_on_the_held_out_samples(fixture_path):
    f, q = fixture_path("float"), fixture_path("int8_per_tensor")
    plan = SurgicalPlan((Edit("bias_correct", "all"),), samples=SampleSettings(count=N))
    r = surgical_job(str(f), str(q), plan, task=_task()).result
    g = r.gain
    assert g is not None and g.split.evaluation == "held-out" and g.split.evaluation_count == 8
    held = _samples(f, q)[16:]
    assert g.before_db == pytest.approx(_output_sqnr(q, f, held), abs=1e-3)
    assert g.after_db == pytest.approx(_output_sqnr(r.model_bytes, f, held), abs=1e-3)
    assert "8 held-out samples" in g.text() and r.to_json()["gain"]["evaluation"] == "held-out"
    # compare_models on the held-out part only gives the same 'before'.
    cmp = compare_models(str(f), str(q), CompareOptions(samples=SampleSettings(count=N), samples_from=16))
    assert cmp.samples == 8 and cmp.outputs[0].metrics.sqnr_db == pytest.approx(g.before_db, abs=1e-3)


def test_too_few_samples_say_in_sample(fixture_path, tmp_path):
    f, q = fixture_path("float"), fixture_path("int8_per_tensor")
    out = tmp_path / "e.tflite"
    js = tmp_path / "e.json"
    r = subprocess.run([sys.executable, "-m", "inspector", "requantize", str(f), str(q), "--out", str(out), "--bias-correct", "all",
                        "--samples", "8", "--json", str(js)], capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "gain: output SQNR" in r.stdout and "in-sample" in r.stdout
    d = json.loads(js.read_text())
    assert d["calibration"]["evaluation"] == "in-sample" and d["gain"]["evaluation"] == "in-sample"
    assert d["gain"]["calibration_samples"] == d["gain"]["evaluation_samples"] == 8


def _task():
    from inspector.core.progress import as_task

    return as_task(None)


def test_surgical_suggest_measures_its_gains_on_held_out_samples():
    """40 samples: edits calibrate on the first 27, every SQNR Suggest reports is over the last 13."""
    from inspector.core.requantize.suggest_surgical import SurgicalSuggestOptions, suggest_surgical
    from tests.helpers.paths import REPO
    from tests.helpers.surgical_helpers import run_both, sqnr
    from tests.helpers.task_fixtures import TaskFixtures

    t = TaskFixtures(REPO / ".fixture-cache")
    m, npz = t.models(), t.npz(40)
    f, q = m["cls_float"], m["cls_int8_broken"]
    opts = SurgicalSuggestOptions(samples=SampleSettings(count=None, source=str(npz)), max_steps=1, max_evaluations=8)
    r = suggest_surgical(str(f), str(q), 60.0, opts)
    d = r.to_json()
    assert d["evaluation"] == "held-out" and d["calibration"]["calibration_samples"] == 27 and d["calibration"]["evaluation_samples"] == 13
    assert any(n.startswith("gains: calibrated on samples 0-26") for n in r.notes)
    data = np.load(npz)
    xs = data["image"].astype(np.float32)
    ref = run_both(f.read_bytes(), xs[27:])["xnnpack"]
    before, after = run_both(q.read_bytes(), xs[27:])["xnnpack"], run_both(r.best.model_bytes, xs[27:])["xnnpack"]
    assert r.baseline_sqnr_db == pytest.approx(sqnr(ref, before), abs=1e-3)
    assert r.output_sqnr_db_before == pytest.approx(sqnr(ref, before), abs=1e-3)
    assert r.best_sqnr_db == pytest.approx(sqnr(ref, after), abs=1e-3)
    assert r.output_sqnr_db_after == pytest.approx(sqnr(ref, after), abs=1e-3)
    # Not the same as on every sample: the held-out figure is its own measurement.
    ref_all, before_all = run_both(f.read_bytes(), xs)["xnnpack"], run_both(q.read_bytes(), xs)["xnnpack"]
    assert r.baseline_sqnr_db != pytest.approx(sqnr(ref_all, before_all), abs=1e-3)


def test_quantizer_suggest_calibrates_on_the_first_part_and_compares_on_the_rest(tmp_path):
    from ai_edge_litert.interpreter import Interpreter

    from inspector.core.requantize.plan import Plan
    from inspector.core.requantize.quantizer_route import requantize, save_model
    from inspector.core.requantize.suggest import SuggestOptions, suggest
    from tests.helpers.paths import REPO
    from tests.helpers.requant_fixtures import cache_path

    fcn = cache_path(REPO / ".fixture-cache", "fcn")
    quant = tmp_path / "fcn_int8.tflite"
    save_model(requantize(fcn, Plan(), sample_settings=SampleSettings(4)), quant)
    settings = SampleSettings(count=N, seed=0)
    r = suggest(fcn, quant, 200.0, SuggestOptions(samples=settings, candidates=2, max_layers=1, max_evaluations=3))
    assert r.to_json()["evaluation"] == "held-out" and r.calibration["calibration_samples"] == 16
    samples = _samples(fcn, quant)
    # The candidates were calibrated on the first 16 samples: the plan re-made on them gives the same bytes, on all 24 not.
    again = requantize(fcn, r.plan, samples[:16])
    assert again.model_bytes == r.best.model_bytes
    assert requantize(fcn, r.plan, samples).model_bytes != r.best.model_bytes

    def held_out_sqnr(data: bytes) -> float:
        f_run = Interpreter(model_path=str(fcn)).get_signature_runner()
        q_run = Interpreter(model_content=data).get_signature_runner()
        ref = np.concatenate([f_run(image=s.inputs[0])["output_0"] for s in samples[16:]]).astype(np.float64)
        got = np.concatenate([q_run(image=s.inputs[0])["output_0"] for s in samples[16:]]).astype(np.float64)
        return float(10 * np.log10(np.sum(ref**2) / np.sum((ref - got) ** 2)))

    assert r.points[0].output_sqnr_db == pytest.approx(held_out_sqnr(quant.read_bytes()), abs=0.01)
    best = r.layers[-1]["output_sqnr_db"] if r.layers else r.points[1].output_sqnr_db
    assert best == pytest.approx(held_out_sqnr(r.best.model_bytes), abs=0.05)  # test_suggest's tolerance (keep-float kernels)


def test_gui_quantizer_route_calibrates_on_the_first_part_and_measures_the_rest(cnn_pair, tmp_path):
    """The GUI's quantizer route (`quantizer_versions_job`): both models calibrate on samples
    0-15 (seeded from B); the plan's gain is the output SQNR on samples 16-23 only."""
    from ai_edge_litert.interpreter import Interpreter

    from inspector.core.progress import as_task
    from inspector.core.requantize.jobs import quantizer_versions_job
    from inspector.core.requantize.plan import Override, Plan
    from inspector.core.requantize.quantizer_route import requantize

    fa, fb = (str(p) for p in cnn_pair)  # op 11: its logits
    plan = Plan(overrides=(Override("op:11", "keep_float"),))
    opts = CompareOptions(samples=SampleSettings(count=N, seed=0))
    runs = quantizer_versions_job(fa, fb, plan, opts, str(tmp_path / "v1.tflite"), str(tmp_path / "v2.tflite"), [fa, fb], as_task(None))
    g = runs.gain
    assert g.split.evaluation == "held-out" and g.split.evaluation_count == 8
    samples = _samples(fa, fb)
    again = requantize(fa, plan, samples[:16], calibrate_from=fb)
    assert again.model_bytes == (tmp_path / "v2.tflite").read_bytes()

    def held_out_sqnr(path) -> float:
        ref, it = Interpreter(model_path=fa), Interpreter(model_path=str(path))
        num = den = 0.0
        for x in (ref, it):
            x.allocate_tensors()
        for s in samples[16:]:
            ys = []
            for x in (ref, it):
                x.set_tensor(x.get_input_details()[0]["index"], s.inputs[0])
                x.invoke()
                ys.append(x.get_tensor(x.get_output_details()[0]["index"]).astype(np.float64))
            num += float(np.sum(ys[0] ** 2))
            den += float(np.sum((ys[0] - ys[1]) ** 2))
        return 10 * math.log10(num / den)

    assert g.before_db == pytest.approx(held_out_sqnr(tmp_path / "v1.tflite"), abs=0.01)
    assert g.after_db == pytest.approx(held_out_sqnr(tmp_path / "v2.tflite"), abs=0.01)
