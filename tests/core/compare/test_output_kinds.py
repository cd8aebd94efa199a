"""Regression outputs are not classes; constant or tied outputs give no agreement (issue 18 §3, §5).

Models are built with TF's converter (tests/helpers/output_kind_fixtures.py); every figure is
checked against the models' outputs read independently with the LiteRT interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.result import ComparisonResult
from inspector.core.samples.settings import SampleSettings
from tests.helpers.output_kind_fixtures import OutputKindFixtures
from tests.helpers.paths import REPO

N = 12


@pytest.fixture(scope="module")
def kinds():
    fx = OutputKindFixtures(REPO / ".fixture-cache")
    return fx.models(), fx.npz(N)


def _outputs(path, images: np.ndarray, size: int | None = None) -> np.ndarray:
    """The model's (dequantized) output for each image, by the LiteRT interpreter alone: its
    first output, or the one of `size` values per image."""
    it = Interpreter(model_path=str(path))
    it.allocate_tensors()
    i = it.get_input_details()[0]
    outs = it.get_output_details()
    o = outs[0] if size is None else next(d for d in outs if int(d["shape"][-1]) == size)
    out = []
    for x in images:
        it.set_tensor(i["index"], x[None].astype(np.float32))
        it.invoke()
        y = it.get_tensor(o["index"]).astype(np.float64)
        s, z = o["quantization"]
        out.append((y - z) * s if s else y)
    return np.stack(out)


def _compare(models, npz, name, **kw):
    opts = CompareOptions(samples=SampleSettings(source=str(npz), count=None), **kw)
    return compare_models(str(models[f"{name}_float"]), str(models[f"{name}_int8"]), opts)


@pytest.mark.parametrize("name, values", [("reg6", 6), ("landmarks", 1404)])
def test_regression_outputs_get_regression_metrics(kinds, name, values):
    models, npz = kinds
    res = _compare(models, npz, name)
    images = np.load(npz)["image"]
    x, y = _outputs(models[f"{name}_float"], images), _outputs(models[f"{name}_int8"], images)
    assert x.shape == (N, 1, values)
    e = y - x
    t = res.to_json()["task"]
    assert t["kind"] == "regression" and t["top1_agreement"] is None and t["top5_agreement"] is None
    assert "SOFTMAX" in t["reason"]
    assert t["num_values"] == values
    assert t["mae"] == pytest.approx(np.abs(e).mean(), rel=1e-5)
    assert t["rmse"] == pytest.approx(np.sqrt((e**2).mean()), rel=1e-5)
    assert t["max_error"] == pytest.approx(np.abs(e).max(), rel=1e-5)
    rng = x.max() - x.min()
    assert t["float_range"] == pytest.approx(rng, rel=1e-5)
    assert t["relative_rmse"] == pytest.approx(np.sqrt((e**2).mean()) / rng, rel=1e-5)
    assert t["relative_max_error"] == pytest.approx(np.abs(e).max() / rng, rel=1e-5)
    assert 0 < t["relative_mae"] < 1
    # Worst samples by error: the largest per-sample RMSE first.
    per_rmse = np.sqrt((e.reshape(N, -1) ** 2).mean(axis=1))
    assert [w["index"] for w in t["worst_samples"][:3]] == list(np.argsort(-per_rmse, kind="stable")[:3])
    assert t["worst_samples"][0]["rmse"] == pytest.approx(per_rmse.max(), rel=1e-5)
    assert t["outputs"][0]["kind"] == "regression" and t["outputs"][0]["rmse"] == pytest.approx(t["rmse"])
    # The JSON reloads with its kind.
    back = ComparisonResult.from_json(json.loads(json.dumps(res.to_json(include_per_sample=True))))
    assert back.task().kind == "regression" and back.task().regression.rmse == pytest.approx(t["rmse"])


def test_user_can_still_ask_for_classification(kinds):
    models, npz = kinds
    res = _compare(models, npz, "reg6", task_kind="classification")
    assert res.task().kind == "classification" and res.task().top1_agreement is not None


def test_softmax_classifier_stays_classification(fixture_path):
    res = compare_models(str(fixture_path("float")), str(fixture_path("int8")), CompareOptions(samples=SampleSettings(count=6)))
    t = res.task()
    assert t.kind == "classification" and "SOFTMAX" in t.reason and t.top1_agreement is not None and t.regression is None


def test_constant_softmax_is_flagged_and_ties_give_no_agreement(kinds):
    models, npz = kinds
    res = _compare(models, npz, "const")
    images = np.load(npz)["image"]
    x, y = _outputs(models["const_float"], images), _outputs(models["const_int8"], images)
    # What the fixture is: every sample's float output the same uniform vector, argmax tied.
    assert np.all(x == x[0]) and np.sum(x[0] == x[0].max()) == 10
    assert np.all(y == y[0]) and np.sum(y[0] == y[0].max()) > 1
    t = res.to_json()["task"]
    assert t["kind"] == "classification"
    assert t["float_constant"] and t["quant_constant"]
    assert t["tied_samples"] == N and t["agreement_samples"] == 0
    assert t["top1_agreement"] is None and t["top5_agreement"] is None
    assert "tied" in t["agreement_note"]
    assert any("constant" in w for w in t["warnings"]) and any("tied" in w for w in t["warnings"])
    assert not any(w["flipped"] for w in t["worst_samples"])


def test_ties_left_out_of_agreement():
    """Samples tied in A are left out; a sample tied in B only is a disagreement (independent loop)."""
    from inspector.core.compare.task import task_metrics

    rng = np.random.default_rng(4)
    f = [rng.normal(0, 1, (1, 5)) for _ in range(20)]
    q = [v + rng.normal(0, 0.8, v.shape) for v in f]
    for i in (0, 3, 7):
        f[i] = np.full((1, 5), 0.2)
    q[11] = np.zeros((1, 5))
    r = task_metrics(f, q, kind="classification")
    keep = [i for i in range(20) if i not in (0, 3, 7)]
    agree = np.mean([i != 11 and np.argmax(f[i]) == np.argmax(q[i]) for i in keep])
    assert r.tied_samples == 3 and r.agreement_samples == 17 and r.lost_decisions == 1
    assert r.top1_agreement == pytest.approx(agree)
    assert not r.float_constant and "3 of 20" in r.agreement_note


def test_cli_table_and_json_say_regression(kinds, tmp_path):
    models, npz = kinds
    out = tmp_path / "c.json"
    r = subprocess.run([sys.executable, "-m", "inspector", "compare", str(models["reg6_float"]), str(models["reg6_int8"]),
                        "--inputs", str(npz), "--json", str(out)], capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "task (regression" in r.stdout and "RMSE" in r.stdout and "top-1" not in r.stdout
    t = json.loads(out.read_text())["task"]
    assert t["kind"] == "regression" and {"mae", "rmse", "max_error", "relative_mae", "relative_rmse", "relative_max_error"} <= set(t)
    r = subprocess.run([sys.executable, "-m", "inspector", "compare", str(models["const_float"]), str(models["const_int8"]),
                        "--inputs", str(npz), "--json", "-"], capture_output=True, text=True)  # fmt: skip
    t = json.loads(r.stdout)["task"]
    assert t["top1_agreement"] is None and t["agreement_note"]
    r = subprocess.run([sys.executable, "-m", "inspector", "compare", str(models["reg6_float"]), str(models["reg6_int8"]),
                        "--inputs", str(npz), "--task", "other", "--json", "-"], capture_output=True, text=True)  # fmt: skip
    assert json.loads(r.stdout)["task"]["kind"] == "regression", r.stderr


def test_report_shows_regression_figures_and_ties(kinds, tmp_path):
    import re

    models, npz = kinds
    for name in ("reg6", "const"):
        html, js = tmp_path / f"{name}.html", tmp_path / f"{name}.json"
        r = subprocess.run([sys.executable, "-m", "inspector", "report", str(models[f"{name}_float"]), str(models[f"{name}_int8"]),
                            "--inputs", str(npz), "--html", str(html), "--json", str(js)], capture_output=True, text=True)  # fmt: skip
        assert r.returncode == 0, r.stderr
        t = json.loads(js.read_text())["comparison"]["task"]
        text = html.read_text()
        section = text[text.index('<section id="task">'):]
        section = section[: section.index("</section>")]
        cards = dict(re.findall(r'data-key="task\.([^"]+)"><span class="muted">[^<]*</span><br><b>([^<]*)</b>', section))
        if name == "reg6":
            assert cards["task kind"] == "regression" and "top-1 agreement" not in cards
            assert cards["RMSE"].startswith(f"{t['rmse']:.4g}") and f"{100 * t['relative_rmse']:.2f}% of range" in cards["RMSE"]
            assert "Worst samples (largest RMSE first)" in section
        else:
            assert cards["top-1 agreement"] == "–" and "Agreement not reported" in section and "constant" in section


def test_two_heads_each_output_gets_its_kind(kinds, tmp_path):
    """A classifier head (softmax) and a box head (no softmax) on one trunk: one kind per output."""
    models, npz = kinds
    res = _compare(models, npz, "heads")
    rows = res.to_json()["task"]["outputs"]
    kinds_by_size = {}
    for k in range(len(res.outputs)):
        size = int(res.per_sample_outputs.float[0][k].size)
        kinds_by_size[size] = rows[k]["kind"]
        if size == 3:
            images = np.load(npz)["image"]
            x = _outputs(models["heads_float"], images, 3)
            y = _outputs(models["heads_int8"], images, 3)
            assert rows[k]["rmse"] == pytest.approx(np.sqrt(((y - x) ** 2).mean()), rel=1e-5)
            assert rows[k]["max_error"] == pytest.approx(np.abs(y - x).max(), rel=1e-5)
    assert kinds_by_size == {4: "classification", 3: "regression"}
    r = subprocess.run([sys.executable, "-m", "inspector", "compare", str(models["heads_float"]), str(models["heads_int8"]),
                        "--inputs", str(npz)], capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("task (") == 2 and "task (classification" in r.stdout and "task (regression" in r.stdout
