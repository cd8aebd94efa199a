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

import time

from PySide6.QtCore import QTimer


class EventLoopWatchdog:
    def __init__(self, interval_ms: int = 10) -> None:
        self.interval_ms = interval_ms
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
        now, cpu = time.perf_counter(), time.thread_time()
        self.longest_ms = max(self.longest_ms, (now - self._last) * 1000.0)
        if (cpu - self._last_cpu) * 1000.0 > self.longest_cpu_ms:
            self.longest_cpu_ms = (cpu - self._last_cpu) * 1000.0
            self.busiest = (self._last, now)  # its perf_counter interval (to match a profile's samples)
        self._last, self._last_cpu = now, cpu
        self.ticks += 1

    def __enter__(self) -> EventLoopWatchdog:
        self._last, self._last_cpu = time.perf_counter(), time.thread_time()
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._tick()  # the time since the last tick counts too (an action that ends blocked)
        self._timer.stop()

    def report(self) -> str:
        return (f"longest event-loop gap {self.longest_ms:.0f} ms (GUI thread busy {self.longest_cpu_ms:.0f} ms of CPU "
                f"in its busiest gap) over {self.ticks} ticks")
