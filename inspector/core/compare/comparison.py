"""Layerwise comparison of a float model and its quantized twin = pairing + runner + metrics.

Both models run as rewritten copies exposing every intermediate tensor (`runner`). With two
threads (the default) sample k+1 runs on a second set of interpreters while sample k's
statistics accumulate for every layer in one native call (`stats.batch_sums`; numpy fallback in
`stats.tensor_sums`); the interpreter and the kernel release the GIL. Two threads for two cores, never
three: the slower model (timed on the first sample) runs in a worker thread, back to back, while
the calling thread runs the faster model and then the statistics, so the slower model's thread
is never held up by a third runnable thread (with the float model twice as slow as the int8 one,
this took MobileNetV2 from 1.7x to about 1.4x plain inference of both on two threads). A
completed run keeps its interpreter sets for the next run of the same pair in this process (the
worker process, for the open pair; small models only), so a repeated comparison starts at once. Values are read
as views and dropped after each sample, so memory stays flat however many samples run.
Layers are the outputs of the quantized model's ops other than QUANTIZE/DEQUANTIZE,
in execution order, that have a float counterpart; the rest is listed as unmatched.

Accumulated error: both models end to end. Isolated error (`isolated=True`, the default): see
`isolated.py`; its parts share the two threads with the models (`isolated_work.py`).
`compare_models` is a top-level function of picklable arguments, so it can run in a worker
process; its result is picklable too.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from inspector.core.compare import isolated_work
from inspector.core.compare.diagnosis import with_diagnoses
from inspector.core.compare.equalized import divided, float_divisors
from inspector.core.compare.inside import channel_stats, slice_stats
from inspector.core.compare.isolated import IsolatedRunner
from inspector.core.compare.isolated_work import IsolatedWork
from inspector.core.compare.options import (
    CompareOptions as CompareOptions,  # re-exported: callers import it from here
)
from inspector.core.compare.pair_check import PairCheck, check_pair
from inspector.core.compare.pairing import Pairing, check_correspondence, pair_models
from inspector.core.compare.plan import LayerJob, plan_layers
from inspector.core.compare.reference import twin_reference
from inspector.core.compare.result import (
    ComparisonResult,
    KeptValues,
    LayerResult,
    OutputResult,
    PerSampleOutputs,
)
from inspector.core.compare.task_kind import output_kinds
from inspector.core.errors import InputError
from inspector.core.progress import TaskState, as_task
from inspector.core.runtime.model_state import state_note
from inspector.core.runtime.runner import RUNTIMES, ModelRunner, check_runtime
from inspector.core.samples.sources import open_source
from inspector.core.samples.spec import Sample, feed
from inspector.core.stats.batch_sums import BatchStats
from inspector.core.stats.tensor_sums import dequantized
from inspector.core.tflite.model import Model, load_model
from inspector.core.tflite.rewrite import cached, file_key
from inspector.core.tflite.signatures import select_signature

KEEP_POINTS = 4096  # per kept tensor, over all samples
PER_SAMPLE_OUTPUT_LIMIT = 1 << 16  # output elements per sample above which outputs are not kept
DOUBLE_BUFFER_MAX_BYTES = 128 * 2**20  # both files above this: one interpreter set (memory over overlap)
KEEP_INTERPRETERS_MAX_BYTES = 64 * 2**20  # both files up to this: a repeated comparison reuses the interpreters
_idle_slots: dict[tuple[Any, ...], list[_Slot]] = {}  # the last compared pair's idle interpreter sets
_idle_lock = threading.Lock()
Running = dict[int, np.ndarray] | Future[dict[int, np.ndarray]]  # one model's values, or their future


def compare_models(
    float_path: str,
    quant_path: str,
    options: CompareOptions | None = None,
    task: TaskState | None = None,
    pair_check: PairCheck | None = None,
    check: bool = True,
) -> ComparisonResult:
    """Run both models over the samples and accumulate per-layer error statistics; reports
    "sample k of n" to `task` after each sample and stops (Cancelled) when it is cancelled.
    `pair_check`: the check of this pair (and signature) the caller already made, so it is not
    made again (`check_pair` reads every paired weight). `check=False`: the caller checks the
    pair itself while this runs (the command line) and fills `pair_check` in; it stays None here."""
    opts = options or CompareOptions()
    task = as_task(task)
    check_runtime(opts.runtime)
    t0 = time.perf_counter()
    fm, qm = _load(float_path), _load(quant_path)
    fm, qm = select_signature(fm, opts.signature), select_signature(qm, opts.signature)
    check_correspondence(fm, qm)
    pairing = pair_models(fm, qm)
    plan = plan_layers(fm, qm, pairing)
    equalized = float_divisors(qm, pairing)  # A's values of an equalized P's output ÷ s (`equalized.py`)
    source = open_source(fm, qm, opts.samples)
    if source.count - opts.samples_from <= 0:
        raise InputError("no samples to run", opts.samples.source)
    count = source.count - opts.samples_from
    pool = ThreadPoolExecutor(max_workers=2) if opts.threads > 1 else None
    iso = IsolatedWork(fm, qm, pairing, plan.layers, pool is not None, lambda jobs: _batch(jobs, fm, qm)) if opts.isolated else None
    # Two sets of interpreters when threaded: sample k's statistics are computed while both
    # models already run sample k+1 (views of one set stay valid while the other runs).
    # Big models run on one set only: each set holds its own packed copy of every weight.
    # A stream (state carried across samples) runs on one set: the samples in order, one state.
    carry = opts.samples.carry_state
    double = pool is not None and not carry and fm.size_bytes + qm.size_bytes <= DOUBLE_BUFFER_MAX_BYTES
    slot_key = _slot_key(fm, qm, opts)
    slots: list[_Slot] = [_take_slot(slot_key, lambda: _Slot(fm, qm, opts.runtime, iso))]  # the second: when needed
    slots[0].carry_state(carry)
    keep = {j.quant_tensor: _Keeper(j, count, opts.samples.seed) for j in plan.layers if j.quant_tensor in opts.keep_values}
    store_outputs = sum(fm.main.tensors[o.float_tensor].num_elements for o in plan.outputs) <= PER_SAMPLE_OUTPUT_LIMIT
    per_f: list[tuple[np.ndarray, ...]] = []
    per_q: list[tuple[np.ndarray, ...]] = []
    labels, sources = [], []
    jobs = [(j.stats, j.float_tensor, j.quant_tensor, j.quant) for j in plan.layers]
    jobs += [(o.stats, o.float_tensor, o.quant_tensor, o.quant) for o in plan.outputs]
    batch = _batch(jobs, fm, qm)
    done = 0
    samples = itertools.islice(iter(source), opts.samples_from, None)
    slow: str | None = None  # "f" | "q": the model the worker thread runs (double buffering)
    main_end = 0.0  # when the calling thread finished its part of the last sample
    try:
        sample = next(samples, None)
        if sample is not None and double:
            running = slots[0].start(None, sample)  # timed: which model is the slower
            slow = _slower(slots[0].seconds)
        elif sample is not None:
            running = slots[0].start(pool, sample)
        k = 0
        while sample is not None:
            task.check()
            slot = slots[k % 2] if double else slots[0]
            fv, qv = slot.values(running)
            fv = divided(fv, equalized)
            del running
            if iso is not None and double and k > 0:
                iso.balance(slot.worker_end - main_end)
            nxt = next(samples, None)
            shared = 0  # isolated parts of this sample the worker thread runs
            if nxt is not None and double:
                if len(slots) == 1:  # the second set, made only when needed (k is even)
                    slots.append(_take_slot(slot_key, lambda: _Slot(fm, qm, opts.runtime, iso)))
                    slots[1].carry_state(False)
                shared = iso.share if iso is not None else 0
                after = (lambda s=slot, v=qv, n=shared: iso.run(s.iso, v, 0, n)) if iso is not None and shared else None
                running = slots[(k + 1) % 2].start(pool, nxt, slow, after)  # the faster model runs here, now
            batch.add(fv, qv)
            if iso is not None:
                iso.run(slot.iso, qv, shared, iso.parts)
            for kp in keep.values():
                kp.add(fv, qv)
            if store_outputs:
                per_f.append(tuple(np.array(fv[o.float_tensor], np.float32) for o in plan.outputs))
                per_q.append(tuple(dequantized(qv[o.quant_tensor], o.quant).astype(np.float32) for o in plan.outputs))
            labels.append(sample.label)
            sources.append(sample.source)
            del fv, qv
            if nxt is not None and not double:
                running = slot.start(pool, nxt)  # both models still run side by side in the pool
            sample = nxt
            k += 1
            done += 1
            main_end = time.perf_counter()
            task.report(done / count, f"sample {done} of {count}")
    finally:
        if pool:
            pool.shutdown(cancel_futures=True)
    # Completed (no views of the interpreters left): keep them for the next run of this pair.
    _keep_slots(slot_key, slots, fm.size_bytes + qm.size_bytes)
    batch.finish()
    if iso is not None:
        iso.finish()
    layers = with_diagnoses(fm, qm, tuple(_layer_result(j, iso) for j in plan.layers))
    outputs = tuple(
        OutputResult(o.name, o.float_tensor, o.quant_tensor, o.stats.result(),
                     channel_stats(o.stats, len(qm.main.tensors[o.quant_tensor].shape)),
                     slice_stats(o.stats, o.concat, len(qm.main.tensors[o.quant_tensor].shape)))
        for o in plan.outputs
    )
    return ComparisonResult(
        float_path=str(float_path),
        quant_path=str(quant_path),
        runtime=opts.runtime,
        kernels=RUNTIMES[opts.runtime],
        samples=done,
        layers=layers,
        unmatched=tuple(plan.unmatched),
        outputs=outputs,
        isolated=opts.isolated,
        seed=opts.samples.seed,
        inputs=source.description + (f"; only samples {opts.samples_from}-{source.count - 1} (held out from calibration)" if opts.samples_from else ""),
        labels=tuple(labels),
        sources=tuple(sources),
        class_names=source.class_names,
        per_sample_outputs=PerSampleOutputs(tuple(o.name for o in plan.outputs), tuple(per_f), tuple(per_q))
        if store_outputs
        else None,
        kept={t: k.result() for t, k in keep.items()},
        elapsed_s=time.perf_counter() - t0,
        task_kind=opts.task_kind,
        output_kinds=output_kinds(fm, qm, [(o.float_tensor, o.quant_tensor) for o in plan.outputs],
                                  any(v is not None for v in labels) or bool(source.class_names), opts.task_kind),
        samples_are_random=opts.samples.source is None,
        pair_check=pair_check if pair_check is not None or not check else _pair_check(fm, qm, pairing),
        signature=opts.signature,
        reference=twin_reference(fm, pairing),
        state=state_note((fm, qm), carry),
    )


def _load(path: str) -> Model:
    """Parsed models are kept per process (keyed by path, size and mtime) for repeated runs."""
    try:
        key = ("model", *file_key(str(path)))
    except OSError:
        return load_model(path)  # let the reader report the problem
    return cached(key, lambda: load_model(path))  # type: ignore[return-value]  # the cache returns what the builder made


class _Slot:
    """One float and one quantized interpreter (and the isolated model's parts), run together."""

    def __init__(self, fm: Model, qm: Model, runtime: str, iso: IsolatedWork | None) -> None:
        self.fm, self.qm = fm, qm
        self.f = ModelRunner(fm, runtime)
        self.q = ModelRunner(qm, runtime)
        self.iso: list[IsolatedRunner] = []  # used only with `iso`
        self.seconds = (0.0, 0.0)  # the last unpooled run of each model
        self.worker_end = 0.0  # when the pool's part of the last `start` with `slow` ended
        if iso is not None:
            self.iso = iso.runners(runtime)

    def carry_state(self, carry: bool) -> None:
        """Reset a stateful model's state before every sample, or (`carry`, a stream) once, now."""
        for runner in (self.f, self.q):
            runner.carry_state = carry
            if carry:
                runner.reset_state()

    def start(self, pool: Executor | None, sample: Sample, slow: str | None = None,
              after: Callable[[], None] | None = None) -> tuple[Running, Running]:
        """Feed and invoke both models: here (no pool; timed into `seconds`), both in the pool's
        threads, or (`slow` "f" or "q") that model in the pool, then `after()` there (the
        isolated parts of the sample before), and the other model here."""
        ffeed, qfeed = feed(self.fm, sample), feed(self.qm, sample)
        if pool is None:
            t0 = time.perf_counter()
            fv = self.f.run(ffeed)
            t1 = time.perf_counter()
            qv = self.q.run(qfeed)
            self.seconds = (t1 - t0, time.perf_counter() - t1)
            return fv, qv
        if slow == "f":
            later = pool.submit(self._run_then, self.f, ffeed, after)
            return later, self.q.run(qfeed)
        if slow == "q":
            later = pool.submit(self._run_then, self.q, qfeed, after)
            return self.f.run(ffeed), later
        return pool.submit(self.f.run, ffeed), pool.submit(self.q.run, qfeed)

    def _run_then(self, runner: ModelRunner, values: Mapping[int, np.ndarray],
                  after: Callable[[], None] | None) -> dict[int, np.ndarray]:
        out = runner.run(values)
        if after is not None:
            after()
        self.worker_end = time.perf_counter()
        return out

    @staticmethod
    def values(running: tuple[Running, Running]) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
        a, b = running
        return (a if isinstance(a, dict) else a.result()), (b if isinstance(b, dict) else b.result())


def _slot_key(fm: Model, qm: Model, opts: CompareOptions) -> tuple[Any, ...] | None:
    parts = (isolated_work.PARTS if opts.threads > 1 else 1) if opts.isolated else 0  # the isolated runners a set holds
    try:
        return (*file_key(fm.path), fm.main.index, *file_key(qm.path), qm.main.index, opts.runtime, parts)
    except OSError:
        return None


def _take_slot(key: tuple[Any, ...] | None, build: Callable[[], _Slot]) -> _Slot:
    """An idle interpreter set of the last pair compared in this process, else a new one."""
    with _idle_lock:
        idle = _idle_slots.get(key) if key is not None else None
        if idle and key is not None:
            slot = idle.pop()
            if not idle:
                del _idle_slots[key]
            return slot
    return build()


def _keep_slots(key: tuple[Any, ...] | None, slots: list[_Slot], size_bytes: int) -> None:
    """Keep the interpreter sets of this pair (only: the last pair) for a repeated comparison,
    for small models (each set holds every weight packed once more)."""
    with _idle_lock:
        _idle_slots.clear()
        if key is not None and size_bytes <= KEEP_INTERPRETERS_MAX_BYTES:
            _idle_slots[key] = slots[:2]


def _slower(seconds: tuple[float, float]) -> str:
    """Which model ("f" float, "q" quantized) took longer on the timed first sample."""
    return "f" if seconds[0] >= seconds[1] else "q"


def _batch(jobs: list[tuple[Any, ...]], fm: Model, qm: Model) -> BatchStats:
    ft = [fm.main.tensors[j[1]] for j in jobs]
    qt = [qm.main.tensors[j[2]] for j in jobs]
    # Dynamic dimensions (a Keras batch of None) are fine: BatchStats checks every sample's sizes
    # against these and takes the per-layer path for a sample whose tensors were resized.
    return BatchStats(
        jobs,
        [a.dtype for a in ft],
        [b.dtype for b in qt],
        [b.num_elements for b in qt],
        [tuple(b.shape) for b in qt],
    )


def _layer_result(j: LayerJob, iso_work: IsolatedWork | None) -> LayerResult:
    st = j.stats
    iso, note = iso_work.layer(j) if iso_work is not None else (None, None)
    q = j.quant
    return LayerResult(
        op_index=j.op_index,
        op_type=j.op_type,
        tensor_name=j.tensor_name,
        float_tensor=j.float_tensor,
        quant_tensor=j.quant_tensor,
        match=j.match,
        metrics=st.result(),
        isolated=iso,
        isolated_note=note,
        float_op_index=j.float_op_index,
        dtype=j.dtype,
        shape=j.shape,
        scale=None if q is None else tuple(q.scales),
        zero_point=None if q is None else tuple(q.zero_points),
        quantized_dimension=None if q is None else q.quantized_dimension,
        float_min=st.xmin if math.isfinite(st.xmin) else None,
        float_max=st.xmax if math.isfinite(st.xmax) else None,
        channels=channel_stats(st, len(j.shape)),
        slices=slice_stats(st, j.concat, len(j.shape)),
    )


class _Keeper:
    """Keeps a seeded random subset of (float, dequantized) element pairs of one tensor."""

    def __init__(self, job: LayerJob, samples: int, seed: int) -> None:
        self.job = job
        self.per_sample = max(1, -(-KEEP_POINTS // max(samples, 1)))
        self.rng = np.random.default_rng([seed, job.quant_tensor])
        self.xs: list[np.ndarray] = []
        self.ys: list[np.ndarray] = []
        self.total = 0

    def add(self, fv: Mapping[int, np.ndarray], qv: Mapping[int, np.ndarray]) -> None:
        x = fv[self.job.float_tensor].reshape(-1)
        q = qv[self.job.quant_tensor]
        quant = self.job.quant
        self.total += x.size
        k = min(self.per_sample, x.size)
        idx = np.sort(self.rng.choice(x.size, k, replace=False)) if k < x.size else np.arange(x.size)
        if quant is not None and quant.per_channel:
            y = dequantized(q, quant).reshape(-1)[idx]
        else:
            y = dequantized(q.reshape(-1)[idx], quant)
        self.xs.append(np.asarray(x[idx], np.float32))
        self.ys.append(np.asarray(y, np.float32))

    def result(self) -> KeptValues:
        x = np.concatenate(self.xs) if self.xs else np.empty(0, np.float32)
        y = np.concatenate(self.ys) if self.ys else np.empty(0, np.float32)
        return KeptValues(x[:KEEP_POINTS], y[:KEEP_POINTS], self.total)


def _pair_check(fm: Model, qm: Model, pairing: Pairing) -> PairCheck:
    """`check_pair`, once per pair of files (and signature) in this process: it reads every
    paired weight (0.2 s on MobileNetV2), which a repeated comparison need not pay again."""
    key = ("pair_check", *file_key(fm.path), *file_key(qm.path), fm.main.index, qm.main.index)
    return cached(key, lambda: check_pair(fm, qm, pairing))  # type: ignore[return-value]  # as above

