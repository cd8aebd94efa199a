"""`compare` computes each layer's own (isolated) error by default, so the diagnosis decides
every cause without a flag: a bias shift of 3 output steps planted in a trained model's int8
twin (`diagnosis_fixtures.shift_bias`, alternating sign by channel) reads `bias_shift ->
bias_correct` from the plain command. `--no-isolated` skips the own error (the cause is then
left undecided, and says why); `--isolated`, the old opt-in, is still accepted and changes nothing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers import diagnosis_fixtures as dx
from tests.helpers.paths import REPO
from tests.helpers.task_fixtures import TaskFixtures


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    paths = dx.models(REPO / ".fixture-cache")
    q = paths["diag_int8"]
    op = dx.op_index(q, "conv2")
    path = tmp_path_factory.mktemp("bias") / "bias_shift.tflite"
    path.write_bytes(dx.shift_bias(q.read_bytes(), op, 3.0))
    return paths["diag_float"], path, op, TaskFixtures(REPO / ".fixture-cache").npz(40)


def _compare(planted, tmp_path, *flags: str) -> dict:
    f, q, op, inputs = planted
    out = tmp_path / f"c{len(flags)}{''.join(flags)}.json"
    r = subprocess.run([sys.executable, "-m", "inspector", "compare", str(f), str(q), "--inputs", str(inputs), "--json", str(out), *flags],
                       capture_output=True, text=True, cwd=REPO)  # fmt: skip
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    return next(lay for lay in d["layers"] if lay["op_index"] == op)


def test_a_planted_bias_shift_reads_bias_shift_without_a_flag(planted, tmp_path):
    op = planted[2]
    layer = _compare(planted, tmp_path)
    assert layer["isolated"] is not None
    assert layer["diagnosis"]["cause"] == "bias_shift" and layer["diagnosis"]["fix"] == {"edit": "bias_correct", "ops": [op]}
    assert _compare(planted, tmp_path, "--isolated")["diagnosis"] == layer["diagnosis"]  # the old opt-in: accepted, no change
    skipped = _compare(planted, tmp_path, "--no-isolated")
    assert skipped["isolated"] is None and skipped["metrics"] == layer["metrics"]
    assert skipped["diagnosis"]["cause"] == "none" and "--no-isolated" in skipped["diagnosis"]["evidence"]
