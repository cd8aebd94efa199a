"""The isolated error inside a comparison: its models, their statistics, and how the two threads
share the work.

The isolated model costs about one more float inference per sample, and its statistics as much
as the accumulated ones. Run after the statistics on the calling thread (as it was) it tripled the
time per sample: that thread then did the fast model, the statistics and all of the isolated
work while the other ran the slow model alone. Here the isolated model is cut into PARTS models
of consecutive ops of about equal cost (`isolated.build_isolated_parts`); the worker thread runs
the first `share` parts of sample k (and their statistics) right after the slow model of sample
k+1, the calling thread the rest after the fast model and the accumulated statistics. `balance`
moves one part from one thread to the other when one of them waited for the other by more than
that part takes (measured), so the split follows the machine and the pair (a float model four
times slower than its int8 twin, or the reference kernels, where int8 is the slower one).

A refusal of the isolated model (the runtime cannot run it) does not fail the comparison: the
accumulated error is still measured, and every layer's `isolated_note` says what was refused.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from inspector.core.compare.isolated import (
    REFUSED_PREFIX,
    IsolatedPlan,
    IsolatedRunner,
    build_isolated_parts,
)
from inspector.core.compare.pairing import Pairing
from inspector.core.compare.plan import LayerJob
from inspector.core.errors import RuntimeFailure
from inspector.core.stats.batch_sums import BatchStats
from inspector.core.stats.metrics import Metrics
from inspector.core.tflite.model import Model

if TYPE_CHECKING:
    from inspector.core.compare.result import ComparisonResult

PARTS = 4  # with two threads; one part with one
SMOOTHING = 0.5  # weight of the newest sample in the measured imbalance


class IsolatedWork:
    def __init__(self, fm: Model, qm: Model, pairing: Pairing, layers: list[LayerJob], threaded: bool,
                 batch: Callable[[list[tuple[Any, ...]]], BatchStats]) -> None:
        """`batch(jobs)`: the BatchStats of (stats, float tensor, quant tensor, quant) jobs."""
        self.fm = fm
        self.plans: list[IsolatedPlan] = build_isolated_parts(fm, qm, pairing, PARTS if threaded else 1)
        self.float_ops = {q: f for p in self.plans for q, f in p.float_ops.items()}
        self.notes = self.plans[0].notes if self.plans else {}
        self.batches = [batch([(j.iso_stats, j.float_tensor, j.quant_tensor, j.quant) for j in layers
                               if j.op_index in p.float_ops and j.iso_stats is not None]) for p in self.plans]  # fmt: skip
        self.share = len(self.plans) // 2 if threaded else 0  # parts the worker thread runs
        self.seconds = [0.0] * len(self.plans)  # each part's time (run and statistics), smoothed
        self.imbalance = 0.0  # smoothed: worker thread's time minus the calling thread's, per sample
        self.failure: str | None = None
        self._lock = threading.Lock()

    @property
    def parts(self) -> int:
        return len(self.plans)

    def runners(self, runtime: str) -> list[IsolatedRunner]:
        """One interpreter per part, for one set of interpreters (made at its first run)."""
        return [IsolatedRunner(self.fm, p, runtime) for p in self.plans]

    def run(self, runners: list[IsolatedRunner], quant_values: dict[int, np.ndarray], lo: int, hi: int) -> None:
        """Parts lo..hi-1 of one sample: run and accumulate (nothing once the runtime refused)."""
        for k in range(lo, hi):
            if self.failure is not None:
                return
            t0 = time.perf_counter()
            try:
                iv = runners[k].run(quant_values)
            except RuntimeFailure as e:
                with self._lock:
                    self.failure = self.failure or str(e)
                return
            self.batches[k].add(iv, quant_values)
            del iv
            dt = time.perf_counter() - t0
            self.seconds[k] = dt if not self.seconds[k] else (1 - SMOOTHING) * self.seconds[k] + SMOOTHING * dt

    def balance(self, worker_wait: float) -> None:
        """After a sample: `worker_wait` = when the worker thread finished minus when the calling
        thread did (positive: the calling thread waited). A part of cost c moved from the later
        thread to the other changes that difference by 2c: it is moved when the difference
        exceeds c (then it cannot move back at once)."""
        self.imbalance = (1 - SMOOTHING) * self.imbalance + SMOOTHING * worker_wait
        if self.share > 0 and self.imbalance > self.seconds[self.share - 1] > 0:
            self.share -= 1
            self.imbalance = 0.0
        elif self.share < self.parts and -self.imbalance > self.seconds[self.share] > 0:
            self.share += 1
            self.imbalance = 0.0

    def finish(self) -> None:
        if self.failure is None:
            for b in self.batches:
                b.finish()

    def layer(self, job: LayerJob) -> tuple[Metrics | None, str | None]:
        """(isolated metrics, note why there are none) of one layer."""
        if self.failure is not None:
            return None, self.failure
        if job.op_index in self.float_ops and job.iso_stats is not None:
            return job.iso_stats.result(), None
        return None, self.notes.get(job.op_index, "no float op to run in isolation")


def isolated_refusal(result: ComparisonResult) -> str | None:
    """The runtime's refusal of the isolated model, when a comparison (a ComparisonResult) went
    on without its own error because of one, else None."""
    if not result.isolated:
        return None
    notes = {lay.isolated_note for lay in result.layers}
    note = next(iter(notes)) if len(notes) == 1 else None
    return note if note is not None and note.startswith(REFUSED_PREFIX) else None
