"""Bad inputs get one precise line naming the file and the problem (exit 2), never a traceback."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.pairing import pair_models
from inspector.core.errors import PairingError
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import Model


def _compare(f, q, *args):
    r = subprocess.run([sys.executable, "-m", "inspector", "compare", str(f), str(q), *map(str, args)],
                       capture_output=True, text=True)  # fmt: skip
    return r


def test_mismatched_pair_is_named_but_still_inspectable(fixture_path, example_pair):
    f, _ = example_pair
    q = fixture_path("stateful_int8")
    r = _compare(f, q)
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "do not correspond" in r.stderr and "[1, 16]" in r.stderr and q.name in r.stderr
    with pytest.raises(PairingError):
        compare_models(str(f), str(q), CompareOptions(samples=SampleSettings(count=1)))
    # both still open and pair (side-by-side inspection keeps working)
    p = pair_models(Model(f), Model(q))
    assert p.unmatched_quant_ops or p.unmatched_float_ops


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda d: np.savez(d / "s.npz", image=np.zeros((2, 16, 16, 3), np.float32)), "has shape [2, 16, 16, 3]"),
        (lambda d: (d / "imgs").mkdir() or (d / "imgs" / "x.png").write_text("not an image"), "cannot read the image"),
    ],
)
def test_bad_sample_files(cnn_pair, tmp_path, make, needle):
    """On the fixture CNN (a 32x32x3 image input: an image folder is a valid source for it)."""
    make(tmp_path)
    path = tmp_path / "s.npz" if (tmp_path / "s.npz").exists() else tmp_path / "imgs"
    r = _compare(*cnn_pair, "--inputs", path)
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("cmd", ["info", "compare"])
def test_an_output_that_cannot_be_written_is_one_line(example_pair, tmp_path, cmd):
    """An output whose folder cannot exist (a file stands where the folder should be): one line
    naming the output and the reason, exit 2, nothing left behind."""
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("keep me")
    dest = blocker / "out.json"
    args = [example_pair[1]] if cmd == "info" else [*example_pair, "--samples", "1"]
    r = subprocess.run([sys.executable, "-m", "inspector", cmd, *map(str, args), "--json", str(dest)],
                       capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and str(dest) in r.stderr and "cannot write" in r.stderr
    assert blocker.read_text() == "keep me" and sorted(p.name for p in tmp_path.iterdir()) == ["not_a_folder"]
