"""`--verbose`: each step of long work on stderr as it starts, with the seconds since the command
began ("tflite-inspector info:   3.1 s  loading the model qat.h5"), so the wait before the
first figure says what it is spent on. Steps come from the work's own progress reports (the
one `TaskState` protocol, relayed from the worker process); repeats of a message are printed once.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TextIO

from inspector.core.progress import TaskState


def add_verbose_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--verbose", action="store_true",
                   help="print each step (loading TensorFlow, loading the model, converting...) on stderr with its time")  # fmt: skip


class StepPrinter(TaskState):
    """A TaskState that prints each new message on `out` with the elapsed time."""

    def __init__(self, command: str, out: TextIO | None = None) -> None:
        super().__init__()
        self.command = command
        self.out = out
        self.t0 = time.perf_counter()
        self.last: str | None = None

    def report(self, fraction: float | None, message: str = "") -> None:
        self.check()
        if not message or message == self.last:
            return
        self.last = message
        print(f"tflite-inspector {self.command}: {time.perf_counter() - self.t0:6.1f} s  {message}", file=self.out or sys.stderr, flush=True)

    def done(self, message: str = "done") -> None:
        self.report(1.0, message)


def verbose_task(args: argparse.Namespace) -> StepPrinter | None:
    """The step printer when `--verbose` was given, else None (no reports printed)."""
    return StepPrinter(args.command) if getattr(args, "verbose", False) else None
