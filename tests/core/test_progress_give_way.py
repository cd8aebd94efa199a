"""`core.progress.give_way`: long loops in background threads wait while the gated thread (a window's) is
busy, at most `max_wait_s` per busy stretch; its owner never waits; no gate, no wait."""

from __future__ import annotations

import threading
import time

from inspector.core.progress import EVERY, Gate, give_way, paced, set_gate


def _in_thread(fn) -> float:
    """Seconds `fn` took in another thread."""
    took: list[float] = []

    def run() -> None:
        t0 = time.perf_counter()
        fn()
        took.append(time.perf_counter() - t0)

    t = threading.Thread(target=run)
    t.start()
    t.join(10)
    return took[0]


def test_a_background_loop_waits_while_the_gated_thread_is_busy():
    gate = Gate()
    set_gate(gate)
    try:
        gate.busy()
        threading.Timer(0.05, gate.idle).start()
        assert 0.04 <= _in_thread(give_way) < 0.09  # held until the owner went idle
        assert _in_thread(give_way) < 0.01  # idle: goes on at once
        give_way()  # the owner itself never waits
    finally:
        set_gate(None)


def test_a_long_busy_stretch_holds_a_loop_once_for_at_most_max_wait():
    gate = Gate()
    gate.max_wait_s = 0.05
    set_gate(gate)
    try:
        gate.busy()  # and never idle (the owner waits for something else)
        took = _in_thread(lambda: [None for _ in paced(range(10 * EVERY))])  # ten calls of give_way
        assert 0.045 <= took < 0.2, took  # the first waited out 0.05 s, the others went on
        gate.busy()  # a new busy stretch: held again
        assert _in_thread(give_way) >= 0.045
    finally:
        set_gate(None)


def test_paced_gives_way_every_so_many_items_and_nothing_without_a_gate():
    import inspector.core.progress as gw

    calls: list[int] = []

    class Counting(Gate):
        def give_way(self) -> None:
            calls.append(1)

    set_gate(Counting())
    try:
        assert list(paced(range(100), 32)) == list(range(100))
    finally:
        set_gate(None)
    assert len(calls) == 4  # before items 0, 32, 64, 96
    assert gw._gate is None and list(paced(range(5))) == [0, 1, 2, 3, 4]
