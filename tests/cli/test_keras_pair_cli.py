"""Issue 26 on the command line: a Keras model with an export of another training is refused
(exit 2, one line with the figures) by compare, report and info --tflite; the genuine export
verifies; reports of a Keras model are titled and sourced by the .h5, with its QAT section.

The figures are checked against `kernel_steps` (kernels read with the `tflite` package)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from inspector.core.keras.for_view import cached_twins
from inspector.core.runtime.worker import run_isolated
from tests.helpers.paths import REPO
from tests.helpers.qat_twin_reference import kernel_steps


def _cli(xdg, *args):
    env = {**os.environ, "XDG_CACHE_HOME": str(xdg)}  # the float twins' cache: the tests', never the user's
    return subprocess.run([sys.executable, "-m", "inspector", *map(str, args)], capture_output=True, text=True, env=env, cwd=REPO)


@pytest.fixture(scope="module")
def twin(keras_models, keras_twin_cache) -> str:
    return run_isolated(cached_twins, str(keras_models / "mlp_qat.h5"), str(keras_twin_cache), step="test")["float"]


def _last(stderr: str) -> str:
    return [ln for ln in stderr.strip().splitlines() if ln.startswith("tflite-inspector")][-1]


@pytest.mark.parametrize("command", ["compare", "report", "info"])
def test_another_training_is_refused_with_the_figures(command, keras_models, keras_other, keras_xdg_cache, twin, tmp_path):
    """Before: compare exited 0 ('first departure ... op 1'), info --tflite blamed every layer."""
    h5, other = keras_models / "mlp_qat.h5", keras_other / "other_qat_int8.tflite"
    args = {"compare": ("compare", h5, other, "--samples", "4"),
            "report": ("report", h5, other, "--samples", "4", "--html", tmp_path / "r.html"),
            "info": ("info", h5, "--tflite", other)}[command]
    r = _cli(keras_xdg_cache, *args)
    assert r.returncode == 2, r.stderr
    line = _last(r.stderr)
    steps = kernel_steps(twin, other)
    assert line.startswith(f"tflite-inspector {command}: {other}: not an export of {h5}: ")
    assert f"{np.mean(steps > 2):.0%} of the paired weights disagree by more than 2 quantization steps" in line
    assert f"median {np.median(steps):.1f}" in line and "3 of 3 weight tensors" in line
    assert "Traceback" not in r.stderr and not (tmp_path / "r.html").exists()


def test_allow_unrelated_compares_with_a_warning(keras_models, keras_other, keras_xdg_cache):
    r = _cli(keras_xdg_cache, "compare", keras_models / "mlp_qat.h5", keras_other / "other_qat_int8.tflite", "--samples", "4",
             "--allow-unrelated", "--json", "-")
    assert r.returncode == 0, r.stderr
    assert "warning: " in r.stderr and "not the same trained model" in r.stderr
    d = json.loads(r.stdout)
    assert d["pair_check"]["related"] is False


def test_the_export_verifies(keras_models, keras_xdg_cache, twin):
    """Before: 'note: no weight compared ... the pair is not verified' (A's bias against B's kernel)."""
    r = _cli(keras_xdg_cache, "compare", keras_models / "mlp_qat.h5", keras_models / "mlp_qat_int8.tflite",
             "--inputs", keras_models / "mlp_inputs.npz", "--json", "-")
    assert r.returncode == 0, r.stderr
    assert "not verified" not in r.stderr and "no weight compared" not in r.stderr
    d = json.loads(r.stdout)
    pc = d["pair_check"]
    assert pc["related"] and pc["weights_checked"] and pc["weights_compared"] == 3
    assert pc["max_step_error"] == pytest.approx(float(kernel_steps(twin, keras_models / "mlp_qat_int8.tflite").max()), abs=1e-4)
    assert d["reference"] == "the Keras simulation: mlp_qat.h5's fake-quantized layer outputs, run in TensorFlow"


def test_report_of_a_keras_model_is_named_by_it(keras_models, keras_xdg_cache, tmp_path):
    """Item 5. Before: title and paths were the cached twin's; mlp_qat.h5 appeared nowhere."""
    h5 = keras_models / "mlp_qat.h5"
    r = _cli(keras_xdg_cache, "report", h5, keras_models / "mlp_qat_int8.tflite", "--inputs", keras_models / "mlp_inputs.npz",
             "--html", tmp_path / "r.html", "--json", tmp_path / "r.json")
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "r.html").read_text()
    d = json.loads((tmp_path / "r.json").read_text())
    card = d["models"]["float"]
    assert card["path"] == str(h5) and card["file"] == "mlp_qat.h5"
    assert card["twin_path"].startswith(str(keras_xdg_cache)) and card["twin_path"].endswith("mlp_qat_float.tflite")
    assert "<title>Quantization report: mlp_qat.h5 vs mlp_qat_int8.tflite</title>" in html
    assert f"float: <code>{h5}</code>" in html
    # The QAT section: the ranges, every variable, and the findings `info` prints, word for word.
    info = _cli(keras_xdg_cache, "info", h5, "--tflite", keras_models / "mlp_qat_int8.tflite", "--json", "-")
    assert info.returncode == 0, info.stderr
    q = json.loads(info.stdout)
    assert d["keras_info"]["qat"] == q["qat"]
    assert '<section id="keras-qat"><h2>Keras QAT ranges → scales</h2>' in html
    findings = [f for layer in q["qat"] for f in layer["findings"]]
    assert findings and all(f.replace("'", "&#x27;") in html for f in findings)
    for v in ("quantize_layer_min", "kernel_max", "post_activation_min", "pre_activation_max", "optimizer_step"):
        assert f"<td>{v}</td>" in html
    assert "does not count training steps" in html
    assert "Reference: the Keras simulation: mlp_qat.h5" in html
