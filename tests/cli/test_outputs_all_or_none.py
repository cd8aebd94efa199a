"""Issue 34 §7, §8: every output option of every command is checked before any work (a folder
that takes no file, a missing folder: one line, exit 2, before a worker or TensorFlow starts), and
a command writes all its outputs or none (a write that fails after another was staged leaves
nothing). Before: `extract --out` into a read-only place was an 18-line traceback (exit 1);
`report --html OUT/r.html --json RO/x.json` left r.html, `requantize --out q.tflite --save-plan
RO/p.json` left q.tflite, `requantize FLOAT --out a.tflite --save-recipe RO/r.json` left
a.tflite; an output into a missing folder silently created it."""

from __future__ import annotations

import errno
import os
import stat
import time

import pytest

from inspector.cli import main
from inspector.core import writing
from inspector.core.errors import OutputError
from inspector.core.runtime import worker
from tests.helpers.failing_writes import unwritable_folder
from tests.helpers.paths import REPO

EX = REPO / "inspector" / "resources" / "examples"
F, Q = str(EX / "example_float.tflite"), str(EX / "example_int8.tflite")

# (command line with {ok} for a writable folder and {bad} for the destination under test)
CASES = [
    ["info", F, "--json", "{bad}/x.json"],
    ["compare", F, Q, "--json", "{ok}/c.json", "--csv", "{bad}/c.csv"],
    ["compare", F, Q, "--json", "{bad}/c.json"],
    ["compare-runtimes", Q, "--json", "{bad}/r.json"],
    ["graph", F, Q, "--svg", "{bad}/g.svg"],
    ["report", F, Q, "--html", "{ok}/r.html", "--json", "{bad}/x.json"],
    ["report", F, Q, "--html", "{bad}/r.html"],
    ["report", F, Q, "--json", "{ok}/r.json", "--csv", "{bad}/r.csv"],
    ["report", F, Q, "--html", "{ok}/r.html", "--model-explorer", "{bad}/me.json"],
    ["requantize", F, "--out", "{ok}/a.tflite", "--save-recipe", "{bad}/r.json"],
    ["requantize", F, "--out", "{bad}/a.tflite"],
    ["requantize", F, "--out", "{ok}/a.tflite", "--json", "{bad}/a.json"],
    ["requantize", F, Q, "--keep-float", "op:1", "--out", "{ok}/q.tflite", "--save-plan", "{bad}/p.json"],
    ["requantize", F, Q, "--keep-float", "op:1", "--out", "{bad}/q.tflite"],
    ["suggest", F, Q, "--target-sqnr", "30", "--out", "{ok}/s.tflite", "--save-plan", "{bad}/p.json"],
    ["suggest", F, Q, "--target-sqnr", "30", "--json", "{bad}/s.json"],
    ["extract", Q, "--op", "1", "--out", "{bad}/repro"],
]


def _run(argv: list[str], capsys) -> tuple[int, list[str], float]:
    writing.clear_protected_inputs()
    t = time.perf_counter()
    code = main(argv)
    dt = time.perf_counter() - t
    err = capsys.readouterr().err.strip().splitlines()
    writing.clear_protected_inputs()
    return code, err, dt


def _case_id(case: list[str]) -> str:
    return " ".join(a.split("/")[-1] if "/" in a else a for a in case[:1] + case[2:] if a not in (F, Q))


@pytest.mark.parametrize("where", ["read-only", "missing"])
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_every_output_is_checked_before_any_work(case, where, tmp_path, capsys):
    ok = tmp_path / "ok"
    ok.mkdir()
    bad = unwritable_folder(tmp_path) if where == "read-only" else tmp_path / "missing"
    argv = [a.format(ok=ok, bad=bad) for a in case]
    dest = next(a for a in argv if a.startswith(str(bad)))
    before = worker._default
    code, err, dt = _run(argv, capsys)
    assert code == 2, err
    assert len(err) == 1, err
    reason = "does not exist; create it first" if where == "missing" else "cannot write the output: "
    assert err[0].startswith(f"tflite-inspector {argv[0]}: {dest}: cannot write the output: ") and reason in err[0], err
    assert list(ok.iterdir()) == []  # nothing written, not even the outputs that could be
    assert not (tmp_path / "missing").exists()  # a missing folder is not created
    assert worker._default is before  # refused before any worker started (no work done)
    assert dt < 5, dt


def test_a_write_that_fails_late_leaves_nothing(tmp_path, capsys, monkeypatch):
    """Destinations that pass the check but whose write fails (a full disk on the second file):
    the first file, already staged, is removed with it; an existing file keeps its content."""
    (tmp_path / "c.json").write_text("old json")
    real = writing._temp_beside

    def full_disk(target, raw, st):
        if target.name == "c.csv":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(target, raw, st)

    monkeypatch.setattr(writing, "_temp_beside", full_disk)
    code, err, _ = _run(["compare", F, Q, "--samples", "1", "--no-isolated", "--json", str(tmp_path / "c.json"),
                         "--csv", str(tmp_path / "c.csv")], capsys)  # fmt: skip
    assert code == 2 and len(err) == 1 and "No space left on device" in err[0], err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json"]
    assert (tmp_path / "c.json").read_text() == "old json"


def test_outputs_transaction_rules(tmp_path, capsys):
    """The staging keeps section 8's rules: links keep pointing at their replaced target, modes
    stay, FIFOs and '-' are written in place at the end, a failure removes the folder it made."""
    target = tmp_path / "t.json"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    import threading

    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    with writing.outputs([writing.Target(str(link), "--json"), writing.Target(str(fifo), "--csv")]):
        writing.write_output(link, "new")
        writing.write_output(fifo, "through the fifo")
        writing.write_output("-", "to stdout")
        assert target.read_text() == "old" and capsys.readouterr().out == ""  # nothing until the end
    reader.join(10)
    assert target.read_text() == "new" and link.is_symlink() and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert got == ["through the fifo"] and capsys.readouterr().out == "to stdout"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "pipe", "t.json"]
    # a failure: the folder output it created and the files staged in it are gone
    with pytest.raises(RuntimeError), writing.outputs([writing.Target(str(tmp_path / "new"), "--out", folder=True)]):
        d = writing.make_output_folder(tmp_path / "new")
        writing.write_output(d / "a.bin", b"x")
        raise RuntimeError("the capture failed")
    assert not (tmp_path / "new").exists()
    # a file inside the command's own folder output (`convert --out-dir D --json D/t.json`)
    d = tmp_path / "made"
    with writing.outputs([writing.Target(str(d), "--out-dir", folder=True), writing.Target(str(d / "t.json"), "--json")]):
        writing.write_output(d / "t.json", "{}")
    assert (d / "t.json").read_text() == "{}"
    with pytest.raises(OutputError, match="does not exist; create it first"):
        with writing.outputs([writing.Target(str(tmp_path / "no" / "x.json"), "--json")]):
            pass


def test_convert_checks_its_outputs_before_tensorflow(keras_models, tmp_path, capsys):
    """`convert` into a read-only folder: the same line as every command, before the 20 s
    TensorFlow import (before: `convert: OSError: [Errno 30]` after 18 s)."""
    ro = unwritable_folder(tmp_path)
    for argv in (["convert", str(keras_models / "cnn_float.h5"), "--out-dir", str(ro / "twins")],
                 ["convert", str(keras_models / "cnn_float.h5"), "--out-dir", str(tmp_path / "t"), "--json", str(ro / "t.json")],
                 ["convert", str(keras_models / "cnn_float.h5"), "--out-dir", str(tmp_path / "no" / "t")]):  # fmt: skip
        code, err, dt = _run(argv, capsys)
        assert code == 2 and len(err) == 1 and "cannot write the output: " in err[0], err
        assert dt < 5 and not (tmp_path / "t").exists() and not (tmp_path / "no").exists()


def test_convert_that_fails_after_the_float_twin_leaves_nothing(keras_models, tmp_path):
    """`convert --inputs` with arrays of the wrong shape fails after the float twin is made (the
    samples are read through it): before, a float twin was left in --out-dir; now neither the
    twin nor the folder the command created."""
    import subprocess
    import sys

    import numpy as np

    wrong = tmp_path / "wrong.npz"
    np.savez(wrong, image=np.zeros((2, 5, 5, 1), np.float32))
    out = tmp_path / "twins"
    r = subprocess.run([sys.executable, "-m", "inspector", "convert", str(keras_models / "cnn_float.h5"), "--out-dir",
                        str(out), "--inputs", str(wrong)], capture_output=True, text=True, cwd=REPO, timeout=300)  # fmt: skip
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "has shape [2, 5, 5, 1]" in lines[0], r.stderr
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["wrong.npz"]
