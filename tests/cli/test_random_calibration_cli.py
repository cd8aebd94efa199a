"""Calibrating on noise is said before acting (issue 26 §9): `requantize` (both routes) and
`suggest` re-calibrate on the pair's samples; without --inputs those are random, and the command
prints one WARNING line on stderr (once the request is known to apply, so a refused request or
pair stays one line: issue 34 moved suggest's after its run) and writes `"calibration": {"source": "random", ...}`
in its JSON; with --inputs, no warning and `"source": "inputs"`. Edits that calibrate
nothing (keep float) warn of nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from inspector.core.tflite.model import load_model
from tests.helpers import verdict_fixtures as vf
from tests.helpers.paths import REPO


@pytest.fixture(scope="module")
def conf(tmp_path_factory):
    paths = vf.confident(REPO / ".fixture-cache")
    npz = tmp_path_factory.mktemp("cal") / "cal.npz"
    np.savez(npz, features=vf.inputs(8, 0))
    op = next(o.index for o in load_model(paths["conf_int8"]).main.ops if o.type == "FULLY_CONNECTED" and o.index > 1)
    return str(paths["conf_float"]), str(paths["conf_int8"]), str(npz), op


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "inspector", *map(str, args)], capture_output=True, text=True)


def _warnings(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if "WARNING: calibrating on" in ln]


def test_surgical_requantize_on_random_samples_says_so(conf, tmp_path):
    f, q, npz, op = conf
    j = tmp_path / "r.json"
    r = _cli("requantize", f, q, "--out", tmp_path / "new.tflite", "--recalibrate", f"op:{op}", "--samples", 4, "--json", j)
    assert r.returncode == 0, r.stderr
    assert len(_warnings(r.stderr)) == 1 and "4 random samples" in r.stderr and "--inputs" in r.stderr
    cal = json.loads(j.read_text())["calibration"]
    assert cal["source"] == "random" and cal["samples"] == 4 and cal["inputs"] is None and cal["calibrates"] is True
    r = _cli("requantize", f, q, "--out", tmp_path / "new2.tflite", "--recalibrate", f"op:{op}", "--inputs", npz, "--json", j)
    assert r.returncode == 0 and not _warnings(r.stderr), r.stderr
    cal = json.loads(j.read_text())["calibration"]
    assert cal["source"] == "inputs" and cal["inputs"] == npz
    r = _cli("requantize", f, q, "--out", tmp_path / "new3.tflite", "--keep-float", f"op:{op}", "--json", j)
    assert r.returncode == 0 and not _warnings(r.stderr), r.stderr
    assert json.loads(j.read_text())["calibration"]["calibrates"] is False


def test_quantizer_requantize_on_random_samples_says_so(conf, tmp_path):
    f, _, _, _ = conf
    j = tmp_path / "r.json"
    r = _cli("requantize", f, "--out", tmp_path / "new.tflite", "--samples", 4, "--json", j)
    assert r.returncode == 0, r.stderr
    assert len(_warnings(r.stderr)) == 1
    assert json.loads(j.read_text())["calibration"]["source"] == "random"


def test_suggest_on_random_samples_says_so(conf, tmp_path):
    f, q, npz, _ = conf
    j = tmp_path / "s.json"
    r = _cli("suggest", f, q, "--target-sqnr", 80, "--max-float-layers", 1, "--candidates", 1, "--max-evaluations", 2,
             "--samples", 4, "--json", j)  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    assert len(_warnings(r.stderr)) == 1
    assert json.loads(j.read_text())["calibration"]["source"] == "random"
    r = _cli("suggest", f, q, "--target-sqnr", 80, "--max-float-layers", 1, "--candidates", 1, "--max-evaluations", 2,
             "--inputs", npz, "--json", j)  # fmt: skip
    assert r.returncode in (0, 1) and not _warnings(r.stderr), r.stderr
    assert json.loads(j.read_text())["calibration"]["source"] == "inputs"
