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
