"""Crash recovery: offer the last session after the app ended abnormally.

Each running app instance writes a marker `running-<pid>.json` at start and autosaves its
session to `autosave-<pid>.tqi.json`; a clean exit removes both. At the next start, a
marker whose process is gone means that instance crashed (or was killed): its autosave is
offered for restore.

    rec = CrashRecovery()
    for r in rec.start():          # leftovers of dead instances, newest first
        ask the user; then rec.restore(r) or rec.discard(r)
    ... rec.autosave(state) every few minutes / after each result ...
    rec.clean_exit()               # at a normal quit
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.core.errors import InspectorError
from inspector.core.state.session import SUFFIX, load_session, save_session
from inspector.core.writing import atomic_write_text


def state_dir() -> Path:
    """Per-user folder for markers and autosaves (TQI_STATE_DIR overrides it)."""
    if os.environ.get("TQI_STATE_DIR"):
        return Path(os.environ["TQI_STATE_DIR"])
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local")) / "tflite-inspector"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "tflite-inspector"
    return Path(os.environ.get("XDG_STATE_HOME", Path.home() / ".local" / "state")) / "tflite-inspector"


def autosave_path(pid: int | None = None, base: Path | None = None) -> Path:
    return (base or state_dir()) / f"autosave-{pid or os.getpid()}{SUFFIX}"


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    if sys.platform == "win32":  # os.kill(pid, 0) would terminate the process on Windows
        import ctypes

        handle = ctypes.windll.kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        code = ctypes.c_ulong()
        ctypes.windll.kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        ctypes.windll.kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class Recoverable:
    pid: int
    started_at: float
    autosave: Path
    saved_at: float  # modification time of the autosave


class CrashRecovery:
    def __init__(self, base: Path | None = None, pid: int | None = None) -> None:
        self.base = Path(base) if base else state_dir()
        self.pid = pid or os.getpid()

    @property
    def marker(self) -> Path:
        return self.base / f"running-{self.pid}.json"

    @property
    def autosave_file(self) -> Path:
        return autosave_path(self.pid, self.base)

    def start(self) -> list[Recoverable]:
        """Look for crashed instances, then mark this one as running."""
        found = self.recoverable()
        atomic_write_text(self.marker, json.dumps({"pid": self.pid, "started_at": time.time()}))
        return found

    def recoverable(self) -> list[Recoverable]:
        out = []
        for marker in self.base.glob("running-*.json"):
            try:
                pid = int(marker.stem.split("-", 1)[1])
            except ValueError:
                continue
            if pid == self.pid or pid_alive(pid):
                continue
            try:
                started = float(json.loads(marker.read_text()).get("started_at", 0))
            except (OSError, ValueError, AttributeError):
                started = 0.0
            auto = autosave_path(pid, self.base)
            if auto.is_file():
                out.append(Recoverable(pid, started, auto, auto.stat().st_mtime))
            else:  # crashed before anything was saved: nothing to offer
                _unlink(marker)
        return sorted(out, key=lambda r: r.saved_at, reverse=True)

    def autosave(self, state: dict[str, Any]) -> None:
        save_session(self.autosave_file, state)

    def restore(self, rec: Recoverable) -> dict[str, Any]:
        """The crashed instance's session (raises SessionFileError if the autosave is damaged)."""
        return load_session(rec.autosave)

    def discard(self, rec: Recoverable) -> None:
        _unlink(rec.autosave)
        _unlink(self.base / f"running-{rec.pid}.json")

    def clean_exit(self) -> None:
        _unlink(self.autosave_file)
        _unlink(self.marker)


def _unlink(p: Path) -> None:
    try:
        p.unlink()
    except FileNotFoundError:
        pass
    except OSError as e:
        raise InspectorError(f"cannot remove a recovery file ({e.strerror or e})", str(p)) from None
