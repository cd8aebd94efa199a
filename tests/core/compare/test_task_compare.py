"""From layer error to accuracy drop: compare's task metrics on a trained classifier.

The classifier (tests/task_fixtures.py) is trained on a learnable synthetic data set, so its
accuracy means something; its broken int8 twin has conv2's weight scales multiplied by 8.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter
from PIL import Image

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.result import ComparisonResult
from inspector.core.samples.settings import SampleSettings
from tests.helpers.paths import REPO
from tests.helpers.task_fixtures import CLASSES, TaskFixtures


@pytest.fixture(scope="module")
def task_data():
    tf = TaskFixtures(REPO / ".fixture-cache")
    return tf.models(), tf.image_folder(), tf.npz()


def _independent_predictions(model_path, folder):
    """Load every PNG, normalize (v - 127.5) / 127.5 as documented, run the interpreter, argmax; labels from sorted folders."""
    it = Interpreter(model_path=str(model_path))
    it.allocate_tensors()
    i, o = it.get_input_details()[0], it.get_output_details()[0]
    preds, labels, tied = [], [], []
    for label, d in enumerate(sorted(p for p in folder.iterdir() if p.is_dir())):
        for f in sorted(d.glob("*.png")):
            x = (np.asarray(Image.open(f).convert("RGB"), np.float32)[None] - 127.5) / 127.5  # mean/std form
            it.set_tensor(i["index"], x)
            it.invoke()
            y = it.get_tensor(o["index"])
            preds.append(int(np.argmax(y)))
            tied.append(int(np.sum(y == y.max())) > 1)
            labels.append(label)
    _independent_predictions.tied = np.array(tied)
    return np.array(preds), np.array(labels)


@pytest.mark.parametrize("quant", ["cls_int8", "cls_int8_broken"])
def test_accuracy_and_agreement_equal_independent(task_data, quant):
    models, folder, _ = task_data
    res = compare_models(str(models["cls_float"]), str(models[quant]), CompareOptions(samples=SampleSettings(source=str(folder), count=None)))
    task = res.to_json()["task"]
    fp, labels = _independent_predictions(models["cls_float"], folder)
    ftied = _independent_predictions.tied
    qp, _ = _independent_predictions(models[quant], folder)
    qtied = _independent_predictions.tied
    # a tied argmax decides nothing: wrong for accuracy; tied in A: left out; tied in B only: a disagreement
    assert task["kind"] == "classification" and task["num_samples"] == len(labels) == 60
    assert task["float_accuracy"] == pytest.approx(np.mean((fp == labels) & ~ftied))
    assert task["quant_accuracy"] == pytest.approx(np.mean((qp == labels) & ~qtied))
    assert task["tied_samples"] == int(ftied.sum()) and task["agreement_samples"] == int((~ftied).sum())
    assert task["top1_agreement"] == pytest.approx(np.mean(((fp == qp) & ~qtied)[~ftied]))
    assert task["float_accuracy"] > 0.6, "the fixture classifier must have learned the task"
    for c in task["per_class"]:
        m = labels == c["label"]
        fc, qc = np.mean(((fp == c["label"]) & ~ftied)[m]), np.mean(((qp == c["label"]) & ~qtied)[m])
        assert c["drop_pct"] == pytest.approx(100 * (fc - qc))
    names = [c["name"] for c in task["per_class"]]
    assert names == [f"{k}_{n}" for k, n in enumerate(CLASSES)]


def test_broken_model_shows_drop_flips_first_and_the_broken_layer(task_data):
    models, folder, _ = task_data
    good = compare_models(str(models["cls_float"]), str(models["cls_int8"]), CompareOptions(samples=SampleSettings(source=str(folder), count=None)))
    bad = compare_models(
        str(models["cls_float"]), str(models["cls_int8_broken"]), CompareOptions(samples=SampleSettings(source=str(folder), count=None), isolated=True)
    )
    tg, tb = good.task(), bad.task()
    assert tb.accuracy_drop_pct > 10 > abs(tg.accuracy_drop_pct)
    worst = tb.to_json(worst=10)["worst_samples"]
    nflip = sum(o.flipped for o in tb.outcomes)
    assert nflip > 0 and all(w["flipped"] for w in worst[: min(nflip, 10)])
    # The broken layer stands out in the layerwise error of the worst sample alone.
    k = worst[0]["index"]
    src = folder / worst[0]["source"]
    one = folder.parent / "one_sample.npz"
    x = np.asarray(Image.open(src).convert("RGB"), np.float32)[None] / 127.5 - 1.0
    np.savez(one, image=x)
    single = compare_models(str(models["cls_float"]), str(models["cls_int8_broken"]), CompareOptions(samples=SampleSettings(source=str(one)), isolated=True))
    iso = {layer.tensor_name: layer.isolated.sqnr_db for layer in single.layers if layer.isolated is not None}
    worst_layer = min(iso, key=iso.get)
    assert "conv2" in worst_layer, (k, iso)
    others = [v for n, v in iso.items() if "conv2" not in n]
    assert iso[worst_layer] < min(others) - 15


def test_json_round_trip_keeps_task(task_data):
    models, folder, _ = task_data
    res = compare_models(str(models["cls_float"]), str(models["cls_int8_broken"]), CompareOptions(samples=SampleSettings(source=str(folder), count=12)))
    d = res.to_json()
    back = ComparisonResult.from_json(json.loads(json.dumps(d)))
    assert back.to_json()["task"] == d["task"]


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "inspector", "compare", *map(str, args)], capture_output=True, text=True)


def test_cli_task_json_and_accuracy_gate(task_data, tmp_path):
    models, folder, npz = task_data
    out = tmp_path / "c.json"
    r = _cli(models["cls_float"], models["cls_int8_broken"], "--inputs", npz, "--json", out, "--fail-on-accuracy-drop", "5")
    assert r.returncode == 1 and "accuracy dropped" in r.stderr
    task = json.loads(out.read_text())["task"]
    assert set(task) >= {"kind", "float_accuracy", "quant_accuracy", "top1_agreement", "top5_agreement", "worst_samples"}
    assert set(task["worst_samples"][0]) >= {"index", "source", "label", "float_pred", "quant_pred", "output_sqnr_db"}
    assert task["float_accuracy"] - task["quant_accuracy"] > 0.05
    r = _cli(models["cls_float"], models["cls_int8"], "--inputs", npz, "--fail-on-accuracy-drop", "5")
    assert r.returncode == 0, r.stderr
    # Without labels the gate cannot be evaluated: bad input, exit 2, one clear line.
    r = _cli(models["cls_float"], models["cls_int8"], "--samples", "3", "--fail-on-accuracy-drop", "5")
    assert r.returncode == 2 and "labelled" in r.stderr and "Traceback" not in r.stderr
    r = _cli(models["cls_float"], models["cls_int8"], "--samples", "3", "--json", "-")
    task = json.loads(r.stdout)["task"]
    assert task["float_accuracy"] is None and task["quant_accuracy"] is None and task["top1_agreement"] is not None


def test_report_shows_task_and_gates_accuracy(task_data, tmp_path):
    models, _, npz = task_data
    html = tmp_path / "r.html"
    r = subprocess.run(
        [sys.executable, "-m", "inspector", "report", str(models["cls_float"]), str(models["cls_int8_broken"]),
         "--inputs", str(npz), "--html", str(html), "--json", str(tmp_path / "r.json"), "--fail-on-accuracy-drop", "5"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode == 1 and "accuracy dropped" in r.stderr, r.stderr
    task = json.loads((tmp_path / "r.json").read_text())["comparison"]["task"]
    text = html.read_text()

    cards = dict(re.findall(r'data-key="task\.([^"]+)"><span class="muted">[^<]*</span><br><b>([^<]*)</b>', text))
    assert '<section id="task">' in text
    assert cards["float accuracy"] == f"{100 * task['float_accuracy']:.2f}%"
    assert cards["quantized accuracy"] == f"{100 * task['quant_accuracy']:.2f}%"
    assert cards["top-1 agreement"] == f"{100 * task['top1_agreement']:.2f}%"
    assert "Worst samples" in text and task["worst_samples"][0]["source"] in text
