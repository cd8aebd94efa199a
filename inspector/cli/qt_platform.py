"""Before the GUI starts on Linux: is there a display, and are the system libraries of Qt's xcb
platform plugin there?

Without a display (DISPLAY and WAYLAND_DISPLAY unset, as over ssh or in a container) Qt fails to
connect, blames "xcb-cursor0 or libxcb-cursor0" even when it is installed, and aborts (exit 134);
`display_problem` says so in one line (exit 2) instead. Without the libraries Qt aborts with
"Could not load the Qt platform plugin xcb" and names only xcb-cursor0, whichever library is
really missing; `xcb_problem` names the missing packages and prints the exact `apt-get install`
line (exit 2). Only where Qt would load xcb: QT_QPA_PLATFORM unset or "xcb" on Linux (not
offscreen, wayland, ...).
"""

from __future__ import annotations

import ctypes.util
import os
import sys
from collections.abc import Callable

# Debian/Ubuntu package -> the library name `ctypes.util.find_library` looks up.
XCB_PACKAGES: dict[str, str] = {
    "libxcb-cursor0": "xcb-cursor",
    "libxcb-icccm4": "xcb-icccm",
    "libxcb-keysyms1": "xcb-keysyms",
    "libxcb-image0": "xcb-image",
    "libxcb-render-util0": "xcb-render-util",
    "libxcb-shape0": "xcb-shape",
    "libxkbcommon-x11-0": "xkbcommon-x11",
}


def uses_xcb(env: dict[str, str] | None = None, platform: str | None = None) -> bool:
    """Whether Qt will load its xcb plugin: Linux, QT_QPA_PLATFORM unset or xcb, and not a
    Wayland session Qt would pick instead."""
    env = dict(os.environ) if env is None else env
    if not (platform or sys.platform).startswith("linux"):
        return False
    qpa = env.get("QT_QPA_PLATFORM", "").strip().lower()
    if qpa:
        return qpa.split(":")[0] == "xcb"
    return not env.get("WAYLAND_DISPLAY")


def display_problem(env: dict[str, str] | None = None, platform: str | None = None) -> str | None:
    """One line when Qt would load xcb but no X display is set (None when it can connect)."""
    env = dict(os.environ) if env is None else env
    if not uses_xcb(env, platform) or env.get("DISPLAY", "").strip():
        return None
    return ("tflite-inspector gui: no display (DISPLAY and WAYLAND_DISPLAY are not set): run it in a desktop session "
            "or with ssh -X, or use the command line (tflite-inspector --help)")  # fmt: skip


def missing_xcb_packages(find: Callable[[str], str | None] | None = None) -> list[str]:
    """Packages of `XCB_PACKAGES` whose library the system cannot find (`find`: a stand-in
    for `ctypes.util.find_library`, for tests)."""
    look = find or ctypes.util.find_library
    return [pkg for pkg, lib in XCB_PACKAGES.items() if not look(lib)]


def install_line(missing: list[str]) -> str:
    return "sudo apt-get install -y " + " ".join(missing)


def xcb_problem(env: dict[str, str] | None = None, platform: str | None = None,
                find: Callable[[str], str | None] | None = None) -> str | None:  # fmt: skip
    """The message to print before starting the GUI, or None when it can start."""
    if not uses_xcb(env, platform):
        return None
    missing = missing_xcb_packages(find)
    if not missing:
        return None
    return (f"tflite-inspector gui: Qt's xcb platform plugin needs system libraries that are missing: "
            f"{', '.join(missing)}. Install them with:\n  {install_line(missing)}\n"
            "(or run the command line without the GUI: tflite-inspector --help)")  # fmt: skip
