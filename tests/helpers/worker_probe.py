"""Jobs for the worker-process tests (importable by a fork server's child, unlike `-c` code)."""

from __future__ import annotations

import os
import signal
import sys


def where(task=None) -> tuple[int, bool]:
    """(the worker's parent pid, whether `json` was imported before the job)."""
    return os.getppid(), "json" in sys.modules


def crash(task=None) -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


def write_cache_file(path: str, task=None) -> bool:
    """Write `path` through the one writing helper, as the Keras twin cache does in the worker;
    whether it is on disk when the job returns."""
    from inspector.core.writing import atomic_write_bytes

    atomic_write_bytes(path, b"cache")
    return os.path.exists(path)
