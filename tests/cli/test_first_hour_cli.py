"""Issue 19 §3 from the command line: the GUI checks Qt's xcb libraries before starting and
prints the exact apt-get line; no arguments say how to open the example pair; `compare` on the
bundled pair uses its bundled inputs and labels (and says so)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import inspector.cli.qt_platform as qp
from inspector.cli import main
from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.samples.settings import ALL, SampleSettings
from inspector.paths import example_inputs, example_pair


def _find_without(*missing_libs: str):
    return lambda lib: None if lib in missing_libs else f"lib{lib}.so.0"


def test_missing_xcb_libraries_give_the_apt_get_line(monkeypatch, capsys):
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":0")  # a display, so the libraries are what is checked
    monkeypatch.setattr(qp, "_reachable", lambda *_a, **_k: None)  # ... one that answers (issue 34 §6 probes it)
    monkeypatch.setattr(qp.sys, "platform", "linux")
    monkeypatch.setattr(qp.ctypes.util, "find_library", _find_without("xcb-icccm", "xcb-keysyms"))

    def no_gui(*_a, **_k):
        raise AssertionError("Qt must not start")

    monkeypatch.setattr("inspector.gui.app.run_app", no_gui)
    assert main(["gui"]) == 2
    err = capsys.readouterr().err
    assert "sudo apt-get install -y libxcb-icccm4 libxcb-keysyms1\n" in err
    assert "libxcb-icccm4, libxcb-keysyms1" in err and "xcb-cursor0" not in err


@pytest.mark.parametrize(("env", "platform", "xcb"), [
    ({}, "linux", True), ({"QT_QPA_PLATFORM": "xcb"}, "linux", True), ({"QT_QPA_PLATFORM": "offscreen"}, "linux", False),
    ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", False), ({"QT_QPA_PLATFORM": "xcb", "WAYLAND_DISPLAY": "w"}, "linux", True),
    ({}, "darwin", False), ({}, "win32", False)])  # fmt: skip
def test_only_where_qt_loads_xcb(env, platform, xcb):
    assert qp.uses_xcb(env, platform) is xcb
    problem = qp.xcb_problem(env, platform, find=_find_without("xcb-shape"))
    assert (problem is not None) is xcb
    assert qp.xcb_problem(env, platform, find=_find_without()) is None


def test_no_arguments_say_how_to_open_the_example(monkeypatch, capsys):
    monkeypatch.setattr("inspector.cli.qt_platform.xcb_problem", lambda: None)
    opened = []
    monkeypatch.setattr("inspector.gui.app.run_app", lambda f=None, q=None: opened.append((f, q)) or 0)
    assert main([]) == 0 and opened == [(None, None)]
    err = capsys.readouterr().err
    f, q = example_pair()
    assert f"tflite-inspector {f} {q}" in err and str(f.parent) in err
    assert "example_pair" not in err and "Open the example pair" in err
    for argv in (["--help"], ["info", "--help"], ["compare", "--help"]):  # where a pip install put the example
        out = pytest.raises(SystemExit, main, argv)
        assert out.value.code == 0 and f"tflite-inspector compare {f} {q}" in capsys.readouterr().out, argv


def test_compare_on_the_bundled_pair_uses_its_inputs(tmp_path, capfd):
    f, q = (str(p) for p in example_pair())
    out = tmp_path / "r.json"
    assert main(["compare", f, q, "--json", str(out)]) == 0
    err = capfd.readouterr().err
    assert "bundled example pair" in err and str(example_inputs()) in err
    got = json.loads(out.read_text())
    want = compare_models(f, q, CompareOptions(samples=SampleSettings(count=ALL, source=str(example_inputs()))))
    labels = np.load(example_inputs())["labels"]
    assert got["samples"] == want.samples == len(labels) == 192
    assert got["outputs"][0]["metrics"]["sqnr_db"] == pytest.approx(want.outputs[0].metrics.sqnr_db)


def test_report_on_the_bundled_pair_uses_its_inputs(tmp_path, capfd):
    f, q = (str(p) for p in example_pair())
    out = tmp_path / "r.json"
    assert main(["report", f, q, "--json", str(out)]) == 0
    assert "bundled example pair" in capfd.readouterr().err
    c = json.loads(out.read_text())["comparison"]
    assert c["samples"] == len(np.load(example_inputs())["labels"]) and "example_inputs.npz" in c["inputs"]
    out2 = tmp_path / "r2.json"
    assert main(["report", f, q, "--samples", "3", "--json", str(out2)]) == 0  # asked for random samples: random
    assert json.loads(out2.read_text())["comparison"]["samples"] == 3
