"""Issue 29 §4: the Keras route reads clean. Each bad input is one line on stderr naming the file
and exit 2, with no Python exception name (before: "FileNotFoundError: [Errno 2] ...", "cannot
read the file (Is a directory)", Keras's 'Input 0 of layer "model" is incompatible ...', and
`convert` with inputs of the wrong shape exited 0 ignoring them); no TensorFlow log line reaches
stderr (absl, "Could not find cuda drivers", the converter's "fully_quantize: 0, ...",
"Statistics for quantized inputs were expected"); `info --help` names the Keras formats and
`info --json FILE` keeps the text."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tests.helpers.paths import REPO

EXCEPTION_NAME = re.compile(r"\b[A-Z]\w*(Error|Exception|Warning)\b")
TF_NOISE = ("absl", "cudart", "cuda drivers", "oneDNN", "fully_quantize", "Statistics for quantized inputs",
            "Saved artifact", "I0000", "W0000", "warnings.warn")  # fmt: skip


def _cli(*args, cwd=REPO, cache=None):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)  # the twin cache: not the user's
    return subprocess.run([sys.executable, "-m", "inspector", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=600)  # fmt: skip


def _one_line(r, *words: str) -> str:
    assert r.returncode == 2, (r.returncode, r.stderr[-3000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert not EXCEPTION_NAME.search(lines[0]), lines[0]
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


@pytest.mark.parametrize("argv", [["info", "{m}"], ["convert", "{m}", "--out-dir", "{t}/o"], ["compare", "{m}", "{b}"],
                                  ["report", "{m}", "{b}", "--html", "{t}/r.html"]])  # fmt: skip
def test_a_missing_keras_file(argv, tmp_path, keras_models):
    m = tmp_path / "missing_qat.h5"
    args = [a.format(m=m, t=tmp_path, b=keras_models / "mlp_qat_int8.tflite") for a in argv]
    line = _one_line(_cli(*args), str(m), "no such file")
    assert line.startswith(f"tflite-inspector {argv[0]}: ")


@pytest.mark.parametrize("argv", [["info", "{d}"], ["convert", "{d}", "--out-dir", "{t}/o"], ["compare", "{d}", "{b}"]])
def test_a_folder_that_is_not_a_saved_model(argv, tmp_path, keras_models):
    d = tmp_path / "not_a_model"
    d.mkdir()
    (d / "variables").mkdir()
    args = [a.format(d=d, t=tmp_path, b=keras_models / "mlp_qat_int8.tflite") for a in argv]
    _one_line(_cli(*args), str(d), "a folder that is not a SavedModel")


def test_a_keras_model_with_the_tflite_of_another_model(tmp_path, keras_models):
    b = keras_models / "cnn_qat_int8.tflite"
    r = _cli("compare", keras_models / "mlp_qat.h5", b, "--inputs", keras_models / "mlp_inputs.npz", cache=tmp_path)
    line = _one_line(r, str(b), "mlp_qat.h5", "[784]", "[16, 16, 3]", "not a conversion")
    assert "incompatible" not in line


def test_convert_with_inputs_of_the_wrong_shape(tmp_path, keras_models):
    """A QAT model's int8 twin needs no samples; inputs that do not fit were silently ignored."""
    npz = keras_models / "cnn_inputs.npz"
    r = _cli("convert", keras_models / "mlp_qat.h5", "--out-dir", tmp_path / "o", "--inputs", npz)
    _one_line(r, str(npz), "[-1, 784]", "[64, 16, 16, 3]")


def test_no_tensorflow_log_lines(tmp_path, keras_models):
    """A post-training conversion (the converter's C++ log and its Python warning) and a QAT
    model's info: stderr is empty, stdout holds the JSON or the text alone."""
    r = _cli("convert", keras_models / "cnn_float.h5", "--out-dir", tmp_path / "o", "--inputs",
             keras_models / "cnn_inputs.npz", "--quantize", "int8", "dynamic", "--json", "-")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stderr == "", r.stderr
    assert set(json.loads(r.stdout)["quantized"]) == {"int8", "dynamic"}
    r = _cli("info", keras_models / "mlp_qat.h5", "--json", tmp_path / "i.json", cache=tmp_path / "c")
    assert r.returncode == 0, r.stderr
    assert not [w for w in TF_NOISE if w in r.stderr], r.stderr
    assert r.stderr == "", r.stderr
    # --json FILE keeps the text on stdout
    assert "mlp_qat.h5: Keras model (h5), quantization-aware (QAT)" in r.stdout
    assert json.loads((tmp_path / "i.json").read_text())["is_qat"] is True


def test_info_json_file_keeps_the_text_for_tflite(tmp_path, keras_models):
    r = _cli("info", keras_models / "mlp_qat_int8.tflite", "--json", tmp_path / "i.json")
    assert r.returncode == 0, r.stderr
    assert "FULLY_CONNECTED" in r.stdout and json.loads((tmp_path / "i.json").read_text())["subgraphs"]
    r = _cli("info", keras_models / "mlp_qat_int8.tflite", "--json", "-")
    assert json.loads(r.stdout)["subgraphs"]  # '-': the JSON alone


def test_info_help_names_the_keras_formats():
    r = _cli("info", "--help")
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    assert ".h5" in text and ".keras" in text and "SavedModel" in text
