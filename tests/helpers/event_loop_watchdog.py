"""A test watchdog of the GUI thread: a 10 ms QTimer records the longest gap between its ticks
while an action runs (a gap is the time the event loop was blocked by whatever ran on it).

    with EventLoopWatchdog() as dog:
        with qtbot.waitSignal(done, timeout=...):
            start_the_action()
    assert dog.longest_ms < 250, dog.report()

`longest_cpu_ms` is the GUI thread's own CPU time over its busiest gap: the work that ran on
the event loop in one go, whether or not the operating system also took the CPU away from
the process for a while (on a loaded shared machine a wall-clock gap can be the scheduler's).
"""

from __future__ import annotations

import cProfile
import gc
import io
import pstats
import time

from PySide6.QtCore import QTimer

# The one bound of every watchdog test (issue 35: "nothing blocks the event loop for more than
# 100 ms"), on `longest_cpu_ms`: the GUI thread's own work in its busiest gap, on the machine class
# the issue measured on (2 cores, quiet). `bound_ms()` scales it to the machine the test runs on.
BOUND_MS = 100.0
# CPU time of `_reference_work` (the least of 9) on that machine: 2 cores, load about 1.
REFERENCE_WORK_MS = 25.0
MAX_SCALE = 2.0  # a machine twice as slow still fails a freeze of 200 ms


def _reference_work() -> int:
    """The GUI thread's kind of work in miniature: small Python calls, dicts, number formatting."""
    cells: dict[int, tuple[str, float]] = {}
    for i in range(40_000):
        v = (i % 997) * 0.37 - 50.0
        cells[i] = (f"{v:.2f}", max(0.0, min(1.0, (30.0 - v) / 20.0)))
    return sum(len(text) for text, _ in cells.values())


def machine_scale(rounds: int = 9) -> float:
    """How much longer this machine takes for the GUI thread's kind of work than the machine the
    bound was set on (CPU time, the least of `rounds`: its speed, not a moment's hiccup): 1 on
    that machine or a faster one, at most MAX_SCALE. A shared CI machine measured 1.5-2x the
    quiet figures of the same actions, in CPU time as well as wall-clock."""
    times = []
    was_on = gc.isenabled()  # off in a GUI process (collections on a GUI timer): left off
    gc.disable()  # a collection's cost is the heap's size (a test's models), not the machine's speed
    try:
        for _ in range(rounds):
            t = time.thread_time()
            _reference_work()
            times.append((time.thread_time() - t) * 1000.0)
    finally:
        if was_on:
            gc.enable()
    return min(MAX_SCALE, max(1.0, min(times) / REFERENCE_WORK_MS))


def bound_ms() -> float:
    """BOUND_MS on the machine the test runs on (`machine_scale`)."""
    return BOUND_MS * machine_scale()


class EventLoopWatchdog:
    def __init__(self, interval_ms: int = 10, profile: bool = False) -> None:
        """`profile`: keep a cProfile (in GUI-thread CPU time) of the busiest gap alone, in
        `busiest_profile` (the work that held the loop, not the whole action's)."""
        self.interval_ms = interval_ms
        self.profile = profile
        self.busiest_profile = ""
        self.bound = BOUND_MS  # what a test holds it to (`bound_ms()` where the machine is measured)
        self._prof: cProfile.Profile | None = None
        self.longest_ms = 0.0
        self.longest_cpu_ms = 0.0  # the GUI thread's CPU time in its busiest gap
        self.busiest = (0.0, 0.0)
        self.ticks = 0
        self._last = 0.0
        self._last_cpu = 0.0
        self._timer = QTimer()
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        if self._prof is not None:
            self._prof.disable()
        now, cpu = time.perf_counter(), time.thread_time()
        self.longest_ms = max(self.longest_ms, (now - self._last) * 1000.0)
        if (cpu - self._last_cpu) * 1000.0 > self.longest_cpu_ms:
            self.longest_cpu_ms = (cpu - self._last_cpu) * 1000.0
            self.busiest = (self._last, now)  # its perf_counter interval (to match a profile's samples)
            if self._prof is not None:
                out = io.StringIO()
                pstats.Stats(self._prof, stream=out).sort_stats("cumulative").print_stats(r"inspector|paintEvent|garbage_collector", 45)
                self.busiest_profile = out.getvalue()
        self._restart_profile()
        self._last, self._last_cpu = time.perf_counter(), time.thread_time()
        self.ticks += 1

    def _restart_profile(self) -> None:
        if self.profile:
            self._prof = cProfile.Profile(time.thread_time)
            self._prof.enable()

    def __enter__(self) -> EventLoopWatchdog:
        self._last, self._last_cpu = time.perf_counter(), time.thread_time()
        self._timer.start()
        self._restart_profile()
        return self

    def __exit__(self, *exc) -> None:
        self._tick()  # the time since the last tick counts too (an action that ends blocked)
        self._timer.stop()
        if self._prof is not None:
            self._prof.disable()
            self._prof = None

    def report(self) -> str:
        return (f"longest event-loop gap {self.longest_ms:.0f} ms (GUI thread busy {self.longest_cpu_ms:.0f} ms of CPU "
                f"in its busiest gap) over {self.ticks} ticks")
