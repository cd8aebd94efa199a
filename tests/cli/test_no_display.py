"""Issue 26 §14: started without a display, the app exits 2 with one line saying so (before: Qt
aborted with exit 134 and "xcb-cursor0 or libxcb-cursor0 is needed" although it was installed;
or, where an xcb library was missing, the apt-get lines for it, which do not help without a
display either)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import inspector.cli.qt_platform as qp

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Qt loads xcb on Linux only")
@pytest.mark.parametrize("argv", [[], ["gui"]])
def test_no_display_is_one_line_and_exit_2(argv, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["PYTHONPATH"] = str(REPO)
    r = subprocess.run([sys.executable, "-m", "inspector", *argv], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)  # fmt: skip
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("tflite-inspector gui: no display (DISPLAY and WAYLAND_DISPLAY are not set)")
    assert "xcb" not in r.stderr and "Traceback" not in r.stderr and r.stdout == ""


@pytest.mark.parametrize(("env", "platform", "says"), [
    ({}, "linux", True), ({"DISPLAY": ":0"}, "linux", False), ({"DISPLAY": " "}, "linux", True),
    ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", False), ({"QT_QPA_PLATFORM": "offscreen"}, "linux", False),
    ({"QT_QPA_PLATFORM": "xcb"}, "linux", True), ({"QT_QPA_PLATFORM": "xcb", "DISPLAY": ":1"}, "linux", False),
    ({}, "darwin", False), ({}, "win32", False)])  # fmt: skip
def test_display_problem_only_where_xcb_has_no_display(env, platform, says):
    problem = qp.display_problem(env, platform)
    assert (problem is not None) is says
    if says:
        assert "\n" not in problem and "no display" in problem
