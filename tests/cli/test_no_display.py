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


def _free_display() -> int:
    """A display number no X server on this machine serves (no socket file, nothing on TCP)."""
    for n in range(4242, 4300):
        if qp._reachable(*qp.display_address(f":{n}")) is not None:
            return n
    pytest.skip("every probed display number answers")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Qt loads xcb on Linux only")
@pytest.mark.parametrize("kind", ["unreachable", "bogus-platform"])
def test_set_but_unusable_display_is_one_line_and_exit_2(kind, tmp_path):
    """Issue 34 §6: DISPLAY=:99 with no X server, or QT_QPA_PLATFORM=bogus, aborted Qt (exit 134,
    a hint about libxcb-cursor0); now one line naming the display or the platform, exit 2."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["PYTHONPATH"] = str(REPO)
    if kind == "unreachable":
        env["DISPLAY"] = f":{_free_display()}"
        says = f"tflite-inspector gui: the X display {env['DISPLAY']} does not answer (no X server socket"
    else:
        env["QT_QPA_PLATFORM"] = "bogus"
        says = "tflite-inspector gui: QT_QPA_PLATFORM=bogus names no Qt platform plugin here (there are: "
    r = subprocess.run([sys.executable, "-m", "inspector", "gui"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)  # fmt: skip
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(says), r.stderr
    assert "xcb-cursor" not in r.stderr and "Traceback" not in r.stderr and r.stdout == ""
    if kind == "bogus-platform":
        assert "offscreen" in lines[0] and "xcb" in lines[0]  # the plugins there are, read from their metadata


def test_display_addresses_and_a_listening_display_passes(tmp_path):
    assert qp.display_address(":0") == (qp.socket.AF_UNIX, "/tmp/.X11-unix/X0")
    assert qp.display_address("unix:3.1") == (qp.socket.AF_UNIX, "/tmp/.X11-unix/X3")
    assert qp.display_address("localhost:10.0") == (qp.socket.AF_INET, ("localhost", 6010))
    assert qp.display_address("foo") is None
    env = {"DISPLAY": "foo"}
    assert "not an X display name" in qp.unreachable_display_problem(env, "linux")
    # something listening at the display's address: no problem (Qt is left to talk to it)
    with qp.socket.socket(qp.socket.AF_INET) as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        assert qp._reachable(qp.socket.AF_INET, ("127.0.0.1", port)) is None
    assert qp.unreachable_display_problem({"DISPLAY": ":7"}, "linux", reach=lambda f, a: None) is None
    assert qp.unreachable_display_problem({"DISPLAY": ":7", "QT_QPA_PLATFORM": "offscreen"}, "linux") is None


@pytest.mark.parametrize(("value", "says"), [("bogus", True), ("offscreen", False), ("bogus;xcb", False),
                                             ("offscreen:fontengine=freetype", False), ("", False)])  # fmt: skip
def test_platform_problem_reads_qt_platform_as_qt_does(value, says):
    problem = qp.platform_problem({"QT_QPA_PLATFORM": value}, available=["offscreen", "xcb"])
    assert (problem is not None) is says
    if says:
        assert "\n" not in problem and "offscreen, xcb" in problem
