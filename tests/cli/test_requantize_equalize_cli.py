"""`tflite-inspector requantize FLOAT QUANT --out NEW --equalize P`: the CLI contract of equalize
(text and JSON gain, the plan file `{"edit": "equalize", "ops": [P, C]}`, one-line refusals, exit 2)."""

from __future__ import annotations

import json

import pytest

from inspector.cli import main
from tests.helpers.equalize_fixtures import CHANNEL, cache_paths, samples_npz
from tests.helpers.paths import REPO


@pytest.fixture(scope="module")
def eqp():
    root = REPO / ".fixture-cache"
    return {**cache_paths(root), "npz": samples_npz(root, "cnn", 48, 3)}


def test_equalize_flag_text_json_and_plan_file(eqp, tmp_path, capsys):
    f, q = str(eqp["eq_cnn_float"]), str(eqp["eq_cnn_int8"])
    a, b, plan, js = (tmp_path / n for n in ("a.tflite", "b.tflite", "plan.json", "r.json"))
    argv = ["requantize", f, q, "--out", str(a), "--equalize", "conv2_1/Relu", "--inputs", str(eqp["npz"]),
            "--save-plan", str(plan), "--json", str(js)]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "edited op(s) 2, 3 of QUANT" in out
    gain_line = next(line for line in out.splitlines() if line.startswith("gain: output SQNR"))
    assert "on the 16 held-out samples not used for calibration (calibrated on 32)" in gain_line
    assert "note: equalized op 2 (CONV_2D" in out and "with op 3 (CONV_2D" in out
    d = json.loads(js.read_text())
    assert d["edited_ops"] == [2, 3] and d["gain"]["evaluation"] == "held-out"
    assert d["gain"]["gain_db"] >= 6.0
    assert f"{d['gain']['gain_db']:+.2f} dB" in gain_line
    assert d["plan"]["edits"][0]["edit"] == "equalize" and d["plan"]["edits"][0]["ops"] == [2, 3]
    (rec,) = d["equalized"]
    assert (rec["producer"], rec["consumer"], len(rec["scales"])) == (2, 3, 16)
    assert max(range(16), key=lambda i: rec["scales"][i]) == CHANNEL
    assert rec["channel_range_ratio_before"] > 16 > 4 > rec["channel_range_ratio_after"]
    assert rec["output_scale_after"] < rec["output_scale_before"] / 16
    # a plan file written by hand in the agreed form reproduces the same bytes
    saved = json.loads(plan.read_text())
    saved["edits"] = [{"edit": "equalize", "ops": [2, 3]}]
    plan.write_text(json.dumps(saved))
    assert main(["requantize", f, q, "--out", str(b), "--plan", str(plan)]) == 0
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize("op,message", [
    ("op:1", "ends in RELU6, which is not positively homogeneous"),
    ("op:2", "its output has 2 consumers; equalization needs exactly one"),
])  # fmt: skip
def test_refusals_exit_2_with_one_line(eqp, tmp_path, capsys, op, message):
    out = tmp_path / "x.tflite"
    argv = ["requantize", str(eqp["eq_refuse_float"]), str(eqp["eq_refuse_int8"]), "--out", str(out), "--equalize", op, "--samples", "2"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "eq_refuse_int8.tflite" in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_equalize_needs_quant(eqp, tmp_path, capsys):
    assert main(["requantize", str(eqp["eq_cnn_float"]), "--out", str(tmp_path / "x.tflite"), "--equalize", "op:2"]) == 2
    assert "--equalize" in capsys.readouterr().err
