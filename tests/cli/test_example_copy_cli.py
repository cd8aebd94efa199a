"""Issue 29 §2 from the command line: no arguments say how to open the example (command, File ›
Open the example pair, dropping the files); a copy of the example pair in another folder is the
example too (recognised by its bytes, not its path), so `compare` runs it on the bundled inputs."""

from __future__ import annotations

import json
import shutil

import numpy as np

from inspector.cli import main
from inspector.paths import example_inputs, example_pair, is_example_pair


def _copy(tmp_path):
    f, q = example_pair()
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    for p in (f, q, example_inputs()):
        shutil.copy(p, folder / p.name)
    return folder / f.name, folder / q.name


def test_a_copy_is_the_example_by_its_bytes(tmp_path):
    cf, cq = _copy(tmp_path)
    f, q = example_pair()
    assert is_example_pair(cf, cq) and is_example_pair(f, q)
    assert not is_example_pair(cq, cf)  # the order matters: A is the float model
    changed = tmp_path / "changed.tflite"
    data = bytearray(cq.read_bytes())
    data[-1] ^= 1  # same size, one bit different
    changed.write_bytes(bytes(data))
    assert not is_example_pair(cf, changed)
    assert not is_example_pair(cf, tmp_path / "missing.tflite")


def test_compare_on_a_copy_uses_the_bundled_inputs(tmp_path, capfd):
    cf, cq = _copy(tmp_path)
    out = tmp_path / "c.json"
    assert main(["compare", str(cf), str(cq), "--json", str(out)]) == 0
    assert "the bundled example pair: used its inputs and labels" in capfd.readouterr().err
    got = json.loads(out.read_text())
    labels = np.load(example_inputs())["labels"]
    assert got["samples"] == len(labels) and got["samples_are_random"] is False
    assert got["task"]["float_accuracy"] is not None  # the labels came with them


def test_no_arguments_name_the_menu_action_and_drop_targets(monkeypatch, capsys):
    monkeypatch.setattr("inspector.cli.qt_platform.xcb_problem", lambda: None)
    monkeypatch.setattr("inspector.gui.app.run_app", lambda f=None, q=None: 0)
    assert main([]) == 0
    err = capsys.readouterr().err
    assert "File > Open the example pair" in err and "drop the two .tflite files on the window" in err
