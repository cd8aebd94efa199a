"""Issue 34 §2-3: a pair that is not a float model and its quantized twin is refused (one line,
exit 2, no runtime text), by every command that takes a pair, through the one pair check with
the same --allow-unrelated."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.compare.pair_check import check_pair_files
from inspector.paths import example_pair
from tests.helpers.pair_fixtures import PairFixtures
from tests.helpers.paths import REPO


@pytest.fixture(scope="module")
def pairs() -> dict[str, Path]:
    return PairFixtures(REPO / ".fixture-cache").models()


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})  # fmt: skip


def test_a_quantized_model_compared_with_itself_is_refused_in_one_line():
    """It ran: every layer -0.02 to 0.41 dB, clip 95-100 %, nine 'clipping -> recalibrate', exit 0,
    and the runtime's 'kernel_util.cc:222 ... failed to prepare' on stderr."""
    q = str(example_pair()[1])
    proc = _cli("compare", q, q, "--samples", "2")
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "are the same model" in lines[0] and "--allow-unrelated" in lines[0], proc.stderr
    assert "kernel_util" not in proc.stderr and "Node number" not in proc.stderr


def test_two_quantized_or_two_float_models_are_not_a_pair(pairs, tmp_path):
    check = check_pair_files(pairs["seed21_int8"], pairs["seed22_int8"])
    assert not check.related and check.reasons == ("seed21_int8.tflite is a quantized model too (its ops compute on integers), "
                                                   "not the float model of seed22_int8.tflite",)  # fmt: skip
    other = tmp_path / "other_float.tflite"  # the same float model, other bytes (a trailing byte)
    other.write_bytes(pairs["seed21_float"].read_bytes() + b"\0")
    check = check_pair_files(pairs["seed21_float"], other)
    assert not check.related and "neither model is quantized" in check.message
    # the twin pair, and the swapped one, stay a pair
    assert check_pair_files(pairs["seed21_float"], pairs["seed21_int8"]).related
    swapped = check_pair_files(pairs["seed21_int8"], pairs["seed21_float"])
    assert swapped.related and swapped.swapped


def test_every_command_that_takes_a_pair_refuses_what_compare_refuses(pairs, tmp_path, capsys):
    """requantize wrote a model from a pair compare refused (74 % of the paired weights disagree)."""
    f, other = str(pairs["seed21_float"]), str(pairs["seed22_int8"])
    share = f"{check_pair_files(f, other).disagree_share:.0%} of the paired weights disagree"
    out = tmp_path / "new.tflite"
    commands = {
        "compare": ["compare", f, other, "--samples", "2"],
        "requantize": ["requantize", f, other, "--out", str(out), "--per-channel", "op:1"],
        "requantize --calibrate-from": ["requantize", f, "--out", str(out), "--calibrate-from", other, "--samples", "2"],
        "suggest": ["suggest", f, other, "--target-sqnr", "40", "--samples", "2"],
        "extract --float": ["extract", other, "--op", "1", "--float", f, "--out", str(tmp_path / "x")],
        "graph": ["graph", f, other, "--svg", str(tmp_path / "g.svg"), "--samples", "2"],
        "report": ["report", f, other, "--json", str(tmp_path / "r.json"), "--samples", "2"],
    }
    for name, argv in commands.items():
        assert main(argv) == 2, name
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and share in err[0] and "--allow-unrelated" in err[0], (name, err)
    assert not out.exists() and not (tmp_path / "x").exists()
    # the same --allow-unrelated lets requantize go on, with the warning compare gives
    assert main([*commands["requantize"], "--allow-unrelated"]) == 0
    assert out.exists() and share in capsys.readouterr().err
