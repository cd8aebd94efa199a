"""Surgical suggest: finds the damaged layer of the trained classifier, repairs it at no size cost,
and the result is verified independently (numpy on interpreter outputs)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from inspector.cli import main
from inspector.core.requantize.suggest_surgical import SurgicalSuggestOptions, suggest_surgical
from inspector.core.requantize.surgical import apply_plan
from inspector.core.samples.settings import SampleSettings
from tests.helpers.paths import REPO
from tests.helpers.surgical_helpers import run_both, sqnr
from tests.helpers.task_fixtures import TaskFixtures


@pytest.fixture(scope="module")
def broken():
    t = TaskFixtures(REPO / ".fixture-cache")
    m = t.models()
    return m["cls_float"], m["cls_int8_broken"], t.npz(40)


def test_suggest_repairs_the_damaged_layer(broken):
    f, q, npz = broken
    opts = SurgicalSuggestOptions(samples=SampleSettings(count=None, source=str(npz)), objective="op:5")
    r = suggest_surgical(str(f), str(q), 30.0, opts)
    assert r.met and r.baseline_sqnr_db < 10 and r.best_sqnr_db >= 30
    # the layer whose weight scale was broken, by the diagnosis' edit (MSE-fitted scales from A's
    # weights: 44.8 dB, above keep float's 44.5 dB, at no size cost); before, per-channel
    assert r.candidates[0]["cause"] == "weight_rounding"
    assert [(s.ops, s.edit) for s in r.steps] == [((2,), "weight_mse")]
    assert r.steps[0].size_bytes == q.stat().st_size  # a repair that costs no size
    # Independent: the model output (softmax) against the float model, numpy over the samples.
    data = np.load(npz)
    xs = data[next(k for k in data.files if k != "labels")][:16].astype(np.float32)
    ref = run_both(f.read_bytes(), xs)["reference"]
    before, after = run_both(q.read_bytes(), xs), run_both(r.best.model_bytes, xs)
    for rt in ("reference", "xnnpack"):
        assert sqnr(ref, after[rt]) > sqnr(ref, before[rt]) + 10
    # The reported plan reproduces the same bytes.
    assert apply_plan(str(f), str(q), r.plan).model_bytes == r.best.model_bytes


def test_cli_surgical_suggest(broken, tmp_path, capsys):
    f, q, npz = broken
    out, plan, js = tmp_path / "s.tflite", tmp_path / "p.json", tmp_path / "s.json"
    common = ["suggest", str(f), str(q), "--inputs", str(npz), "--objective", "op:5"]
    assert main([*common, "--target-sqnr", "30", "--out", str(out), "--save-plan", str(plan), "--json", str(js)]) == 0
    text = capsys.readouterr().out
    assert "MSE weights on op 2 " in text and "reproduce: tflite-inspector requantize" in text and "--weight-rounding mse op:2" in text
    d = json.loads(js.read_text())
    assert d["route"] == "surgical" and d["met"] and d["steps"][0]["ops"] == [2]
    assert main(["requantize", str(f), str(q), "--out", str(tmp_path / "again.tflite"), "--plan", str(plan)]) == 0
    assert (tmp_path / "again.tflite").read_bytes() == out.read_bytes()
    printed = tmp_path / "printed.tflite"  # the printed reproduce line makes the same model
    assert main(["requantize", str(f), str(q), "--out", str(printed), "--weight-rounding", "mse", "op:2"]) == 0
    assert printed.read_bytes() == out.read_bytes()
    assert main([*common, "--target-sqnr", "500", "--max-float-layers", "1", "--max-evaluations", "4"]) == 1
    assert "not reached" in capsys.readouterr().out
    assert main([*common, "--target-sqnr", "30", "--treatment", "a16w8"]) == 2
    assert "quantizer route" in capsys.readouterr().err


def test_cli_surgical_suggest_on_a_signature(tmp_path, capsys):
    """`suggest --signature prefill` ranks and edits prefill's subgraph (subgraph 1): the plan
    names the signature and reproduces the model; decode's subgraph is unchanged; prefill's
    output SQNR is the one reported and it did not fall."""
    from inspector.core.compare.comparison import CompareOptions, compare_models
    from inspector.core.samples.settings import SampleSettings
    from inspector.core.tflite.model import Model
    from tests.helpers.paths import REPO
    from tests.helpers.shape_fixtures import cache_path

    f, q = cache_path(REPO / ".fixture-cache", "sig_float"), cache_path(REPO / ".fixture-cache", "sig_int8")
    out, plan, js = tmp_path / "s.tflite", tmp_path / "p.json", tmp_path / "s.json"
    args = ["suggest", str(f), str(q), "--signature", "prefill", "--samples", "4", "--max-float-layers", "1",
            "--max-evaluations", "6", "--out", str(out), "--save-plan", str(plan), "--json", str(js)]  # fmt: skip
    assert main(args) in (0, 1)
    text = capsys.readouterr().out
    d = json.loads(js.read_text())
    assert json.loads(plan.read_text())["signature"] == "prefill" and "--signature prefill" in text
    prefill = Model(q).for_signature("prefill").main
    assert d["steps"] and all(0 <= i < len(prefill.ops) for s in d["steps"] for i in s["ops"])
    opts = CompareOptions(samples=SampleSettings(count=4), signature="prefill")
    before = compare_models(str(f), str(q), opts).outputs[0].metrics.sqnr_db
    after = compare_models(str(f), str(out), opts).outputs[0].metrics.sqnr_db
    assert d["baseline_sqnr_db"] == pytest.approx(before, abs=1e-6) and after >= before - 0.05
    dq, dout = Model(q).for_signature("decode").main, Model(out).for_signature("decode").main
    assert dq.index == dout.index == 0 and [t.name for t in dq.tensors] == [t.name for t in dout.tensors]
    assert all(
        bytes(memoryview(Model(q).tensor_data(a))) == bytes(memoryview(Model(out).tensor_data(b)))
        for a, b in zip(dq.tensors, dout.tensors, strict=True) if a.is_constant
    )
    again = tmp_path / "again.tflite"
    assert main(["requantize", str(f), str(q), "--out", str(again), "--plan", str(plan)]) == 0
    assert again.read_bytes() == out.read_bytes()
    assert main([*args[:5], "--route", "quantizer", "--target-sqnr", "30"]) == 2
    assert "belong to the surgical route" in capsys.readouterr().err
