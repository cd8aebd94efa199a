"""Before the GUI starts on Linux: is there a display, and are the system libraries of Qt's xcb
platform plugin there?

Without a display (DISPLAY and WAYLAND_DISPLAY unset, as over ssh or in a container) Qt fails to
connect, blames "xcb-cursor0 or libxcb-cursor0" even when it is installed, and aborts (exit 134);
`display_problem` says so in one line (exit 2) instead. Without the libraries Qt aborts with
"Could not load the Qt platform plugin xcb" and names only xcb-cursor0, whichever library is
really missing; `xcb_problem` names the missing packages and prints the exact `apt-get install`
line (exit 2). Only where Qt would load xcb: QT_QPA_PLATFORM unset or "xcb" on Linux (not
offscreen, wayland, ...).

A display that is set but that no X server answers (DISPLAY=:99, a closed ssh -X tunnel) aborts
Qt the same way: `unreachable_display_problem` connects to the display's socket first (a Unix
socket /tmp/.X11-unix/XN, its abstract twin, or TCP port 6000+N for host:N) and says so in one
line. A QT_QPA_PLATFORM that names no platform plugin Qt has (`bogus`) aborts too:
`platform_problem` reads the plugins' keys (their metadata, without loading them or creating
the QApplication) and names the ones there are.
"""

from __future__ import annotations

import ctypes.util
import os
import re
import socket
import sys
from collections.abc import Callable, Sequence
from typing import Any

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


_HELP = "or use the command line (tflite-inspector --help)"


def requested_platforms(env: dict[str, str] | None = None) -> list[str]:
    """The platform plugins QT_QPA_PLATFORM asks for, in Qt's order ("wayland;xcb", options
    after ':' dropped); empty when unset."""
    env = dict(os.environ) if env is None else env
    qpa = env.get("QT_QPA_PLATFORM", "").strip()
    return [p.split(":")[0].strip().lower() for p in qpa.split(";") if p.split(":")[0].strip()]


def uses_xcb(env: dict[str, str] | None = None, platform: str | None = None) -> bool:
    """Whether Qt will load its xcb plugin: Linux, QT_QPA_PLATFORM unset or xcb, and not a
    Wayland session Qt would pick instead."""
    env = dict(os.environ) if env is None else env
    if not (platform or sys.platform).startswith("linux"):
        return False
    wanted = requested_platforms(env)
    if wanted:
        return wanted[0] == "xcb"
    return not env.get("WAYLAND_DISPLAY")


def available_platforms() -> list[str] | None:
    """The keys of Qt's platform plugins (xcb, offscreen, wayland, ...), read from their metadata
    without loading them; None when they cannot be listed (then Qt is left to decide)."""
    try:
        from PySide6.QtCore import QLibraryInfo, QPluginLoader
    except ImportError:
        return None
    folders = [os.path.join(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath), "platforms")]
    extra = os.environ.get("QT_QPA_PLATFORM_PLUGIN_PATH")
    if extra:
        folders.insert(0, extra)
    for path in os.environ.get("QT_PLUGIN_PATH", "").split(os.pathsep):
        if path:
            folders.append(os.path.join(path, "platforms"))
    keys: list[str] = []
    for folder in folders:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            meta: Any = QPluginLoader(os.path.join(folder, name)).metaData()  # a dict-like QJsonObject
            keys += [str(k).lower() for k in (meta.get("MetaData") or {}).get("Keys", [])]
    return sorted(set(keys)) or None


def platform_problem(env: dict[str, str] | None = None, available: Sequence[str] | None = None) -> str | None:
    """One line when QT_QPA_PLATFORM names no platform plugin Qt has (Qt would abort)."""
    wanted = requested_platforms(env)
    if not wanted:
        return None
    have = available_platforms() if available is None else list(available)
    if have is None or any(w in have for w in wanted):
        return None
    value = (dict(os.environ) if env is None else env).get("QT_QPA_PLATFORM", "").strip()
    return (f"tflite-inspector gui: QT_QPA_PLATFORM={value} names no Qt platform plugin here (there are: {', '.join(have)}): "
            f"unset it or choose one of them, {_HELP}")  # fmt: skip


_DISPLAY = re.compile(r"^(?:(?P<proto>[a-z]+)/)?(?P<host>[^:]*):(?P<number>\d+)(?:\.\d+)?$")


def display_address(display: str) -> tuple[int, object] | None:
    """Where X display `display` listens: (socket family, address) for a local Unix socket
    (':N', 'unix:N') or TCP ('host:N', port 6000 + N); None when the name is not one."""
    m = _DISPLAY.match(display.strip())
    if m is None:
        return None
    host, number = m.group("host"), int(m.group("number"))
    if host in ("", "unix") and m.group("proto") in (None, "unix", "local"):
        return socket.AF_UNIX, f"/tmp/.X11-unix/X{number}"
    return socket.AF_INET, (host or "localhost", 6000 + number)


def _reachable(family: int, address: object, timeout: float = 2.0) -> str | None:
    """None when something accepts a connection at `address`, else the reason it does not."""
    addresses = [address]
    if family == socket.AF_UNIX and sys.platform.startswith("linux"):
        addresses.insert(0, "\0" + str(address))  # the abstract socket X servers also listen on
    reason = "nothing listens there"
    for a in addresses:
        try:
            if family == socket.AF_INET:
                with socket.create_connection(a, timeout=timeout):  # type: ignore[arg-type]  # `address` is a (host, port) pair here: its type is the family's
                    return None
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(timeout)
                s.connect(a)  # type: ignore[arg-type]  # a path (or abstract name) for AF_UNIX: object by the signature above
                return None
        except FileNotFoundError:
            reason = f"no X server socket {address}"
        except OSError as e:
            reason = e.strerror or type(e).__name__
    return reason


def unreachable_display_problem(env: dict[str, str] | None = None, platform: str | None = None,
                                reach: Callable[[int, object], str | None] | None = None) -> str | None:  # fmt: skip
    """One line when Qt would load xcb and DISPLAY is set, but no X server answers there."""
    env = dict(os.environ) if env is None else env
    display = env.get("DISPLAY", "").strip()
    if not uses_xcb(env, platform) or not display:
        return None
    where = display_address(display)
    if where is None:
        return f"tflite-inspector gui: DISPLAY={display} is not an X display name: set it like :0 or host:10.0, {_HELP}"
    reason = (reach or _reachable)(*where)
    if reason is None:
        return None
    return (f"tflite-inspector gui: the X display {display} does not answer ({reason}): run it in a desktop session "
            f"or with ssh -X, {_HELP}")  # fmt: skip


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
