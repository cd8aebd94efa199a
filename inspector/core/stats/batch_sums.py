"""All layers' statistics of one sample in one native call (see `stats.native`).

The kernel sums float32, int8 and uint8 pairs in float32 blocks added into float64 (one read of
each tensor, channel sums in the same pass; see `native_source`), int16 pairs in float64.

Per sample, `BatchStats.add` collects the data pointers of every (float, quantized) tensor pair,
runs the C kernel once over all of them (the GIL is released meanwhile), and adds the per-pair
sums to float64 totals; `finish` writes the totals into each pair's TensorStats, so results are
the same objects and definitions as the numpy path. Pairs the kernel does not handle (per-channel
activations, other dtypes) and samples with NaN/inf in a pair go through `stats.tensor_sums.accumulate`.
"""

from __future__ import annotations

import ctypes
import operator
import weakref

import numpy as np

from inspector.core.stats import native as native_stats
from inspector.core.stats.metrics import TensorStats
from inspector.core.stats.native import (
    ADD_AT,
    E2,
    MAX_AT,
    MIN_AT,
    NO_SUMS,
    SUM_FIELDS,
    X2,
    XMAX,
    XMIN,
    Sums,
)
from inspector.core.stats.tensor_sums import Workspace, accumulate, add_slices, add_sums
from inspector.core.tflite.model import Quantization

KNOWN_VIEW_SETS = 4  # sets of views whose addresses are kept (two interpreter sets, and spare)
Job = tuple[TensorStats, int, int, Quantization | None]  # (stats, float tensor index, quant tensor index, quantization)


def _eligible(job: Job, x_dtype: str, q_dtype: str) -> bool:
    st, _, _, quant = job
    if x_dtype != "float32" or q_dtype not in native_stats.QTYPES:
        return False
    if (quant is None) != (q_dtype == "float32"):
        return False
    if quant is not None and quant.per_channel or st.quant_axis is not None:
        return False
    return st.lo is None or (np.size(st.lo) == 1 and (st.hi is None or np.size(st.hi) == 1))  # np.size(None) is 1


class BatchStats:
    def __init__(self, jobs: list[Job], x_dtypes: list[str], q_dtypes: list[str], sizes: list[int], shapes: list[tuple[int, ...]]) -> None:
        lib = native_stats.library()
        self.native: list[int] = []
        self.other: list[Job] = []
        if lib is not None:
            for i, job in enumerate(jobs):
                (self.native.append(i) if _eligible(job, x_dtypes[i], q_dtypes[i]) else self.other.append(job))
        else:
            self.other = list(jobs)
        self.jobs = jobs
        nat = [jobs[i] for i in self.native]
        J = len(nat)
        self.n = np.array([sizes[i] for i in self.native], np.int64)
        self.qtype = np.array([native_stats.QTYPES[q_dtypes[i]] for i in self.native], np.int32)
        self.s = np.array([1.0 if j[3] is None else j[3].scales[0] for j in nat], np.float64)
        self.z = np.array([0.0 if j[3] is None else float(j[3].zero_points[0]) for j in nat], np.float64)
        self.lo = np.array([-np.inf if j[0].lo is None else float(np.asarray(j[0].lo).reshape(-1)[0]) for j in nat])
        self.hi = np.array([np.inf if j[0].hi is None else float(np.asarray(j[0].hi).reshape(-1)[0]) for j in nat])
        widths = []
        for k, j in zip(self.native, nat, strict=True):
            st, shape = j[0], shapes[k]
            ch = st.chan_axis is not None and len(shape) > 0 and st.chan_axis % len(shape) == len(shape) - 1
            widths.append(shape[-1] if ch and shape[-1] > 0 else 0)
        self.width = np.array(widths, np.int64)
        # float32 forms for the float32-block kernels: scales (float32 in the file) and zero
        # points are exact; clip bounds rounded outward so `x < lo` on float32 x is unchanged.
        self.s32, self.z32 = self.s.astype(np.float32), self.z.astype(np.float32)
        self.lo32, self.hi32 = native_stats.outward(self.lo, -1), native_stats.outward(self.hi, +1)
        self.scratch = np.zeros(7 * (int(max(widths, default=0)) + 1024), np.float32)  # 5 sums, min, max per lane
        self.choff = np.concatenate([[0], np.cumsum(self.width)[:-1]]).astype(np.int64) if J else np.zeros(0, np.int64)
        total = int(self.width.sum())
        self.chx2, self.che2 = np.zeros(max(total, 1)), np.zeros(max(total, 1))
        self.che1 = np.zeros(max(total, 1))  # one sample's sums of e per channel (channel means)
        # per channel, over samples: minimum and maximum of x, clip counts
        self.chmn, self.chmx = np.full(max(total, 1), np.inf), np.full(max(total, 1), -np.inf)
        self.chcl = np.zeros(max(total, 1))
        self.out = np.zeros((J, len(SUM_FIELDS)))  # one row of `Sums` per pair, as the kernel writes it
        self.tot = np.zeros((J, len(SUM_FIELDS)))
        self.tot[:] = NO_SUMS
        self.count = np.zeros(J, np.int64)
        self.xs = np.zeros(J, np.uint64)
        self.qs = np.zeros(J, np.uint64)
        self.ws = Workspace()
        self._fn = lib.batch if lib is not None else None
        if self._fn is not None:
            self._fn.restype = None
            self._fn.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 22
        # Per sample, Python work stays small beside the kernel: the arrays' addresses once, the
        # pairs as plain tuples, and the mean error per channel (`TensorStats.add_channel_means`,
        # same float64 operations in the same order) accumulated for all pairs in one array.
        args: list[np.ndarray] = [self.xs, self.qs, self.qtype, self.n, self.s, self.z, self.lo, self.hi, self.width,
                self.choff, self.chx2, self.che2, self.che1, self.out, self.s32, self.z32, self.lo32, self.hi32,
                self.scratch, self.chmn, self.chmx, self.chcl]
        self._ptrs = [a.ctypes.data for a in args]
        self._fts = [jobs[i][1] for i in self.native]
        self._qts = [jobs[i][2] for i in self.native]
        self._sizes = [int(v) for v in self.n]
        # (weak views x, q, their addresses), newest first
        self._known: list[tuple[list[weakref.ref[np.ndarray]], list[weakref.ref[np.ndarray]], np.ndarray, np.ndarray]] = []
        # the mean error per channel: only for the pairs whose Metrics carry it (`channel_axis`)
        means = np.array([self.width[k] > 0 and nat[k][0].channel_axis is not None for k in range(J)], bool)
        self._chan = np.flatnonzero(means)
        rows = [np.full(int(self.width[k]), float(self.n[k] // self.width[k])) for k in self._chan]
        self._rows = np.concatenate(rows) if rows else np.zeros(0)
        at = [np.arange(self.choff[k], self.choff[k] + self.width[k]) for k in self._chan]
        self._mean_at = np.concatenate(at).astype(np.int64) if at else np.zeros(0, np.int64)
        self._moff = np.concatenate([[0], np.cumsum(self.width[self._chan])[:-1]]).astype(np.int64) if len(self._chan) else self._chan
        self._m1, self._m2 = np.zeros(self._rows.size), np.zeros(self._rows.size)
        self._slices = [k for k in range(J) if nat[k][0].slices is not None]
        self._mk = np.zeros(J, np.int64)

    def add(self, xv: dict[int, np.ndarray], qv: dict[int, np.ndarray]) -> None:
        for job in self.other:
            accumulate(job[0], xv[job[1]], qv[job[2]], job[3], self.ws)
        if not self.native:
            return
        xs, qs = list(map(xv.__getitem__, self._fts)), list(map(qv.__getitem__, self._qts))
        # The runners hand out the same views while their tensors stay in place: then the data
        # addresses are those of an earlier sample (one set per interpreter set: double buffering
        # alternates two). A 1,500-op model: 1,300 pairs, 30 ms of Python each sample before;
        # checking identity is a C loop. Views are held weakly: no view may outlive a runner's
        # resize, and a view that is gone is never taken for a new one.
        for pos, (wx, wq, xa, qa) in enumerate(self._known):
            if all(map(operator.is_, xs, map(operator.call, wx))) and all(map(operator.is_, qs, map(operator.call, wq))):
                self.xs[:], self.qs[:] = xa, qa
                if pos:
                    self._known.insert(0, self._known.pop(pos))
                break
        else:
            xl, ql = [], []
            for x, q, n in zip(xs, qs, self._sizes, strict=True):
                if x.size != n or q.size != n or not (x.flags.c_contiguous and q.flags.c_contiguous):
                    # resized (dynamic shapes): this sample takes the per-pair path for every pair
                    self._known.clear()
                    for j in self.native:
                        job = self.jobs[j]
                        accumulate(job[0], xv[job[1]], qv[job[2]], job[3], self.ws)
                    return
                xl.append(x.__array_interface__["data"][0])
                ql.append(q.__array_interface__["data"][0])
            self.xs[:] = xl
            self.qs[:] = ql
            self._known.insert(0, (list(map(weakref.ref, xs)), list(map(weakref.ref, qs)), self.xs.copy(), self.qs.copy()))
            del self._known[KNOWN_VIEW_SETS:]
        assert self._fn is not None  # pairs go native only when the kernel loaded
        self._fn(len(self.native), *self._ptrs)
        o = self.out
        ok = np.isfinite(o[:, X2] + o[:, E2] + o[:, XMIN] + o[:, XMAX])
        if not ok.all():  # NaN/inf: those pairs take the numpy path for this sample
            for bad in np.flatnonzero(~ok):
                job = self.jobs[self.native[bad]]
                accumulate(job[0], xv[job[1]], qv[job[2]], job[3], self.ws, use_native=False)
            o = np.where(ok[:, None], o, [NO_SUMS])
        for k in self._slices:
            if ok[k]:
                job = self.jobs[self.native[k]]
                add_slices(job[0], xv[job[1]], qv[job[2]], job[3])
        if len(self._chan):
            m = self.che1[self._mean_at] / self._rows
            if ok.all() and np.isfinite(m).all():
                self._m1 += m
                self._m2 += m * m
                self._mk[self._chan] += 1
            else:  # per pair: the pairs that took the numpy path added their own means
                for i, c in enumerate(self._chan):
                    if not ok[c]:
                        continue
                    w, a = int(self.width[c]), int(self._moff[i])
                    mk = m[a : a + w]
                    if np.isfinite(mk).all():
                        self._m1[a : a + w] += mk
                        self._m2[a : a + w] += mk * mk
                        self._mk[c] += 1
        self.che1[:] = 0
        t = self.tot  # each field combined over samples as `Sums` says
        t[:, ADD_AT] += o[:, ADD_AT]
        t[:, MAX_AT] = np.maximum(t[:, MAX_AT], o[:, MAX_AT])
        t[:, MIN_AT] = np.minimum(t[:, MIN_AT], o[:, MIN_AT])
        self.count += np.where(ok, self.n, 0)

    def finish(self) -> None:
        """Add the accumulated totals to each pair's TensorStats."""
        for k, i in enumerate(self.native):
            st: TensorStats = self.jobs[i][0]
            if self.count[k] == 0:
                continue
            # Python floats, as the per-pair path keeps them
            add_sums(st, int(self.count[k]), Sums(*(float(v) for v in self.tot[k])))
            w = int(self.width[k])
            if w:
                a, b = int(self.choff[k]), int(self.choff[k]) + w
                cx, ce = self.chx2[a:b].copy(), self.che2[a:b].copy()
                if st.ch_sx2 is None:
                    st.ch_sx2, st.ch_se2 = cx, ce
                else:
                    st.ch_sx2, st.ch_se2 = st.ch_sx2 + cx, st.ch_se2 + ce
                st.add_channel_ranges(self.chmn[a:b], self.chmx[a:b], self.chcl[a:b] if st.lo is not None else None)
                if self._mk[k]:
                    i = int(np.flatnonzero(self._chan == k)[0])
                    a, b = int(self._moff[i]), int(self._moff[i]) + w
                    m1, m2 = self._m1[a:b].copy(), self._m2[a:b].copy()
                    if st.ch_m1 is None or st.ch_m1.shape != m1.shape:
                        st.ch_m1, st.ch_m2, st.ch_mk = m1, m2, int(self._mk[k])
                    else:
                        st.ch_m1, st.ch_m2, st.ch_mk = st.ch_m1 + m1, st.ch_m2 + m2, st.ch_mk + int(self._mk[k])
        self.tot[:] = NO_SUMS
        self.count[:] = 0
        self.chx2[:] = 0
        self.che2[:] = 0
        self.chmn[:], self.chmx[:], self.chcl[:] = np.inf, -np.inf, 0
        self._m1[:] = 0
        self._m2[:] = 0
        self._mk[:] = 0
