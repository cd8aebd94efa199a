"""Ties (issue 26 §7): a sample the float model decides and the quantized model ties is a lost
decision, a disagreement and a wrong answer; only samples tied in the float model are left out of
the agreement. A broken twin tied in most samples read "top-1 agreement 100.00 % (over N untied
samples)" while its accuracy fell to a third.

Fixture: the confident classifier's int8 twin with its logits' output scale x80 (the logits
take a handful of integer levels, so the SOFTMAX often ties at the top). Labels are the float
model's own argmax, so accuracy and agreement must read the same figure. Independent reference:
argmax and ties from numpy on each interpreter's output.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.task import task_metrics
from inspector.core.samples.settings import SampleSettings
from tests.helpers import diagnosis_fixtures as dx
from tests.helpers import verdict_fixtures as vf
from tests.helpers.paths import REPO

N = 120


def _outputs(model: bytes, x: np.ndarray) -> np.ndarray:
    it = Interpreter(model_content=model)
    it.allocate_tensors()
    i, o = it.get_input_details()[0], it.get_output_details()[0]
    ys = []
    for s in x:
        it.set_tensor(i["index"], s[None])
        it.invoke()
        ys.append(it.get_tensor(o["index"]).reshape(-1).copy())
    return np.array(ys)


def _tied(y: np.ndarray) -> np.ndarray:
    return (y == y.max(axis=1, keepdims=True)).sum(axis=1) > 1


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    paths = vf.confident(REPO / ".fixture-cache")
    folder = tmp_path_factory.mktemp("ties")
    q = folder / "tied_twin.tflite"
    q.write_bytes(dx.scale_output(paths["conf_int8"].read_bytes(), dx.op_index(paths["conf_int8"], "logits"), 80.0))
    x = vf.inputs(N, 3)
    fy = _outputs(paths["conf_float"].read_bytes(), x)
    npz = folder / "eval.npz"
    np.savez(npz, features=x, labels=fy.argmax(axis=1))
    return paths["conf_float"], q, npz, fy, _outputs(q.read_bytes(), x)


def test_a_twin_tied_in_most_samples_does_not_read_full_agreement(broken, tmp_path):
    f, q, npz, fy, qy = broken
    ft, qt = _tied(fy), _tied(qy)
    assert not ft.any() and qt.mean() > 0.5  # what the fixture is: A decides everywhere, B ties in most samples
    decided_same = ~qt & (qy.argmax(axis=1) == fy.argmax(axis=1))
    res = compare_models(str(f), str(q), CompareOptions(samples=SampleSettings(source=str(npz), count=None)))
    t = res.task()
    assert t.top1_agreement == pytest.approx(decided_same.mean()) and t.top1_agreement < 0.5
    # labels are A's argmax: accuracy and agreement count the same samples the same way
    assert t.float_accuracy == 1.0 and t.quant_accuracy == pytest.approx(t.top1_agreement)
    assert t.tied_samples == 0 and t.lost_decisions == int(qt.sum()) and t.agreement_samples == N
    flipped = [o for o in t.outcomes if o.flipped]
    assert len(flipped) == int((~decided_same).sum()) and sum(o.quant_tied for o in flipped) == int(qt.sum())
    assert all(o.flipped for o in t.worst(10))
    out = tmp_path / "c.json"
    r = subprocess.run([sys.executable, "-m", "inspector", "compare", str(f), str(q), "--inputs", str(npz), "--json", str(out)],
                       capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "top-1 agreement 100" not in r.stdout and f"{int(qt.sum())} tied in quantized counted as lost" in r.stdout
    assert "->tied (lost decision)" in r.stdout
    task = json.loads(out.read_text())["task"]
    assert task["lost_decisions"] == int(qt.sum()) and task["top1_agreement"] == pytest.approx(decided_same.mean())
    assert sum(w["flipped"] for w in task["worst_samples"]) == min(10, len(flipped))


def test_only_samples_tied_in_a_are_left_out():
    f = [np.array([[0.1, 0.7, 0.2]]), np.array([[0.4, 0.4, 0.2]]), np.array([[0.6, 0.3, 0.1]]), np.array([[0.2, 0.3, 0.5]])]
    q = [np.array([[0.1, 0.8, 0.1]]), np.array([[0.5, 0.3, 0.2]]), np.array([[0.45, 0.45, 0.1]]), np.array([[0.3, 0.3, 0.3]])]
    t = task_metrics(f, q, labels=[1, 0, 0, 2], kind="classification")
    # sample 1: A tied -> left out; samples 2, 3: B tied -> lost decisions; sample 0 agrees
    assert t.tied_samples == 1 and t.lost_decisions == 2 and t.agreement_samples == 3
    assert t.top1_agreement == pytest.approx(1 / 3)
    # top-5 (k = 3 classes): A's class is in B's top 3 whatever the ties
    assert t.top5_agreement == 1.0
    assert t.float_accuracy == pytest.approx(3 / 4) and t.quant_accuracy == pytest.approx(2 / 4)  # samples 2, 3 tied: wrong
    assert [o.flipped for o in t.outcomes] == [False, False, True, True]
