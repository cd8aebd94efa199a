"""Verdicts that see inside the tensor (issue 25) on the command line and in the report: a detector
head whose whole output reads ~50 dB while its score slice reads 0 dB is named with its figures in
the compare table, the task block (per-slice MAE/RMSE, the collapsed slice as a warning), the
`--fail-below-sqnr` gate and the HTML report's headline; a healthy trained CNN gets none of it."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from inspector.cli import main
from tests.helpers import inside_fixtures as ix
from tests.helpers.paths import REPO
from tests.helpers.task_fixtures import TaskFixtures


@pytest.fixture(scope="module")
def det(tmp_path_factory):
    paths = ix.detector_models(REPO / ".fixture-cache")
    npz = tmp_path_factory.mktemp("det") / "images.npz"
    np.savez(npz, image=ix.detector_images(12, seed=3))
    return str(paths["det_float"]), str(paths["det_int8"]), str(npz)


def test_the_table_and_the_task_block_name_the_score_slice(det, capfd):
    f, q, npz = det
    assert main(["compare", f, q, "--inputs", npz]) == 0
    out = capfd.readouterr().out
    m = re.search(r"output output_0: slice 4:7 of op (\d+), from op (\d+) LOGISTIC: SQNR ([\d.]+) dB, ([\d.]+) steps used; "
                  r"the tensor reads ([\d.]+) dB", out)
    assert m, out
    assert float(m.group(3)) < 1 and float(m.group(4)) < 1 and float(m.group(5)) > 40
    assert "inside the tensors (1 layer(s)" in out
    assert re.search(r"slice 4:7 \(op \d+ LOGISTIC\): MAE [\d.]+, RMSE [\d.]+", out)
    assert re.search(r"slice 4:7 \(op \d+ LOGISTIC\): MAE .*; SQNR 0\.0 dB, [\d.]+ steps used where the whole output reads", out)
    assert re.search(r"slice 0:4 \(op \d+ MUL\): MAE [\d.]+, RMSE [\d.]+ \([\d.]+% of its range\)\n", out)
    assert re.search(r"WARNING: slice 4:7 \(op \d+ LOGISTIC\) is constant in B \(0\) where A varies", out)


def test_the_json_task_block_has_the_slices(det, capfd):
    f, q, npz = det
    assert main(["compare", f, q, "--inputs", npz, "--json", "-"]) == 0
    d = json.loads(capfd.readouterr().out)
    sl = d["task"]["slices"]
    assert [(s["start"], s["stop"]) for s in sl] == [(0, 4), (4, 7)]
    assert sl[1]["collapsed"] and not sl[0]["collapsed"]
    assert sl[1]["quant_min"] == sl[1]["quant_max"] == 0.0 and sl[1]["float_max"] > sl[1]["float_min"]


def test_fail_below_sqnr_gates_on_the_worst_slice(det, capfd):
    f, q, npz = det
    assert main(["compare", f, q, "--inputs", npz, "--fail-below-sqnr", "20"]) == 1  # the whole output reads ~50 dB
    err = capfd.readouterr().err
    assert re.search(r"FAIL: output 'output_0' slice 4:7 \(from op \d+ LOGISTIC\) SQNR 0\.00 dB is below 20 dB "
                     r"\(the whole output reads [\d.]+ dB\)", err), err
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    assert "worst slice" in capfd.readouterr().out


def test_the_report_headline_names_the_slice(det, tmp_path):
    f, q, npz = det
    html = tmp_path / "r.html"
    main(["report", f, q, "--inputs", npz, "--html", str(html)])
    text = html.read_text()
    m = re.search(r'<div class="banner sev-warning" id="inside">(.*?)</div>', text)
    assert m and "slice 4:7 of op" in m.group(1) and "LOGISTIC" in m.group(1) and "steps used" in m.group(1)
    assert "mixed-ranges" in text and "mixed_ranges" in text
    table = re.search(r"<h3>Per input slice of the output</h3>(.*?)</table>", text).group(1)
    assert re.search(r'<tr class="sev-warning"><td>4:7</td><td>op \d+ LOGISTIC</td>.*?<td>yes</td></tr>', table)


def test_a_healthy_trained_cnn_gets_no_inside_verdict(capfd):
    tf = TaskFixtures(REPO / ".fixture-cache")
    cls = tf.models()
    assert main(["compare", str(cls["cls_float"]), str(cls["cls_int8"]), "--inputs", str(tf.npz(40)), "--json", "-"]) == 0
    d = json.loads(capfd.readouterr().out)
    assert "slices" not in d["task"]
    assert main(["compare", str(cls["cls_float"]), str(cls["cls_int8"]), "--inputs", str(tf.npz(40))]) == 0
    out = capfd.readouterr().out
    assert "inside the tensors" not in out and "slice" not in out
    # ... although one near-dead ReLU channel reads ~0 dB: under a quarter of the median range, not named
    assert any(c is not None and c["worst"]["sqnr_db"] is not None and c["worst"]["sqnr_db"] < 5
               for c in (lay["channels"] for lay in d["layers"]))


def test_a_classifiers_classes_are_not_gated_one_by_one(capfd):
    """A classifier's output channels are its classes: a rare class reads a low SQNR of its own
    (here ~33 dB beside 38.5 dB for the whole output); the gate reads the whole output."""
    tf = TaskFixtures(REPO / ".fixture-cache")
    cls = tf.models()
    args = ["compare", str(cls["cls_float"]), str(cls["cls_int8"]), "--inputs", str(tf.npz(40))]
    assert main([*args, "--json", "-"]) == 0
    out = json.loads(capfd.readouterr().out)["outputs"][0]
    whole, worst = out["metrics"]["sqnr_db"], out["channels"]["worst"]["sqnr_db"]
    assert worst < 35 < whole
    assert main([*args, "--fail-below-sqnr", "35"]) == 0
    assert main([*args, "--fail-below-sqnr", f"{whole + 1:.1f}"]) == 1


def test_the_collapsed_score_slice_is_the_root_cause(det, capfd):
    """Blame reads a concatenated output by its slices, each against its own energy: the whole
    tensor's error is 1e-5 of its energy (50 dB, the pixel boxes), and blame named nothing; the
    score slice reads 0 dB. Keeping the concatenation (and its inputs' requantizing readers) float
    is one intervention, named once, at the concatenation."""
    f, q, npz = det
    assert main(["compare", f, q, "--inputs", npz, "--json", "-"]) == 0
    d = json.loads(capfd.readouterr().out)
    assert len(d["root_causes"]) == 1, d["root_causes"]
    r = d["root_causes"][0]
    concat = next(lay["op_index"] for lay in d["layers"] if lay["op_type"] == "CONCATENATION")
    assert r["op_index"] == concat and r["cause"] == "mixed_ranges" and r["share"] > 0.9
    assert r["fix"]["edit"] == "keep_float" and concat in r["fix"]["ops"] and r["fix_gain_db"] > 30
